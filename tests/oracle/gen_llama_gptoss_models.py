#!/usr/bin/env python3
"""Reference outputs for the engine's Llama 3.x and gpt-oss targets.

Same layout and checks as gen_target_models.py (whose helpers this reuses): per model,
OUT/<name>/ holds a tiny random checkpoint saved by transformers and reference.safetensors
(input_ids, fp32 logits and hidden states, per-layer statistics, transformers' own cached
decode, bf16 logits), and OUT/<name>_trained/ the same model after a short training run.

  llama3_gqa         Llama with llama3 RoPE scaling (every band of the rule used), GQA, and no
                     head_dim in config.json (transformers derives hidden / heads)
  llama_bias_tied    Llama with attention_bias and mlp_bias, tied embeddings, MHA
  gpt_oss_mxfp4      gpt-oss with its experts stored as MXFP4 blocks + scales, loaded back by
                     transformers' own dequantisation (Mxfp4Config(dequantize=True): transformers
                     cannot run MXFP4 on a CPU without the `kernels` package)
  gpt_oss_plain      gpt-oss with unquantised experts (gate_up_proj / down_proj + biases)
  qwen3_sliding      Qwen3 with use_sliding_window: the same target-side sliding layers through
                     the attention path without sinks

The gpt-oss references also hold the routing of every layer (router.<layer>.experts and
router.<layer>.weights, sparse_layers), and every model dir parameters.json (transformers'
total and active parameter counts), both from transformers_reference.py.

Both gpt-oss models alternate sliding (window 32, so 512 positions cross it many times) and
full attention layers, use gpt-oss's default YaRN RoPE, and have sinks, router and expert
biases perturbed to nonzero values.

OUT/gpt_oss_mxfp4/mxfp4.safetensors: the unit reference of the dequantisation (transformers'
convert_moe_packed_tensors): every byte value under scales 0..255 (blocks, scales, values.f32,
values.bf16) and layer 0's dequantised experts (gate_up_proj, down_proj, fp32). Its
mlp.safetensors: layer 0's GptOssMLP on a random input (x, router_indices, router_scores, out).

OUT/live_llama/, OUT/live_gpt_oss/: a tiny target of each family saved by transformers, a
random DFlash drafter for it and the cache-free reference loop of gen_drafter.py (the layout
test_dflash_live.cpp reads), plus greedy.<i>: transformers' greedy continuation of prompt i.

Usage: gen_llama_gptoss_models.py OUT_DIR
"""

import json
import sys
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from transformers import (GptOssConfig, GptOssForCausalLM, LlamaConfig, LlamaForCausalLM, Mxfp4Config, Qwen3Config,
                          Qwen3ForCausalLM)
from transformers.integrations.mxfp4 import FP4_VALUES, convert_moe_packed_tensors

from gen_drafter import LIVE_DRAFTER, LIVE_PROMPTS, LIVE_VOCAB, random_drafter, reference_loop, save_drafter
from gen_target_models import SEED, VOCAB, perturb_norms, reload, write_model
from transformers_reference import add_reference_routing, greedy, write_parameter_counts

WINDOW = 32
EXPERTS = ("gate_up_proj", "down_proj")


# --- MXFP4 ------------------------------------------------------------------------------

