#!/usr/bin/env python3
"""Reference outputs for the engine's mixture-of-experts targets: Qwen3-MoE, Qwen3.5-MoE (nested
vision-language layout and text-only) and Qwen3-Next with experts.

Every model is built with transformers, saved with save_pretrained and written exactly as
gen_target_models.py writes the dense ones (OUT/<name>/reference.safetensors and the trained
copy OUT/<name>_trained/, same tensors, same token ids), plus the routing transformers chose:
  router.<layer>.experts [T, k] I64 and router.<layer>.weights [T, k] F32, for every sparse
  layer, taken from the model's own router modules (forward hooks) in the fp32 run; and
  parameters.json, transformers' total and active parameter counts
  (transformers_reference.py holds all three for gen_llama_gptoss_models.py too).
Published checkpoints store experts one tensor per expert (mlp.experts.<e>.gate_proj.weight, what
save_pretrained writes through transformers' conversion mapping) or stacked (mlp.experts.gate_up_proj
[E, 2I, H], mlp.experts.down_proj [E, H, I]); the *_stacked models are rewritten in the stacked
layout, and transformers loading them back must give the same logits.

OUT/live_<family>/ (qwen35_moe, qwen3_moe, qwen3_next_moe, and qwen3_next without experts): a
tiny target of the family, a random DFlash drafter for it and the reference loop's tokens
(gen_drafter.py's docs/dflash.md 3 loop run with this target), plus the target's greedy
continuation greedy.<i>.

Usage: gen_moe_models.py OUT_DIR
"""

import json
import re
import sys
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from transformers import (Qwen3MoeConfig, Qwen3MoeForCausalLM, Qwen3_5MoeConfig, Qwen3_5MoeForCausalLM,
                          Qwen3_5MoeForConditionalGeneration, Qwen3_5MoeTextConfig, Qwen3NextConfig,
                          Qwen3NextForCausalLM)
from transformers.models.qwen3_5_moe import modeling_qwen3_5_moe

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_drafter  # noqa: E402
import gen_target_models as dense  # noqa: E402
from transformers_reference import add_reference_routing, greedy, routers, write_parameter_counts  # noqa: E402

ROUTER_SCALE = 2.0  # router logits of std ~2: decisive, varied routing (HF's init gives near-uniform)


def assert_torch_fallbacks():
    dense.assert_torch_fallbacks()
    for name in ("torch_chunk_gated_delta_rule", "torch_recurrent_gated_delta_rule"):
        fn = getattr(modeling_qwen3_5_moe, name)
        assert fn.__module__ == modeling_qwen3_5_moe.__name__, f"qwen3_5_moe.{name} is {fn.__module__}"


def perturb_routers(model):
    with torch.no_grad():
        for _, router in routers(model):
            router.weight.copy_(torch.randn_like(router.weight) * ROUTER_SCALE / router.weight.shape[1] ** 0.5)


def stack_experts(model_dir: Path):
    """Rewrites model.safetensors with each layer's experts stacked as transformers holds them."""
    path = model_dir / "model.safetensors"
    with safe_open(path, "pt") as f:
        metadata = f.metadata()
    tensors = load_file(path)
    per_expert = re.compile(r"(.*\.mlp\.experts\.)(\d+)\.(gate|up|down)_proj\.weight$")
    groups = {}
    for name in list(tensors):
        m = per_expert.match(name)
        if m:
            groups.setdefault(m.group(1), {})[(int(m.group(2)), m.group(3))] = tensors.pop(name)
    assert groups, f"{model_dir}: no per-expert tensors to stack"
    for prefix, parts in groups.items():
        experts = range(1 + max(e for e, _ in parts))
        tensors[prefix + "gate_up_proj"] = torch.stack(
            [torch.cat([parts[(e, "gate")], parts[(e, "up")]]) for e in experts]).contiguous()
        tensors[prefix + "down_proj"] = torch.stack([parts[(e, "down")] for e in experts]).contiguous()
    save_file(tensors, str(path), metadata=metadata)


def write_moe_reference(model_dir: Path, model, ids, parity: bool, hybrid: bool, stacked: bool, after_save=None):
    dense.write_reference(model_dir, model, ids, parity=parity, hybrid=hybrid, after_save=after_save)
    if stacked:
        logits = load_file(model_dir / "reference.safetensors")["logits"]
        stack_experts(model_dir)
        fp32 = dense.reload(model_dir, type(model), torch.float32)
        gap = (dense.run(fp32, ids).logits[0] - logits).abs().max().item()
        assert gap == 0, f"{model_dir.name}: transformers reads the stacked layout differently ({gap})"
    write_parameter_counts(model_dir, model)
    if parity:  # the trained copy serves the bf16 argmax test only
        add_reference_routing(model_dir, dense.reload(model_dir, type(model), torch.float32))


