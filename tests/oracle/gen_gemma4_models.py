#!/usr/bin/env python3
"""Reference outputs for the engine's Gemma 4 targets (transformers models/gemma4, text model).

Same layout and checks as gen_target_models.py (whose helpers this reuses): per model,
OUT/<name>/ holds a tiny random checkpoint saved by transformers and reference.safetensors
(input_ids, fp32 logits and hidden states, per-layer statistics, transformers' own cached
decode, bf16 logits), OUT/<name>_trained/ the same model after a short training run, and
parameters.json (transformers' total and active parameter counts, and the elements of the
buffers it saves beside them).

Every model alternates sliding (window 32, so 512 positions cross it many times) and full
attention layers, each type with its own RoPE (default on sliding layers, proportional with
partial_rotary_factor 0.25 on full ones) and its own head width (global_head_dim).

  gemma4_ple_shared   per-layer input embeddings (hidden_size_per_layer_input), the last two
                      layers reading an earlier layer's keys and values (num_kv_shared_layers)
                      with double-wide MLPs, untied embeddings
  gemma4_k_eq_v       attention_k_eq_v (full layers: values are the key projection, fewer
                      key/value heads), final logit soft-capping, tied embeddings
  gemma4_moe          the 26B-A4B block: routed experts beside the dense MLP (enable_moe_block),
                      k_eq_v and soft-capping; its reference also holds every router's choice
                      (router.<layer>.experts / .weights, sparse_layers)
  gemma4_vl_layout    Gemma4ForConditionalGeneration (model_type gemma4, text_config nested,
                      weights under model.language_model.) with per-layer inputs

Every norm weight and each layer's layer_scalar is perturbed, so that the tests see where
each is applied.

OUT/live_gemma4/: a tiny Gemma 4 target saved by transformers (per-layer inputs, a KV-shared
layer, k_eq_v; untied: with the unit-scale embeddings of write_live a tied head predicts the
current token again, and the drafter its mask token), a random DFlash drafter for it and the
cache-free reference loop of gen_drafter.py (the layout test_dflash_live.cpp reads).

OUT/published/<name>/: the published config.json of Gemma 4 31B and 26B-A4B (written out from
the model cards' values, checked here against transformers' config class), a safetensors
checkpoint whose header lists every tensor transformers' text model has (bf16, under
model.language_model.) and whose data is a sparse hole, parameters.json (transformers' counts
from the meta-device model) and expected.json (what transformers derives per layer).

Usage: gen_gemma4_models.py OUT_DIR
"""

import json
import math
import struct
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import (Gemma4Config, Gemma4ForCausalLM, Gemma4ForConditionalGeneration,
                          Gemma4TextConfig)

from gen_drafter import LIVE_DRAFTER, LIVE_VOCAB
from gen_llama_gptoss_models import write_live
from gen_target_models import SEED, VOCAB, perturb_norms, reload, write_model

WINDOW = 32
TYPES = ["sliding_attention", "sliding_attention", "full_attention"] * 2


def text_config(**kw):
    args = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=6, num_attention_heads=4,
                num_key_value_heads=2, head_dim=16, global_head_dim=32, sliding_window=WINDOW, layer_types=TYPES,
                max_position_embeddings=4096, hidden_size_per_layer_input=0, initializer_range=0.1,
                rms_norm_eps=1e-6, tie_word_embeddings=True)
    args.update(kw)
    return Gemma4TextConfig(**args)


def gemma4_ple_shared():
    return Gemma4ForCausalLM(text_config(hidden_size_per_layer_input=8, vocab_size_per_layer_input=VOCAB,
                                         num_kv_shared_layers=2, use_double_wide_mlp=True,
                                         tie_word_embeddings=False))


def gemma4_k_eq_v():
    return Gemma4ForCausalLM(text_config(attention_k_eq_v=True, num_global_key_value_heads=1,
                                         final_logit_softcapping=30.0))


