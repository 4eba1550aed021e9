#!/usr/bin/env python3
"""Reference outputs for the engine's MiniMax-M2 and GLM-4.5 targets: experts behind DeepSeek-V3's
sigmoid router (transformers' MiniMaxM2TopKRouter, Glm4MoeTopkRouter).

Built with transformers, saved with save_pretrained and written exactly as gen_moe_models.py
writes the Qwen MoE models: OUT/<name>/reference.safetensors (fp32 logits and hidden states,
statistics, transformers' own cached decode, bf16 logits), the trained copy OUT/<name>_trained/,
router.<layer>.experts / .weights (the experts best first) with sparse_layers, and
parameters.json.

  minimax_m2        MiniMax-M2: q/k RMSNorm over all heads, rotary_dim 8 of head_dim 16 (the
                    released files' spelling of partial rotary), 8 experts, top 2, on every layer;
                    save_pretrained writes the Mixtral layout (block_sparse_moe.experts.<e>.w1/w3/w2)
  glm4_moe_groups   GLM-4.5: 16 experts in 4 groups of which 2 are kept, top 4,
                    routed_scaling_factor 2.5, one shared expert, layer 0 dense, use_qk_norm,
                    attention_bias (q/k/v only), partial rotary 0.5 (the class default), head_dim
                    absent (hidden / heads)
  glm4_moe_plain    GLM-4.5 with one group, no q/k norm, no bias, shared experts twice as wide,
                    layers 0 and 1 dense, norm_topk_prob false, head_dim 32 given

Every router's e_score_correction_bias is random, large enough that it changes the choice:
the generator checks that at every sparse layer some positions choose other experts without it.

OUT/live_minimax_m2/, OUT/live_glm4_moe/: a tiny target of each family, a random DFlash
drafter for it and the reference loop's steps (gen_moe_models.generate_live: the layout
test_dflash_live.cpp reads).

Usage: gen_minimax_glm_models.py OUT_DIR
"""

import sys
from pathlib import Path

import torch
from transformers import Glm4MoeConfig, Glm4MoeForCausalLM, MiniMaxM2Config, MiniMaxM2ForCausalLM

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_moe_models as moe  # noqa: E402
import gen_target_models as dense  # noqa: E402
from transformers_reference import choice_scores, routers  # noqa: E402

BIAS_SCALE = 0.1  # against sigmoid scores spread over (0.1, 0.9): it reorders some positions' choice, not all


def perturb_correction_biases(model):
    with torch.no_grad():
        for name, buffer in model.named_buffers():
            if name.endswith("e_score_correction_bias"):
                buffer.copy_(torch.randn_like(buffer) * BIAS_SCALE)


def assert_bias_changes_choice(model, ids):
    """At every sparse layer, the top-k with the correction bias differs from the top-k without
    it at some positions: the bias is part of what the routing test compares."""
    changed, handles = {}, []
    for layer, router in routers(model):
        def hook(module, args, output, layer=layer):
            logits = output[0]
            with_bias = choice_scores(module, args, logits).topk(module.top_k, -1).indices.sort(-1).values
            without = logits.float().sigmoid().topk(module.top_k, -1).indices.sort(-1).values
            changed[layer] = (with_bias != without).any(-1).float().mean().item()
        handles.append(router.register_forward_hook(hook))
    with torch.no_grad():
        model(input_ids=ids[None], use_cache=False)
    for h in handles:
        h.remove()
    assert changed and min(changed.values()) > 0.05, f"the correction bias rarely changes the choice: {changed}"
    print("positions the correction bias reroutes, per layer: " + ", ".join(f"{l}: {f:.2f}" for l, f in changed.items()))


def minimax_m2(**kw):
    args = dict(vocab_size=dense.VOCAB, hidden_size=64, intermediate_size=32, num_hidden_layers=3,
                num_attention_heads=4, num_key_value_heads=2, head_dim=16, rotary_dim=8,
                num_local_experts=8, num_experts_per_tok=2, max_position_embeddings=4096,
                rope_parameters={"rope_type": "default", "rope_theta": 5000000.0},
                bos_token_id=None, eos_token_id=None, initializer_range=0.1, rms_norm_eps=1e-6)
    args.update(kw)
    return MiniMaxM2ForCausalLM(MiniMaxM2Config(**args))


def glm4_moe(**kw):
    args = dict(vocab_size=dense.VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=3,
                num_attention_heads=4, num_key_value_heads=2, moe_intermediate_size=24, max_position_embeddings=4096,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, initializer_range=0.1,
                rms_norm_eps=1e-5, tie_word_embeddings=False)
    args.update(kw)
    return Glm4MoeForCausalLM(Glm4MoeConfig(**args))


BUILDERS = [
    # name, seed (away from near ties between routed experts), builder
    ("minimax_m2", 502, minimax_m2),
    ("glm4_moe_groups", 511, lambda: glm4_moe(n_routed_experts=16, num_experts_per_tok=4, n_group=4, topk_group=2,
                                         routed_scaling_factor=2.5, n_shared_experts=1, first_k_dense_replace=1,
                                         use_qk_norm=True, attention_bias=True)),
    ("glm4_moe_plain", 520, lambda: glm4_moe(num_hidden_layers=4, head_dim=32, n_routed_experts=8, num_experts_per_tok=3,
                                        n_shared_experts=2, first_k_dense_replace=2, norm_topk_prob=False)),
]


# The live loops: gen_drafter's LIVE_DRAFTER (hidden 32, taps 1 and 2, vocab 16).
def live_minimax_m2(common):
    return MiniMaxM2ForCausalLM(MiniMaxM2Config(**common, intermediate_size=16, num_local_experts=4,
                                                num_experts_per_tok=2, rotary_dim=4, bos_token_id=None,
                                                eos_token_id=None,
                                                rope_parameters={"rope_type": "default", "rope_theta": 10000.0}))


def live_glm4_moe(common):
    """Layer 0 dense; 8 experts in 2 groups of which 1 is kept; a shared expert."""
    return Glm4MoeForCausalLM(Glm4MoeConfig(**common, intermediate_size=48, moe_intermediate_size=16,
                                            n_routed_experts=8, num_experts_per_tok=2, n_group=2, topk_group=1,
                                            n_shared_experts=1, first_k_dense_replace=1, routed_scaling_factor=1.5,
                                            use_qk_norm=True, attention_bias=True,
                                            rope_parameters={"rope_type": "default", "rope_theta": 10000.0}))


LIVE_TARGETS = {
    # fixture directory: (builder, seed, RMSNorm weight offset)
    "live_minimax_m2": (live_minimax_m2, 7, 1.0),  # 26 of 128 steps accept drafts
    "live_glm4_moe": (live_glm4_moe, 6, 1.0),  # 18 of 142 steps accept drafts
}


def main():
    out_dir = Path(sys.argv[1])
    torch.set_num_threads(1)
    for name, seed, build in BUILDERS:
        torch.manual_seed(dense.SEED + seed)
        model = build()
        dense.perturb_norms(model)
        moe.perturb_routers(model)
        perturb_correction_biases(model)
        assert_bias_changes_choice(model.eval(), dense.chain(dense.successor_table(), 0, 128))
        moe.write_model(out_dir, name, model.eval(), hybrid=True, stacked=False)
    for name in LIVE_TARGETS:
        moe.generate_live(out_dir, name, LIVE_TARGETS, prepare=perturb_correction_biases)


if __name__ == "__main__":
    main()