def write_model(out_dir: Path, name: str, model, hybrid: bool, stacked: bool, after_save=None):
    """As gen_target_models.write_model: the random model, then the same after a little training.
    `after_save(dir)` rewrites the random model's saved checkpoint (the trained copy stays as
    save_pretrained writes it)."""
    successor = dense.successor_table()
    torch.manual_seed(dense.SEED + 1)
    ids = dense.chain(successor, 0, dense.SEQ_LEN)
    noisy = torch.rand(dense.SEQ_LEN) < 0.1
    ids[noisy] = torch.randint(0, dense.VOCAB, (int(noisy.sum()),))
    write_moe_reference(out_dir / name, model, ids, parity=True, hybrid=hybrid, stacked=stacked, after_save=after_save)
    loss = dense.train_briefly(model, successor)
    print(f"{name}: trained to loss {loss:.3f}")
    write_moe_reference(out_dir / f"{name}_trained", model, ids, parity=False, hybrid=hybrid, stacked=stacked)


def qwen3_moe(**moe):
    config = Qwen3MoeConfig(vocab_size=dense.VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                            num_attention_heads=4, num_key_value_heads=2, head_dim=32, max_position_embeddings=4096,
                            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                            moe_intermediate_size=32, initializer_range=0.1, rms_norm_eps=1e-6, **moe)
    return Qwen3MoeForCausalLM(config)


def qwen35_moe_text(**kw):
    args = dict(vocab_size=dense.VOCAB, hidden_size=64, num_hidden_layers=4, num_attention_heads=4,
                num_key_value_heads=2, head_dim=32, linear_conv_kernel_dim=4, linear_key_head_dim=32,
                linear_value_head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4,
                max_position_embeddings=4096, moe_intermediate_size=32, shared_expert_intermediate_size=48,
                num_experts=8, num_experts_per_tok=2,
                rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                                 "mrope_section": [1, 1, 2], "mrope_interleaved": True},
                initializer_range=0.1, rms_norm_eps=1e-6)
    args.update(kw)
    return Qwen3_5MoeTextConfig(**args)


def qwen35_moe_vl_layout():
    """Qwen3.5-35B-A3B's layout: Qwen3_5MoeForConditionalGeneration, text weights under
    model.language_model., a tiny vision tower, config nested under text_config."""
    text = qwen35_moe_text(layer_types=["full_attention", "linear_attention", "linear_attention", "full_attention"],
                           tie_word_embeddings=False)
    vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                  patch_size=4, num_position_embeddings=16)
    return Qwen3_5MoeForConditionalGeneration(
        Qwen3_5MoeConfig(text_config=text.to_dict(), vision_config=vision, tie_word_embeddings=False))


def qwen3_next_moe():
    """Qwen3-Next with experts and the shared expert; layer 1 keeps a dense MLP."""
    config = Qwen3NextConfig(vocab_size=dense.VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                             num_attention_heads=4, num_key_value_heads=2, head_dim=32, linear_conv_kernel_dim=4,
                             linear_key_head_dim=32, linear_value_head_dim=8, linear_num_key_heads=2,
                             linear_num_value_heads=6, num_experts=8, num_experts_per_tok=3,
                             moe_intermediate_size=32, shared_expert_intermediate_size=40, mlp_only_layers=[1],
                             max_position_embeddings=4096,
                             rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                              "partial_rotary_factor": 0.5},
                             tie_word_embeddings=False, initializer_range=0.1, rms_norm_eps=1e-6)
    return Qwen3NextForCausalLM(config)


BUILDERS = [
    # name, builder, hybrid, stacked experts
    ("qwen3_moe", lambda: qwen3_moe(num_experts=8, num_experts_per_tok=2, mlp_only_layers=[2]), False, False),
    ("qwen3_moe_stacked", lambda: qwen3_moe(num_experts=6, num_experts_per_tok=3, decoder_sparse_step=2,
                                            norm_topk_prob=True, tie_word_embeddings=True), False, True),
    ("qwen35_moe_vl_layout", qwen35_moe_vl_layout, True, False),
    ("qwen35_moe_stacked", lambda: Qwen3_5MoeForCausalLM(qwen35_moe_text(tie_word_embeddings=True)), True, True),
    ("qwen3_next_moe", qwen3_next_moe, True, False),
]


# The live loops: gen_drafter's LIVE_DRAFTER (hidden 32, taps 1 and 2, vocab 16) on a tiny
# target of each MoE family. A random drafter agrees with a random target only by chance: with
# these target seeds it does now and then, so each loop both accepts and rolls back;
# generate_live checks that it still does.
def live_qwen35_moe(common):
    """Hybrid: Gated DeltaNet layers the loop rolls back, every MLP sparse with a shared expert."""
    return Qwen3_5MoeForCausalLM(qwen35_moe_text(**common, linear_key_head_dim=8, linear_value_head_dim=8,
                                                 moe_intermediate_size=16, shared_expert_intermediate_size=24,
                                                 num_experts=4, num_experts_per_tok=2))


def live_qwen3_moe(common):
    """No shared expert; decoder_sparse_step 2 and mlp_only_layers [3] of 6 layers leave layers 1
    and 5 sparse (tap 1 routed, tap 2 dense)."""
    return Qwen3MoeForCausalLM(Qwen3MoeConfig(**dict(common, num_hidden_layers=6), intermediate_size=48,
                                              moe_intermediate_size=16, num_experts=4, num_experts_per_tok=2,
                                              decoder_sparse_step=2, mlp_only_layers=[3], norm_topk_prob=True,
                                              rope_parameters={"rope_type": "default", "rope_theta": 10000.0}))