def gemma4_moe():
    return Gemma4ForCausalLM(text_config(attention_k_eq_v=True, num_global_key_value_heads=1,
                                         final_logit_softcapping=30.0, enable_moe_block=True, num_experts=8,
                                         top_k_experts=2, moe_intermediate_size=32))


def gemma4_vl_layout():
    text = text_config(hidden_size_per_layer_input=8, vocab_size_per_layer_input=VOCAB, num_kv_shared_layers=3)
    return Gemma4ForConditionalGeneration(Gemma4Config(text_config=text.to_dict(), vision_config=None,
                                                       audio_config=None, tie_word_embeddings=True))


def perturb_gemma(model):
    """Norms (gen_target_models' rule), the router's scales, each layer's layer_scalar (a buffer
    transformers saves, initialised to one) and the padding rows of the embeddings.

    The router's projection is scaled up: at the initial scale its eight probabilities are all
    near 1/8, and the top-k boundary of some position among thousands is a near tie. Gemma 4
    scores attention with q.k unscaled, the scale living in the learned q_norm weights: at their
    initial ones the random model's softmax is nearly one-hot, and fp32 rounding differences
    between any two attention kernels (transformers' own eager against sdpa: 1.1e-4 in the
    logits) exceed the tolerance, so the q_norm weights start near head_dim^-0.5."""
    perturb_norms(model)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("router.scale", "per_expert_scale")):
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            elif name.endswith("router.proj.weight"):
                p.mul_(8.0)
            elif name.endswith("self_attn.q_norm.weight"):
                p.mul_(p.numel() ** -0.5)  # the layer's own head width
        # nn.Embedding zeroes the padding row (pad_token_id 0, the test sequences' first token):
        # an all-zero residual stream would tie every expert at every layer.
        for module in model.modules():
            if isinstance(module, torch.nn.Embedding) and module.padding_idx is not None:
                module.weight[module.padding_idx].normal_(0.0, 0.1)
        for name, b in model.named_buffers():
            if name.endswith("layer_scalar"):
                b.copy_(0.8 + 0.4 * torch.rand_like(b))


def text_model(model):
    return model.model.language_model if isinstance(model, Gemma4ForConditionalGeneration) else model.model


def write_gemma_parameter_counts(model_dir: Path, model):
    """parameters.json: transformers' num_parameters() and the count per token, where the routed
    experts (each layer's `experts` module, beside its dense MLP) count top_k / num_experts."""
    total = model.num_parameters()
    text = model.config.get_text_config()
    routed = sum(p.numel() for layer in text_model(model).layers if hasattr(layer, "experts")
                 for p in layer.experts.parameters())
    share = text.top_k_experts / text.num_experts if routed else 1.0
    active = total - routed + math.floor(routed * share + 0.5)
    # Saved buffers (each layer's layer_scalar) are stored tensors too, counted by the engine.
    saved = model.state_dict()
    buffers = sum(b.numel() for n, b in model.named_buffers() if n in saved)
    (model_dir / "parameters.json").write_text(json.dumps({"total": total, "active": active,
                                                           "stored_buffers": buffers}))
    return total, active


ROUTER_MIN_GAP = 2e-5  # 10x the fp32 differences an exact implementation may have


class NearTie(Exception):
    pass


