#!/usr/bin/env python3
"""Reference outputs for the engine's DeepSeek-V3 family targets (multi-head latent attention,
transformers' DeepseekV3Attention; DeepSeek-V3's group-limited sigmoid router and shared
experts) and Kimi K2.5's text model (Kimi_K25ForConditionalGeneration, whose text_config is a
deepseek_v3 config).

Built with transformers, saved with save_pretrained and written as gen_minimax_glm_models.py
writes its models (reference.safetensors with fp32 logits, hidden states, statistics and
transformers' own cached decode, bf16 logits; the trained copy; router choices).

  deepseek_v3_yarn    q LoRA rank 24, kv LoRA rank 16, qk_nope 16 + qk_rope 8 per head, values of 12
                      (not the query width: SDPA with another value width), interleaved rope,
                      YaRN factor 4 over 128 original positions with mscale 0.707 and
                      mscale_all_dim 1.0 (so both the rotary attention factor and the score scale
                      move), 16 experts in 4 groups of which 2 are kept, top 4, routed scaling
                      2.5, two shared experts' width, layer 0 dense
  deepseek_v3_plain   no q LoRA (one q_proj), rotate-half rope (rope_interleave false), default
                      rope, attention_bias (q_a / kv_a / o), one group, norm_topk_prob false,
                      layers 0 and 1 dense
  kimi_k25            Kimi K2.5: the text model inside Kimi_K25ForConditionalGeneration with a tiny
                      vision tower and projector beside it (skipped by the engine), text_config
                      model_type "kimi_k2" as the published files write it. save_pretrained
                      writes the remote code's layout (language_model.model.*, vision_tower.*,
                      mm_projector.*) but, reversing its own blocks -> layers rename, names the
                      text layers language_model.model.blocks.<i>; the random copy is rewritten
                      to the published language_model.model.layers.<i> (and read back by
                      transformers for its reference), the trained copy keeps "blocks".

Every router's e_score_correction_bias is random and changes the choice at some positions.

OUT/live_deepseek_v3/: a tiny DeepSeek-V3 target, a random DFlash drafter for it and the
reference loop's steps (the layout test_dflash_live.cpp reads).

Usage: gen_deepseek_models.py OUT_DIR [NAME...]
"""

import json
import sys
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_minimax_glm_models as sigmoid_moe  # noqa: E402
import gen_moe_models as moe  # noqa: E402
import gen_target_models as dense  # noqa: E402


def deepseek_v3_args(**kw):
    args = dict(vocab_size=dense.VOCAB, hidden_size=64, intermediate_size=96, moe_intermediate_size=24,
                num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=24, kv_lora_rank=16, qk_nope_head_dim=16,
                qk_rope_head_dim=8, v_head_dim=12, max_position_embeddings=4096,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, initializer_range=0.1,
                rms_norm_eps=1e-6, tie_word_embeddings=False, bos_token_id=None, eos_token_id=None)
    args.update(kw)
    return args


def deepseek_v3(**kw):
    return DeepseekV3ForCausalLM(DeepseekV3Config(**deepseek_v3_args(**kw)))


YARN = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 128,
        "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 0.707, "mscale_all_dim": 1.0}


def kimi_k25():
    """Kimi_K25ForConditionalGeneration around a tiny deepseek_v3 text model."""
    from transformers import Kimi_K25Config, Kimi_K25ForConditionalGeneration
    text = deepseek_v3_args(max_position_embeddings=256, n_routed_experts=8, num_experts_per_tok=2, n_group=1, topk_group=1, n_shared_experts=1,
                            first_k_dense_replace=1, routed_scaling_factor=2.827,
                            rope_parameters=dict(YARN, factor=2.0, mscale=1.0))
    text["model_type"] = "kimi_k2"  # as the published config.json spells it; transformers reads deepseek_v3
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, patch_size=2)
    config = Kimi_K25Config(text_config=text, vision_config=vision, projection_hidden_size=32,
                            tie_word_embeddings=False)
    return Kimi_K25ForConditionalGeneration(config)


def published_kimi_layout(model_dir: Path):
    """language_model.model.blocks.<i> -> language_model.model.layers.<i>, as the published files."""
    path = model_dir / "model.safetensors"
    with safe_open(path, "pt") as f:
        metadata = f.metadata()
    tensors = load_file(path)
    renamed = {k.replace("language_model.model.blocks.", "language_model.model.layers."): v for k, v in tensors.items()}
    assert renamed.keys() != tensors.keys(), "save_pretrained no longer writes language_model.model.blocks"
    save_file(renamed, str(path), metadata=metadata)


AFTER_SAVE = {"kimi_k25": published_kimi_layout}

BUILDERS = [
    # name, seed (away from near ties between routed experts), builder
    ("deepseek_v3_yarn", 531, lambda: deepseek_v3(rope_parameters=YARN, max_position_embeddings=512,
                                                  n_routed_experts=16, num_experts_per_tok=4, n_group=4,
                                                  topk_group=2, routed_scaling_factor=2.5, n_shared_experts=2,
                                                  first_k_dense_replace=1, rope_interleave=True)),
    ("deepseek_v3_plain", 542, lambda: deepseek_v3(num_hidden_layers=4, q_lora_rank=None, rope_interleave=False,
                                                   attention_bias=True, n_routed_experts=8, num_experts_per_tok=3,
                                                   n_group=1, topk_group=1, n_shared_experts=1,
                                                   first_k_dense_replace=2, norm_topk_prob=False)),
    ("kimi_k25", 553, kimi_k25),
]


def live_deepseek_v3(common):
    """Layer 0 dense; 8 experts in 2 groups of which 1 is kept; a shared expert; MLA with YaRN."""
    # MLA has no grouped keys: transformers repeats its per-head keys num_heads / num_kv_heads times.
    common = dict(common, num_key_value_heads=common["num_attention_heads"])
    return DeepseekV3ForCausalLM(DeepseekV3Config(
        **common, intermediate_size=48, moe_intermediate_size=16, n_routed_experts=8, num_experts_per_tok=2,
        n_group=2, topk_group=1, n_shared_experts=1, first_k_dense_replace=1, routed_scaling_factor=1.5,
        q_lora_rank=16, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8,
        rope_parameters=dict(YARN, factor=2.0, original_max_position_embeddings=64)))


LIVE_TARGETS = {
    # fixture directory: (builder, seed, RMSNorm weight offset)
    "live_deepseek_v3": (live_deepseek_v3, 12, 1.0),  # 124 steps, tau 1.31
}


def main():
    out_dir = Path(sys.argv[1])
    torch.set_num_threads(1)
    only = set(sys.argv[2:])  # names to (re)generate; all by default
    for name, seed, build in BUILDERS:
        if only and name not in only:
            continue
        torch.manual_seed(dense.SEED + seed)
        model = build()
        dense.perturb_norms(model)
        moe.perturb_routers(model)
        sigmoid_moe.perturb_correction_biases(model)
        sigmoid_moe.assert_bias_changes_choice(model.eval(), dense.chain(dense.successor_table(), 0, 128))
        moe.write_model(out_dir, name, model.eval(), hybrid=True, stacked=False, after_save=AFTER_SAVE.get(name))
    for name in LIVE_TARGETS:
        if only and name not in only:
            continue
        moe.generate_live(out_dir, name, LIVE_TARGETS, prepare=sigmoid_moe.perturb_correction_biases)
    print(json.dumps(sorted(p.name for p in out_dir.iterdir())))


if __name__ == "__main__":
    main()