def qwen3_next_live(common, **mlp):
    return Qwen3NextForCausalLM(Qwen3NextConfig(**common, intermediate_size=48, linear_conv_kernel_dim=4,
                                                linear_key_head_dim=8, linear_value_head_dim=8,
                                                linear_num_key_heads=2, linear_num_value_heads=4,
                                                rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                                 "partial_rotary_factor": 0.5}, **mlp))


def live_qwen3_next_moe(common):
    """Hybrid with experts and the shared expert; layer 2 keeps a dense MLP (mlp_only_layers)."""
    return qwen3_next_live(common, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                           shared_expert_intermediate_size=24, mlp_only_layers=[2])


def live_qwen3_next(common):
    """Qwen3-Next without experts (num_experts 0): dense MLPs beside the fused Gated DeltaNet."""
    return qwen3_next_live(common, num_experts=0)


LIVE_TARGETS = {
    # fixture directory: (builder, seed, RMSNorm weight offset: 0 where the norm is (1 + w))
    "live_qwen35_moe": (live_qwen35_moe, 2, 0.0),  # tau 1.40 over 114 steps
    "live_qwen3_moe": (live_qwen3_moe, 2, 1.0),  # tau 1.11 over 144 steps
    "live_qwen3_next_moe": (live_qwen3_next_moe, 2, 0.0),  # tau 1.91 over 86 steps
    "live_qwen3_next": (live_qwen3_next, 8, 0.0),  # tau 1.32 over 121 steps (seeds 2-6 accept too rarely)
}


def live_target(build, norm_offset):
    """`build(common)`'s model with unit-scale weights (norms `norm_offset` + noise)."""
    cfg = gen_drafter.LIVE_DRAFTER
    common = dict(vocab_size=gen_drafter.LIVE_VOCAB, hidden_size=cfg["hidden"], num_hidden_layers=cfg["target_layers"],
                  num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=128,
                  tie_word_embeddings=False, initializer_range=0.1, rms_norm_eps=1e-6)
    model = build(common)
    with torch.no_grad():  # unit-scale weights: clear argmax margins, unlike the 0.02 init
        for name, p in model.named_parameters():
            if p.dim() >= 2 and "conv1d" not in name:
                p.copy_(torch.randn_like(p) / (1.0 if "embed" in name else p.shape[-1] ** 0.5))
            elif name.endswith("norm.weight") or name.endswith("layernorm.weight"):
                p.copy_(norm_offset + 0.2 * torch.randn_like(p))
    return model.eval()


def generate_live(out_dir: Path, name: str, targets=LIVE_TARGETS, prepare=None):
    """`targets[name]`'s live fixture; `prepare(target)` adjusts the target before it is saved."""
    build, seed, norm_offset = targets[name]
    torch.manual_seed(seed)
    target = live_target(build, norm_offset)
    if prepare:
        prepare(target)
    live = out_dir / name
    target.save_pretrained(live / "target", safe_serialization=True)
    cfg = dict(gen_drafter.LIVE_DRAFTER, target_layers=target.config.num_hidden_layers)
    w = gen_drafter.random_drafter(cfg, torch.Generator().manual_seed(dense.SEED + 100))
    gen_drafter.save_drafter(cfg, w, live / "drafter")
    reference = {}
    with torch.no_grad():
        for i, prompt in enumerate(gen_drafter.LIVE_PROMPTS):
            tokens, steps = gen_drafter.reference_loop(target, w, cfg, prompt)
            reference[f"prompt.{i}"] = torch.tensor(prompt)
            reference[f"tokens.{i}"] = torch.tensor(tokens)
            reference[f"steps.{i}"] = torch.tensor(steps)
            reference[f"greedy.{i}"] = torch.tensor(greedy(target, prompt, len(tokens) - len(prompt)))
            assert tokens == reference[f"greedy.{i}"].tolist(), f"{name} prompt {i}: the reference loop is not lossless"
    save_file(reference, str(live / "reference.safetensors"))
    accepted = torch.cat([reference[f"steps.{i}"][:, 1] for i in range(len(gen_drafter.LIVE_PROMPTS))])
    print(f"{name}: {accepted.numel()} steps, tau {1 + accepted.float().mean():.3f}")
    assert (accepted > 0).sum() >= 10, f"{name}: the live fixture must accept drafts (and roll the rest back)"


def main():
    out_dir = Path(sys.argv[1])
    torch.set_num_threads(1)
    assert_torch_fallbacks()
    manifest = {}
    for i, (name, build, hybrid, stacked) in enumerate(BUILDERS):
        torch.manual_seed(dense.SEED + 10 * i)
        model = build()
        dense.perturb_norms(model)
        perturb_routers(model)
        write_model(out_dir, name, model.eval(), hybrid, stacked)
        manifest[name] = {"hybrid": hybrid, "stacked": stacked}
    for name in LIVE_TARGETS:
        generate_live(out_dir, name)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1))


if __name__ == "__main__":
    main()
