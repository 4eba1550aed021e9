#!/usr/bin/env python3
"""Reference outputs for the engine's GLM-5 targets (transformers' GlmMoeDsaForCausalLM): multi-head
latent attention restricted by DeepSeek sparse attention's indexer, "full" layers that run their
indexer and "shared" ones that reuse the previous full layer's choice, dense and sparse MLP layers
as mlp_layer_types says, DeepSeek-V3's router.

Written as gen_deepseek_models.py writes its models (reference.safetensors with fp32 logits,
hidden states, statistics and transformers' own cached decode, bf16 logits; the trained copy;
router choices).

  glm5_sparse     index_topk 16 of up to 512 keys (the indexer's choice shapes every row past the
                  16th), 8 indexer heads of 16 channels, layers full, full, shared, full
                  (index_topk_freq 2, index_skip_topk_offset 2), mlp_layer_types dense, sparse,
                  dense, sparse, 16 experts in 4 groups of which 2 are kept, YaRN with mscale
  glm5_pattern    index_topk_pattern "FSSF", index_topk 64, first_k_dense_replace 2, one group

The indexer picks keys by a top-k over fp32 scores: a near tie at the boundary would make the
choice depend on roundings, so the generator checks that every full layer's k-th and (k+1)-th
best allowed keys differ by more than INDEX_MIN_GAP at every position (change a seed otherwise).

OUT/live_glm5/: a tiny GLM-5 target, a random DFlash drafter for it and the reference loop's steps.
Its indexer keeps index_topk 128 keys, every key a live sequence has: a sparser choice makes the
reference itself lossy (greedy's one-token steps and the loop's recomputed blocks round the index
scores differently, and a near tie among 128 keys flips the choice); the oracle models above hold
the sparse choice.

Usage: gen_glm5_models.py OUT_DIR [NAME...]
"""

import sys
from pathlib import Path

import torch
from transformers import GlmMoeDsaConfig, GlmMoeDsaForCausalLM
from transformers.models.glm_moe_dsa.modeling_glm_moe_dsa import GlmMoeDsaIndexer, apply_rotary_pos_emb_interleave

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_minimax_glm_models as sigmoid_moe  # noqa: E402
import gen_moe_models as moe  # noqa: E402
import gen_target_models as dense  # noqa: E402

INDEX_MIN_GAP = 2e-6  # the engine's fp32 index scores agree with these to ~1e-7
YARN = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 128,
        "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 0.707, "mscale_all_dim": 1.0}


def glm5(**kw):
    args = dict(vocab_size=dense.VOCAB, hidden_size=64, intermediate_size=96, moe_intermediate_size=24,
                num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=24, kv_lora_rank=16,
                qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12, max_position_embeddings=512,
                index_head_dim=16, index_n_heads=16, rope_parameters=YARN, initializer_range=0.1, rms_norm_eps=1e-5,
                tie_word_embeddings=False, bos_token_id=None, eos_token_id=None)
    args.update(kw)
    return GlmMoeDsaForCausalLM(GlmMoeDsaConfig(**args))


def index_scores(module, hidden, q_resid, position_embeddings, mask):
    """GlmMoeDsaIndexer's scores before its top-k (its forward, without the cache)."""
    b, s, _ = hidden.shape
    cos, sin = position_embeddings
    q = module.wq_b(q_resid).view(b, s, module.n_heads, module.head_dim)
    q_rot, q_pass = torch.split(q, [module.qk_rope_head_dim, module.head_dim - module.qk_rope_head_dim], dim=-1)
    k = module.k_norm(module.wk(hidden)).unsqueeze(2)
    k_rot, k_pass = torch.split(k, [module.qk_rope_head_dim, module.head_dim - module.qk_rope_head_dim], dim=-1)
    q_rot, k_rot = apply_rotary_pos_emb_interleave(q_rot, k_rot, cos, sin, unsqueeze_dim=2)
    q, k = torch.cat([q_rot, q_pass], -1), torch.cat([k_rot, k_pass], -1).squeeze(2)
    scores = torch.relu(torch.matmul(q.float(), k.transpose(-1, -2).float().unsqueeze(1)) * module.softmax_scale)
    weights = module.weights_proj(hidden).float() * module.n_heads ** -0.5
    out = torch.matmul(weights.unsqueeze(-2), scores).squeeze(-2)
    return out.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else out + mask