def add_gemma_routing(model_dir: Path, model):
    """router.<layer>.experts [T, k] and .weights [T, k] as each Gemma4TextRouter returned them
    (forward hooks on the checkpoint as transformers loads it), and sparse_layers."""
    path = model_dir / "reference.safetensors"
    ref = load_file(path)
    found, gaps, handles = {}, [], []
    k = model.config.get_text_config().top_k_experts
    for i, layer in enumerate(text_model(model).layers):
        def hook(module, args, output, i=i):
            probabilities, weights, experts = output
            found[f"router.{i}.experts"] = experts.to(torch.int64).contiguous()
            found[f"router.{i}.weights"] = weights.float().contiguous()
            ranked = probabilities.float().sort(-1, descending=True).values
            gaps.append((ranked[:, k - 1] - ranked[:, k]).min().item())
        handles.append(layer.router.register_forward_hook(hook))
    with torch.no_grad():
        model(input_ids=ref["input_ids"][None], use_cache=False)
    for h in handles:
        h.remove()
    if min(gaps) <= ROUTER_MIN_GAP:
        raise NearTie(f"{model_dir.name}: a near tie between routed experts ({min(gaps):.2e})")
    ref.update(found)
    ref["sparse_layers"] = torch.tensor(sorted(int(n.split(".")[1]) for n in found if n.endswith("experts")))
    save_file(ref, str(path))
    print(f"{model_dir.name}: routing of {len(gaps)} layers, smallest top-k probability gap {min(gaps):.2e}")


# --- published configs ----------------------------------------------------------------------

def published_text(**kw):
    """The text_config fields of Google's Gemma 4 config.json files (values from the model
    cards: 31B has 60 layers of width 5376, 32 heads, 16 key/value heads of 256 on sliding and 4
    of 512 on full layers with k = v, a 1024-token window; 26B-A4B 30 layers of 2816, 16 heads,
    8 and 2 key/value heads, 128 experts of 704, top 8, beside a 2112-wide dense MLP)."""
    text = {"model_type": "gemma4_text", "attention_bias": False, "attention_dropout": 0.0, "attention_k_eq_v": True,
            "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0, "dtype": "bfloat16",
            "final_logit_softcapping": 30.0, "head_dim": 256, "global_head_dim": 512,
            "hidden_activation": "gelu_pytorch_tanh", "hidden_size_per_layer_input": 0,
            "max_position_embeddings": 262144, "num_kv_shared_layers": 0, "rms_norm_eps": 1e-6,
            "rope_parameters": {"full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0,
                                                   "rope_type": "proportional"},
                                "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}},
            "sliding_window": 1024, "tie_word_embeddings": True, "use_bidirectional_attention": "vision",
            "use_cache": True, "use_double_wide_mlp": False, "vocab_size": 262144,
            "vocab_size_per_layer_input": 262144, "enable_moe_block": False}
    text.update(kw)
    layers = text["num_hidden_layers"]
    text["layer_types"] = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(layers)]
    return text


PUBLISHED = {
    # (text_config, published total and active parameters of the language model)
    "gemma_4_31b": (published_text(hidden_size=5376, intermediate_size=21504, num_hidden_layers=60,
                                   num_attention_heads=32, num_key_value_heads=16, num_global_key_value_heads=4),
                    30.7e9, 30.7e9),
    "gemma_4_26b_a4b": (published_text(hidden_size=2816, intermediate_size=2112, num_hidden_layers=30,
                                       num_attention_heads=16, num_key_value_heads=8, num_global_key_value_heads=2,
                                       enable_moe_block=True, num_experts=128, top_k_experts=8,
                                       moe_intermediate_size=704),
                        25.2e9, 3.8e9),
}

ST_DTYPE = {torch.bfloat16: "BF16", torch.float32: "F32"}


