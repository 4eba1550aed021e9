#!/usr/bin/env python3
"""Reference outputs for the engine's target models (Qwen3, Qwen3.5 hybrid, Qwen3-Next layout).

Builds tiny random checkpoints with Hugging Face transformers, saves them with save_pretrained,
runs them on fixed token ids and writes, per model, OUT/<name>/reference.safetensors holding:
  input_ids [T] (I64), logits [T, V] and hidden_states.<i> [T, H] (fp32 run, i = 0..L,
  transformers' output_hidden_states convention), stats.<layer> [T, 4], logits_bf16 [T, V]
  (the same model cast to bf16, stored as fp32), and for the hybrid models the cached-decode
  check (prefix_len, step_logits: HF's own prefill + one-token steps). OUT/<name>_trained/
  holds the same model after a short training run, with logits and logits_bf16 only.

Usage: gen_target_models.py OUT_DIR
"""

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file
from transformers import (Qwen3Config, Qwen3ForCausalLM, Qwen3_5Config, Qwen3_5ForCausalLM,
                          Qwen3_5ForConditionalGeneration, Qwen3_5TextConfig, Qwen3NextConfig,
                          Qwen3NextForCausalLM)
from transformers.models.qwen3_5 import modeling_qwen3_5
from transformers.models.qwen3_next import modeling_qwen3_next

SEED = 1234
VOCAB = 1000
SEQ_LEN = 512          # positions compared (bf16 argmax over 512 positions; >64 crosses GDN chunks)
TRAIN_STEPS = 200
PREFIX_LEN = 300       # cached-decode check: prefill this many, then one-token steps
STEPS = 6


def assert_torch_fallbacks():
    """The oracle must be the torch reference code, not a fused kernel from the hub or fla."""
    for module in (modeling_qwen3_5, modeling_qwen3_next):
        for name in ("torch_chunk_gated_delta_rule", "torch_recurrent_gated_delta_rule"):
            fn = getattr(module, name)
            assert fn.__module__ == module.__name__, f"{module.__name__}.{name} is {fn.__module__}"
    try:
        import fla  # noqa: F401
        raise SystemExit("flash-linear-attention is installed: the oracle would not use the torch path")
    except ImportError:
        pass


def perturb_norms(model):
    """HF initialises norm weights to constants (ones, or zeros for the 1+w norms); random
    values make the tests see which variant is applied and where."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or name.endswith("layernorm.weight"):
                p.add_(torch.randn_like(p) * 0.2)
            elif name.endswith("dt_bias"):
                p.copy_(torch.randn_like(p) * 0.5)


def successor_table():
    g = torch.Generator().manual_seed(SEED + 2)
    return torch.randperm(VOCAB, generator=g)


def chain(successor, start, length):
    ids = [int(start)]
    for _ in range(length - 1):
        ids.append(int(successor[ids[-1]]))
    return torch.tensor(ids, dtype=torch.int64)


def train_briefly(model, successor, steps=TRAIN_STEPS):
    """A few optimiser steps on 'next token = successor[token]' give the random model the
    confident predictions a trained model has. Without them nearly every position is a near
    tie, and bf16 argmax flips between any two implementations (transformers' own eager and
    sdpa paths agree on only ~97% of positions of an untrained model)."""
    g = torch.Generator().manual_seed(SEED + 3)
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(steps):
        starts = torch.randint(0, VOCAB, (8,), generator=g)
        batch = torch.stack([chain(successor, s, 33) for s in starts])
        loss = model(input_ids=batch[:, :-1], labels=batch[:, :-1]).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.eval()
    return loss.item()


def statistics(h):
    """Per position: mean, population std, rms, abs-max over the hidden dimension (fp64)."""
    x = h.double()
    stats = [x.mean(-1), x.std(-1, correction=0), x.pow(2).mean(-1).sqrt(), x.abs().amax(-1)]
    return torch.stack(stats, -1).float().contiguous()


def reload(model_dir: Path, cls, dtype, **load_kwargs):
    """The saved checkpoint loaded back the way users load it. Running the in-memory model
    instead would be subtly wrong: model.to(bfloat16) also rounds the non-persistent rotary
    inv_freq buffer, which from_pretrained(dtype=bfloat16) keeps in fp32."""
    return cls.from_pretrained(model_dir, dtype=dtype, **load_kwargs).eval()


def run(model, ids):
    with torch.no_grad():
        return model(input_ids=ids[None], output_hidden_states=True, use_cache=False)


def cached_steps(model, ids):
    """HF's own prefill + one-token decode: logits of the steps, fp32."""
    with torch.no_grad():
        out = model(input_ids=ids[None, :PREFIX_LEN], use_cache=True)
        cache = out.past_key_values
        logits = []
        for t in range(PREFIX_LEN, PREFIX_LEN + STEPS):
            out = model(input_ids=ids[None, t:t + 1], past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            logits.append(out.logits[0, -1])
    return torch.stack(logits)


def write_reference(model_dir: Path, model, ids, parity: bool, hybrid: bool, after_save=None, load_kwargs=None):
    """Saves the model and its reference outputs. `parity`: everything the fp32 and cache tests
    compare (hidden states, statistics, transformers' cached decode); otherwise only what the
    bf16 argmax test needs. `hybrid`: also transformers' own cached decode. `after_save(dir)`
    rewrites the saved checkpoint (a quantised layout) before it is loaded back with
    `load_kwargs`."""
    model_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(model_dir, safe_serialization=True)
    if after_save:
        after_save(model_dir)
    load_kwargs = load_kwargs or {}
    ref = {"input_ids": ids}
    fp32_model = reload(model_dir, type(model), torch.float32, **load_kwargs)
    fp32 = run(fp32_model, ids)
    ref["logits"] = fp32.logits[0].float().contiguous()
    if parity:
        for i, h in enumerate(fp32.hidden_states):
            ref[f"hidden_states.{i}"] = h[0].float().contiguous()
        for layer in range(len(fp32.hidden_states) - 2):  # raw outputs of layers 0 .. L-2
            ref[f"stats.{layer}"] = statistics(fp32.hidden_states[layer + 1][0])
        if hybrid:
            ref["prefix_len"] = torch.tensor([PREFIX_LEN], dtype=torch.int64)
            ref["step_logits"] = cached_steps(fp32_model, ids).float().contiguous()
    bf16 = run(reload(model_dir, type(model), torch.bfloat16, **load_kwargs), ids)
    ref["logits_bf16"] = bf16.logits[0].float().contiguous()
    save_file(ref, str(model_dir / "reference.safetensors"))
    agree = (ref["logits_bf16"].argmax(-1) == ref["logits"].argmax(-1)).float().mean()
    print(f"{model_dir.name}: transformers bf16/fp32 argmax agreement {agree:.4f}")


def write_model(out_dir: Path, name: str, model, hybrid: bool, **save_options):
    """<name>/: the random model (fp32 parity and caches: activations of order 1, so the 1e-4
    absolute tolerance means something); <name>_trained/: the same after a little training
    (bf16 argmax agreement needs confident predictions). `save_options` go to write_reference."""
    successor = successor_table()
    # The walk the trained model learns, with a few random tokens mixed in so that not every
    # position is easy.
    torch.manual_seed(SEED + 1)
    ids = chain(successor, 0, SEQ_LEN)
    noisy = torch.rand(SEQ_LEN) < 0.1
    ids[noisy] = torch.randint(0, VOCAB, (int(noisy.sum()),))
    write_reference(out_dir / name, model, ids, parity=True, hybrid=hybrid, **save_options)
    loss = train_briefly(model, successor)
    print(f"{name}: trained to loss {loss:.3f}")
    write_reference(out_dir / f"{name}_trained", model, ids, parity=False, hybrid=hybrid, **save_options)


def qwen3(tied: bool, kv_heads: int, rope_parameters: dict, max_positions: int = 4096):
    config = Qwen3Config(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                         num_attention_heads=4, num_key_value_heads=kv_heads, head_dim=32,
                         max_position_embeddings=max_positions, rope_parameters=rope_parameters,
                         tie_word_embeddings=tied, initializer_range=0.1, rms_norm_eps=1e-6)
    return Qwen3ForCausalLM(config)


def qwen35_text(tied: bool, **kw):
    args = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                linear_conv_kernel_dim=4, linear_key_head_dim=32, linear_value_head_dim=16,
                linear_num_key_heads=2, linear_num_value_heads=4, max_position_embeddings=4096,
                rope_parameters={"rope_type": "default", "rope_theta": 10000000.0,
                                 "partial_rotary_factor": 0.25, "mrope_section": [1, 1, 2],
                                 "mrope_interleaved": True},
                tie_word_embeddings=tied, initializer_range=0.1, rms_norm_eps=1e-6)
    args.update(kw)
    return Qwen3_5TextConfig(**args)