def quantize_mxfp4(w):
    """w [E, in, out] (transformers' expert layout) -> blocks [E, out, in/32, 16] uint8 and
    scales [E, out, in/32] uint8: per 32 inputs one power-of-two scale so that the largest
    magnitude fits FP4's 6, each value rounded to the nearest FP4 code, two codes per byte
    (low nibble first). The inverse of transformers' convert_moe_packed_tensors."""
    e, n_in, n_out = w.shape
    x = w.transpose(1, 2).reshape(e, n_out, n_in // 32, 32).float()
    amax = x.abs().amax(-1).clamp_min(2.0 ** -100)
    exponent = torch.ceil(torch.log2(amax / 6.0)).clamp(-127, 127)
    scaled = x / torch.exp2(exponent)[..., None]
    lut = torch.tensor(FP4_VALUES)
    codes = (scaled[..., None] - lut).abs().argmin(-1).to(torch.uint8)  # ties: the first (+ codes)
    blocks = codes[..., 0::2] | (codes[..., 1::2] << 4)
    scales = (exponent + 127).to(torch.uint8)
    return blocks.contiguous(), scales.contiguous()


def mxfp4_round_trip(model):
    """Replaces the experts' weights by their MXFP4 values, so the in-memory model is the one
    the quantised checkpoint describes."""
    with torch.no_grad():
        for layer in model.model.layers:
            for proj in EXPERTS:
                p = getattr(layer.mlp.experts, proj)
                blocks, scales = quantize_mxfp4(p.data)
                p.copy_(convert_moe_packed_tensors(blocks, scales, dtype=torch.float32))


def write_mxfp4_checkpoint(model_dir: Path):
    """Rewrites a saved gpt-oss checkpoint in the published layout: experts as
    <proj>_blocks / <proj>_scales, quantization_config mxfp4 in config.json."""
    path = model_dir / "model.safetensors"
    with safe_open(str(path), "pt") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}
    for name in [k for k in tensors if k.endswith(EXPERTS)]:
        blocks, scales = quantize_mxfp4(tensors.pop(name))
        tensors[name + "_blocks"], tensors[name + "_scales"] = blocks, scales
    save_file(tensors, str(path), metadata={"format": "pt"})
    config = json.loads((model_dir / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "mxfp4",
                                     "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                                "model.embed_tokens", "lm_head"]}
    (model_dir / "config.json").write_text(json.dumps(config, indent=2))


MXFP4_LOAD = {"quantization_config": Mxfp4Config(dequantize=True)}


def write_mxfp4_unit_reference(model_dir: Path):
    """Every byte under every scale, through transformers' own dequantisation, and layer 0's
    experts of the saved checkpoint."""
    blocks = torch.arange(256, dtype=torch.int64).to(torch.uint8).view(1, 16, 16).expand(256, 16, 16)
    blocks = blocks.reshape(1, 256, 16, 16).contiguous()  # [1, rows, G = 16, 16]
    scales = torch.arange(256, dtype=torch.int64).to(torch.uint8).view(256, 1).expand(256, 16)
    scales = scales.reshape(1, 256, 16).contiguous()
    ref = {"blocks": blocks, "scales": scales,
           "values.f32": convert_moe_packed_tensors(blocks, scales, dtype=torch.float32),
           "values.bf16": convert_moe_packed_tensors(blocks, scales, dtype=torch.bfloat16).float()}
    with safe_open(str(model_dir / "model.safetensors"), "pt") as f:
        for proj in EXPERTS:
            name = f"model.layers.0.mlp.experts.{proj}"
            ref[proj] = convert_moe_packed_tensors(f.get_tensor(name + "_blocks"), f.get_tensor(name + "_scales"),
                                                   dtype=torch.float32).contiguous()
    save_file(ref, str(model_dir / "mxfp4.safetensors"))


def write_mlp_reference(model_dir: Path, model):
    """Layer 0's GptOssMLP on a random input: the router's choice and the output."""
    mlp = model.model.layers[0].mlp
    x = torch.randn(1, 40, model.config.hidden_size, generator=torch.Generator().manual_seed(SEED + 5))
    with torch.no_grad():
        _, scores, indices = mlp.router(x.reshape(-1, x.shape[-1]))
        out, _ = mlp(x)
    save_file({"x": x, "router_indices": indices.to(torch.int64).contiguous(), "router_scores": scores.contiguous(),
               "out": out.contiguous()}, str(model_dir / "mlp.safetensors"))


# --- models -----------------------------------------------------------------------------

def perturb_biases_and_sinks(model):
    """transformers initialises biases to zero; random values make the tests see them."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(("bias", "sinks")):
                p.copy_(torch.randn_like(p) * (1.0 if name.endswith("sinks") else 0.1))


def llama3_gqa():
    rope = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
    return LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                                        rope_parameters=rope, tie_word_embeddings=False, initializer_range=0.1,
                                        rms_norm_eps=1e-5))


def llama_bias_tied():
    return LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=3,
                                        num_attention_heads=4, num_key_value_heads=4, head_dim=16,
                                        attention_bias=True, mlp_bias=True, tie_word_embeddings=True,
                                        initializer_range=0.1, rms_norm_eps=1e-6))


def gpt_oss(vocab=VOCAB, hidden=64, layers=3, window=WINDOW):
    return GptOssForCausalLM(GptOssConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=64,
                                          num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                                          head_dim=16, num_local_experts=4, num_experts_per_tok=2,
                                          sliding_window=window, initializer_range=0.1, rms_norm_eps=1e-5))


def qwen3_sliding():
    return Qwen3ForCausalLM(Qwen3Config(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                                        num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                                        use_sliding_window=True, sliding_window=WINDOW, max_window_layers=1,
                                        initializer_range=0.1, rms_norm_eps=1e-6))


def drop_head_dim(model_dir: Path):
    """Llama 3.1's published config.json has no head_dim."""
    config = json.loads((model_dir / "config.json").read_text())
    del config["head_dim"]
    (model_dir / "config.json").write_text(json.dumps(config, indent=2))


# --- live loop --------------------------------------------------------------------------

def write_live(out_dir: Path, name: str, target, mxfp4=False):
    with torch.no_grad():  # unit-scale weights: clear argmax margins, unlike the small init
        for pname, p in target.named_parameters():
            if pname.endswith("sinks"):
                p.copy_(torch.randn_like(p))
            elif pname.endswith("norm.weight"):
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            elif p.dim() >= 2:
                p.copy_(torch.randn_like(p) / (1.0 if "embed" in pname else p.shape[-2 if "experts" in pname else -1] ** 0.5))
            else:
                p.copy_(0.1 * torch.randn_like(p))
    if mxfp4:
        mxfp4_round_trip(target)
    live = out_dir / name
    target.save_pretrained(live / "target", safe_serialization=True)
    if mxfp4:
        write_mxfp4_checkpoint(live / "target")
    w = random_drafter(LIVE_DRAFTER, torch.Generator().manual_seed(SEED + 1))
    save_drafter(LIVE_DRAFTER, w, live / "drafter")
    reference, accepted = {}, []
    target.eval()
    with torch.no_grad():
        for i, prompt in enumerate(LIVE_PROMPTS):
            tokens, steps = reference_loop(target, w, LIVE_DRAFTER, prompt)
            expected = greedy(target, prompt, len(tokens) - len(prompt))
            assert tokens == expected, f"{name}: the reference loop is not lossless for prompt {i}"
            reference.update({f"prompt.{i}": torch.tensor(prompt), f"tokens.{i}": torch.tensor(tokens),
                              f"steps.{i}": torch.tensor(steps), f"greedy.{i}": torch.tensor(expected)})
            accepted += [s[1] for s in steps]
    save_file(reference, str(live / "reference.safetensors"))
    print(f"{name}: {len(accepted)} steps, tau {1 + sum(accepted) / len(accepted):.3f}")


def main():
    out_dir = Path(sys.argv[1])
    torch.set_num_threads(1)
    builders = [
        ("llama3_gqa", llama3_gqa, {"after_save": drop_head_dim}),
        ("llama_bias_tied", llama_bias_tied, {}),
        ("gpt_oss_mxfp4", gpt_oss, {"after_save": write_mxfp4_checkpoint, "load_kwargs": MXFP4_LOAD}),
        ("gpt_oss_plain", gpt_oss, {}),
        ("qwen3_sliding", qwen3_sliding, {}),
    ]
    for i, (name, build, options) in enumerate(builders):
        torch.manual_seed(SEED + 100 + 10 * i)
        model = build()
        perturb_norms(model)
        perturb_biases_and_sinks(model)
        write_model(out_dir, name, model.eval(), hybrid=True, **options)
        write_parameter_counts(out_dir / name, model)
        if isinstance(model, GptOssForCausalLM):  # the routing transformers' routers chose, as loaded
            add_reference_routing(out_dir / name, reload(out_dir / name, GptOssForCausalLM, torch.float32,
                                                         **options.get("load_kwargs", {})))
    write_mxfp4_unit_reference(out_dir / "gpt_oss_mxfp4")
    layer_types = json.loads((out_dir / "qwen3_sliding/config.json").read_text())["layer_types"]
    assert layer_types == ["full_attention", "sliding_attention", "sliding_attention"], layer_types
    write_mlp_reference(out_dir / "gpt_oss_mxfp4", GptOssForCausalLM.from_pretrained(
        out_dir / "gpt_oss_mxfp4", dtype=torch.float32, **MXFP4_LOAD).eval())

    assert LIVE_DRAFTER["hidden"] == 32 and LIVE_DRAFTER["target_layers"] == 4
    torch.manual_seed(SEED + 200)
    write_live(out_dir, "live_llama", LlamaForCausalLM(LlamaConfig(
        vocab_size=LIVE_VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, max_position_embeddings=128, attention_bias=True,
        rope_parameters={"rope_type": "llama3", "rope_theta": 10000.0, "factor": 4.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 16})))
    torch.manual_seed(SEED + 300)
    write_live(out_dir, "live_gpt_oss", gpt_oss(vocab=LIVE_VOCAB, hidden=32, layers=4, window=8),
               mxfp4=True)


if __name__ == "__main__":
    main()