def write_sparse_checkpoint(path: Path, tensors):
    """A safetensors file with `tensors` ({name: (shape, dtype)}) in its header and a hole for
    the data: the parameter count and memory plan read only headers."""
    header, offset = {}, 0
    for name, (shape, dtype) in sorted(tensors.items()):
        size = math.prod(shape) * torch.tensor([], dtype=dtype).element_size()
        header[name] = {"dtype": ST_DTYPE[dtype], "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    header["__metadata__"] = {"format": "pt"}
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        f.truncate(8 + len(blob) + offset)


def write_published(out_dir: Path):
    for name, (text, total_published, active_published) in PUBLISHED.items():
        model_dir = out_dir / "published" / name
        model_dir.mkdir(parents=True, exist_ok=True)
        config = {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "text_config": text,
                  "vision_config": None, "audio_config": None, "tie_word_embeddings": True, "dtype": "bfloat16",
                  "boi_token_id": 255999, "eoi_token_id": 258882, "image_token_id": 258880}
        (model_dir / "config.json").write_text(json.dumps(config, indent=2))
        loaded = Gemma4Config.from_pretrained(model_dir).text_config  # the class reads the file back
        with torch.device("meta"):
            model = Gemma4ForCausalLM(loaded).to(torch.bfloat16)
        tensors = {"model.language_model." + n.removeprefix("model."): (tuple(p.shape), p.dtype)
                   for n, p in model.state_dict().items() if n != "lm_head.weight"}
        write_sparse_checkpoint(model_dir / "model.safetensors", tensors)
        total, active = write_gemma_parameter_counts(model_dir, model)
        assert abs(total / total_published - 1) < 0.01, f"{name}: {total} parameters, published {total_published}"
        assert abs(active / active_published - 1) < 0.01, f"{name}: {active} active, published {active_published}"
        layers = loaded.num_hidden_layers
        expected = {
            "published_total": total_published, "published_active": active_published,
            "layer_types": loaded.layer_types,
            "head_dim": [loaded.per_layer_config[i].head_dim for i in range(layers)],
            "num_key_value_heads": [loaded.per_layer_config[i].num_key_value_heads for i in range(layers)],
            "kv_sharing_modes": loaded.kv_sharing_modes,
        }
        with torch.device("cpu"):  # the rotary buffers of a meta model hold no values
            rotary = type(model.model.rotary_emb)(loaded)
        expected["inv_freq"] = {t: [float(x) for x in getattr(rotary, f"{t}_inv_freq").double()]
                                for t in sorted(set(loaded.layer_types))}
        (model_dir / "expected.json").write_text(json.dumps(expected))
        print(f"{name}: {total / 1e9:.3f}B parameters ({active / 1e9:.3f}B active), published "
              f"{total_published / 1e9}B / {active_published / 1e9}B")


def main():
    out_dir = Path(sys.argv[1])
    torch.set_num_threads(1)
    builders = [("gemma4_ple_shared", gemma4_ple_shared), ("gemma4_k_eq_v", gemma4_k_eq_v),
                ("gemma4_moe", gemma4_moe), ("gemma4_vl_layout", gemma4_vl_layout)]
    for i, (name, build) in enumerate(builders):
        # A seed whose routers have no near tie at the top-k boundary (dense models take the first).
        for attempt in range(8):
            torch.manual_seed(SEED + 400 + 10 * i + 1000 * attempt)
            model = build()
            perturb_gemma(model)
            write_model(out_dir, name, model.eval(), hybrid=True)
            write_gemma_parameter_counts(out_dir / name, model)
            if not model.config.get_text_config().enable_moe_block:
                break
            try:
                add_gemma_routing(out_dir / name, reload(out_dir / name, type(model), torch.float32))
                break
            except NearTie as tie:
                print(f"{tie}; next seed")
        else:
            raise SystemExit(f"{name}: every seed tried has a near tie between routed experts")

    assert LIVE_DRAFTER["hidden"] == 32 and LIVE_DRAFTER["target_layers"] == 4
    torch.manual_seed(SEED + 500)
    write_live(out_dir, "live_gemma4", Gemma4ForCausalLM(Gemma4TextConfig(
        vocab_size=LIVE_VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, global_head_dim=16, sliding_window=8, max_position_embeddings=128,
        layer_types=["sliding_attention", "full_attention"] * 2, hidden_size_per_layer_input=4,
        vocab_size_per_layer_input=LIVE_VOCAB, num_kv_shared_layers=1, attention_k_eq_v=True,
        num_global_key_value_heads=1, final_logit_softcapping=30.0, tie_word_embeddings=False)))
    write_published(out_dir)


if __name__ == "__main__":
    main()