def qwen35_vl_layout():
    """The official Qwen3.5 layout: Qwen3_5ForConditionalGeneration, text weights under
    model.language_model., a (tiny) vision tower, config nested under text_config."""
    text = qwen35_text(tied=True, num_attention_heads=2, num_key_value_heads=2,
                       linear_num_key_heads=2, linear_num_value_heads=2,
                       layer_types=["full_attention", "linear_attention", "linear_attention",
                                    "full_attention"])
    vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                  patch_size=4, num_position_embeddings=16)
    config = Qwen3_5Config(text_config=text.to_dict(), vision_config=vision, tie_word_embeddings=True)
    return Qwen3_5ForConditionalGeneration(config)


def qwen3_next_dense():
    """Qwen3-Next's fused in_proj_qkvz / in_proj_ba with dense MLPs (num_experts = 0)."""
    config = Qwen3NextConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                             num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                             linear_conv_kernel_dim=4, linear_key_head_dim=32, linear_value_head_dim=8,
                             linear_num_key_heads=2, linear_num_value_heads=6, num_experts=0,
                             max_position_embeddings=4096,
                             rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                              "partial_rotary_factor": 0.5},
                             tie_word_embeddings=False, initializer_range=0.1, rms_norm_eps=1e-6)
    return Qwen3NextForCausalLM(config)


def main():
    out_dir = Path(sys.argv[1])
    torch.set_num_threads(1)
    assert_torch_fallbacks()
    yarn = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
            "original_max_position_embeddings": 128}
    builders = [
        ("qwen3_tied_gqa", lambda: qwen3(True, 2, {"rope_type": "default", "rope_theta": 1000000.0}), False),
        ("qwen3_untied_mha_yarn", lambda: qwen3(False, 4, yarn, max_positions=512), False),
        ("qwen35_untied", lambda: Qwen3_5ForCausalLM(qwen35_text(tied=False)), True),
        ("qwen35_vl_layout", qwen35_vl_layout, True),
        ("qwen3_next_dense", qwen3_next_dense, True),
    ]
    manifest = {}
    for i, (name, build, hybrid) in enumerate(builders):
        torch.manual_seed(SEED + 10 * i)
        model = build()
        perturb_norms(model)
        write_model(out_dir, name, model.eval(), hybrid)
        manifest[name] = {"hybrid": hybrid}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1))


if __name__ == "__main__":
    main()