def reference_ids():
    """The input gen_moe_models.write_model gives the model (its walk with a tenth of the tokens random)."""
    torch.manual_seed(dense.SEED + 1)
    ids = dense.chain(dense.successor_table(), 0, dense.SEQ_LEN)
    noisy = torch.rand(dense.SEQ_LEN) < 0.1
    ids[noisy] = torch.randint(0, dense.VOCAB, (int(noisy.sum()),))
    return ids


def assert_clear_index_choice(model, ids):
    gaps, handles = [], []
    for module in model.modules():
        if isinstance(module, GlmMoeDsaIndexer):
            def hook(mod, args, kwargs, output):
                hidden, q_resid, pos, mask = (list(args) + [kwargs.get(k) for k in ("q_resid", "position_embeddings",
                                                                                    "attention_mask")])[:4]
                scores = index_scores(mod, hidden, q_resid, pos, mask)
                k = min(mod.index_topk, scores.shape[-1])
                if k < scores.shape[-1]:
                    top = scores.topk(k + 1, -1).values
                    finite = torch.isfinite(top[..., k])
                    if finite.any():
                        gaps.append((top[..., k - 1] - top[..., k])[finite].min().item())
            handles.append(module.register_forward_hook(hook, with_kwargs=True))
    with torch.no_grad():
        model(input_ids=ids[None], use_cache=False)
    for h in handles:
        h.remove()
    assert gaps and min(gaps) > INDEX_MIN_GAP, f"a near tie at the indexer's top-k boundary ({min(gaps):.2e}); change the seed"
    print(f"smallest indexer score gap at the top-k boundary {min(gaps):.2e}")


BUILDERS = [
    # name, seed, builder
    ("glm5_sparse", 601, lambda: glm5(index_topk=256, index_topk_freq=2, index_skip_topk_offset=2,
                                      mlp_layer_types=["dense", "sparse", "dense", "sparse"], n_routed_experts=16,
                                      num_experts_per_tok=4, n_group=4, topk_group=2, n_shared_experts=2,
                                      routed_scaling_factor=2.5)),
    ("glm5_pattern", 620, lambda: glm5(index_topk=384, index_topk_pattern="FSSF", first_k_dense_replace=2,
                                       n_routed_experts=8, num_experts_per_tok=3, n_group=1, topk_group=1,
                                       n_shared_experts=1, norm_topk_prob=False,
                                       rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
]


def live_glm5(common):
    """Layer 0 dense; 8 experts in 2 groups of which 1 is kept; the indexer keeps every key."""
    common = dict(common, num_key_value_heads=common["num_attention_heads"])
    return GlmMoeDsaForCausalLM(GlmMoeDsaConfig(
        **common, intermediate_size=48, moe_intermediate_size=16, n_routed_experts=8, num_experts_per_tok=2,
        n_group=2, topk_group=1, n_shared_experts=1, first_k_dense_replace=1, routed_scaling_factor=1.5,
        q_lora_rank=16, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8, index_topk=128,
        index_head_dim=16, index_n_heads=4, rope_parameters={"rope_type": "default", "rope_theta": 10000.0}))


LIVE_TARGETS = {
    # fixture directory: (builder, seed, RMSNorm weight offset)
    "live_glm5": (live_glm5, 12, 1.0),
}


def main():
    out_dir = Path(sys.argv[1])
    only = set(sys.argv[2:])  # names to (re)generate; all by default
    torch.set_num_threads(1)
    for name, seed, build in BUILDERS:
        if only and name not in only:
            continue
        torch.manual_seed(dense.SEED + seed)
        model = build()
        dense.perturb_norms(model)
        moe.perturb_routers(model)
        sigmoid_moe.perturb_correction_biases(model)
        model.eval()
        sigmoid_moe.assert_bias_changes_choice(model, dense.chain(dense.successor_table(), 0, 128))
        assert_clear_index_choice(model, reference_ids())
        moe.write_model(out_dir, name, model, hybrid=True, stacked=False)
    for name in LIVE_TARGETS:
        if only and name not in only:
            continue
        moe.generate_live(out_dir, name, LIVE_TARGETS, prepare=sigmoid_moe.perturb_correction_biases)


if __name__ == "__main__":
    main()
