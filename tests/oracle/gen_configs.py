"""Reference configs for the C++ config parsers (test_configs_oracle).

Each case is a config.json in one of the spellings found in the wild (written by
transformers' save_pretrained, or by hand in the legacy flat form). transformers then loads
the file back, and what it derives -- layer types, head_dim, RoPE type/theta/partial factor,
the rotary embedding's inv_freq and attention scaling -- goes into expected.json.
default_layer_ids.json holds DFlash's default target-layer taps for many (L, n) pairs.

Usage: gen_configs.py OUT_DIR
"""

import copy
import json
import math
import sys
from fractions import Fraction
from pathlib import Path

from transformers import AutoConfig, Qwen3Config, Qwen3NextConfig
from transformers.models.qwen3.modeling_qwen3 import Qwen3RotaryEmbedding
from transformers.models.qwen3_5.configuration_qwen3_5 import Qwen3_5Config, Qwen3_5TextConfig
from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5TextRotaryEmbedding
from transformers.models.qwen3_next.modeling_qwen3_next import Qwen3NextRotaryEmbedding
from transformers.models.gpt_oss.modeling_gpt_oss import GptOssRotaryEmbedding
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
from transformers.models.minimax_m2.modeling_minimax_m2 import MiniMaxM2RotaryEmbedding
from transformers.models.glm4_moe.modeling_glm4_moe import Glm4MoeRotaryEmbedding
from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3RotaryEmbedding
from transformers.models.glm_moe_dsa.modeling_glm_moe_dsa import GlmMoeDsaRotaryEmbedding

QWEN3_8B = dict(hidden_size=4096, intermediate_size=12288, num_hidden_layers=36, num_attention_heads=32,
                num_key_value_heads=8, head_dim=128, max_position_embeddings=40960, vocab_size=151936,
                bos_token_id=151643, eos_token_id=151645, rms_norm_eps=1e-6)
QWEN35_08B = dict(hidden_size=1024, intermediate_size=3584, num_hidden_layers=24, num_attention_heads=8,
                  num_key_value_heads=2, head_dim=256, vocab_size=248320, linear_conv_kernel_dim=4,
                  linear_key_head_dim=128, linear_value_head_dim=128, linear_num_key_heads=16,
                  linear_num_value_heads=16, max_position_embeddings=262144, eos_token_id=248044)
QWEN35_27B = dict(QWEN35_08B, hidden_size=5120, intermediate_size=17408, num_hidden_layers=64,
                  num_attention_heads=24, num_key_value_heads=4, linear_num_value_heads=48)
# The published config.json files, as written (legacy flat rope_theta + rope_scaling).
LLAMA_3_1_8B = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 128000,
    "eos_token_id": [128001, 128008, 128009], "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
    "intermediate_size": 14336, "max_position_embeddings": 131072, "mlp_bias": False, "model_type": "llama",
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "pretraining_tp": 1,
    "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                            "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True,
    "vocab_size": 128256}
GPT_OSS_20B = {
    "architectures": ["GptOssForCausalLM"], "attention_bias": True, "attention_dropout": 0.0, "eos_token_id": 200002,
    "experts_per_token": 4, "head_dim": 64, "hidden_act": "silu", "hidden_size": 2880, "initial_context_length": 4096,
    "initializer_range": 0.02, "intermediate_size": 2880,
    "layer_types": ["sliding_attention", "full_attention"] * 12, "max_position_embeddings": 131072,
    "model_type": "gpt_oss", "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 24,
    "num_key_value_heads": 8, "num_local_experts": 32, "output_router_logits": False, "pad_token_id": 199999,
    "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                       "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"},
    "rms_norm_eps": 1e-05, "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                                            "original_max_position_embeddings": 4096, "rope_type": "yarn",
                                            "truncate": False},
    "rope_theta": 150000, "router_aux_loss_coef": 0.9, "sliding_window": 128, "swiglu_limit": 7.0,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 201088}
# MiniMaxAI/MiniMax-M2's config.json as published (its weights are FP8 with 128x128 block scales,
# which the engine does not dequantise: that file is refused by name, the same config without
# quantization_config, as the BF16 conversions publish it, is read).
MINIMAX_M2 = {
    "architectures": ["MiniMaxM2ForCausalLM"], "attention_dropout": 0.0, "attn_type_list": [1] * 62,
    "auto_map": {"AutoConfig": "configuration_minimax_m2.MiniMaxM2Config",
                 "AutoModelForCausalLM": "modeling_minimax_m2.MiniMaxM2ForCausalLM"},
    "bos_token_id": None, "eos_token_id": None, "head_dim": 128, "hidden_act": "silu", "hidden_size": 3072,
    "initializer_range": 0.02, "intermediate_size": 1536, "layernorm_full_attention_beta": 1.0,
    "layernorm_linear_attention_beta": 1.0, "layernorm_mlp_beta": 1.0, "max_model_len": None,
    "max_position_embeddings": 196608, "mlp_intermediate_size": 8192, "model_type": "minimax_m2",
    "mtp_transformer_layers": 1, "num_attention_heads": 48, "num_experts_per_tok": 8, "num_hidden_layers": 62,
    "num_key_value_heads": 8, "num_local_experts": 256, "num_mtp_modules": 3, "output_router_logits": False,
    "qk_norm_type": "per_layer",
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "float8_e4m3fn", "quant_method": "fp8",
                            "weight_block_size": [128, 128]},
    "rms_norm_eps": 1e-06, "rope_theta": 5000000, "rotary_dim": 64, "router_aux_loss_coef": 0.001,
    "router_jitter_noise": 0.0, "scoring_func": "sigmoid", "shared_intermediate_size": 0, "shared_moe_mode": "sigmoid",
    "sliding_window": None, "tie_word_embeddings": False, "transformers_version": "4.46.1", "use_cache": True,
    "use_mtp": True, "use_qk_norm": True, "use_routing_bias": True, "vocab_size": 200064}
# zai-org/GLM-4.5's config.json as published; GLM-4.6 changes only the context length.
GLM_4_5 = {
    "architectures": ["Glm4MoeForCausalLM"], "attention_bias": True, "attention_dropout": 0.0,
    "pad_token_id": 151329, "eos_token_id": [151329, 151336, 151338], "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 5120, "partial_rotary_factor": 0.5, "initializer_range": 0.02, "intermediate_size": 12288,
    "max_position_embeddings": 131072, "model_type": "glm4_moe", "moe_intermediate_size": 1536,
    "norm_topk_prob": True, "num_attention_heads": 96, "n_group": 1, "topk_group": 1, "n_routed_experts": 160,
    "n_shared_experts": 1, "routed_scaling_factor": 2.5, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
    "num_hidden_layers": 92, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_scaling": None,
    "rope_theta": 1000000, "num_nextn_predict_layers": 1, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "transformers_version": "4.54.0", "use_cache": True, "use_qk_norm": True, "vocab_size": 151552}
GLM_4_6 = dict(GLM_4_5, max_position_embeddings=202752)
DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 0, "eos_token_id": 1, "ep_size": 1, "first_k_dense_replace": 3, "hidden_act": "silu",
    "hidden_size": 7168, "initializer_range": 0.02, "intermediate_size": 18432, "kv_lora_rank": 512,
    "max_position_embeddings": 163840, "model_type": "deepseek_v3", "moe_intermediate_size": 2048,
    "moe_layer_freq": 1, "n_group": 8, "n_routed_experts": 256, "n_shared_experts": 1, "norm_topk_prob": True,
    "num_attention_heads": 128, "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128,
    "num_nextn_predict_layers": 1, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                            "weight_block_size": [128, 128]},
    "rms_norm_eps": 1e-06,
    "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                     "original_max_position_embeddings": 4096, "type": "yarn"},
    "rope_theta": 10000, "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "tie_word_embeddings": False,
    "topk_group": 4, "topk_method": "noaux_tc", "torch_dtype": "bfloat16", "transformers_version": "4.46.3",
    "use_cache": True, "v_head_dim": 128, "vocab_size": 129280}
# GLM-5: GlmMoeDsaConfig's defaults, which transformers documents as zai-org/GLM-5's (744B).
GLM_5 = {
    "architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa", "vocab_size": 154880, "hidden_size": 6144,
    "intermediate_size": 12288, "moe_intermediate_size": 2048, "num_hidden_layers": 78, "num_attention_heads": 64,
    "num_key_value_heads": 64, "n_shared_experts": 1, "n_routed_experts": 256, "routed_scaling_factor": 2.5,
    "kv_lora_rank": 512, "q_lora_rank": 2048, "qk_rope_head_dim": 64, "v_head_dim": 256, "qk_nope_head_dim": 192,
    "n_group": 1, "topk_group": 1, "num_experts_per_tok": 8, "norm_topk_prob": True, "hidden_act": "silu",
    "max_position_embeddings": 202752, "rms_norm_eps": 1e-05, "bos_token_id": 0, "eos_token_id": 1,
    "tie_word_embeddings": False, "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
    "attention_bias": False, "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 32,
    "first_k_dense_replace": 3}
# Kimi K2.5: the Kimi K2 text model (DeepSeek-V3's architecture, 384 experts in one group, 64
# heads, one dense layer) in a vision-language config; INT4 experts in compressed-tensors.
KIMI_K2_TEXT = dict(
    {k: v for k, v in DEEPSEEK_V3.items() if k not in ("architectures", "quantization_config", "torch_dtype",
                                                          "transformers_version")},
    model_type="kimi_k2", vocab_size=163840, num_attention_heads=64, num_key_value_heads=64, n_routed_experts=384,
    n_group=1, topk_group=1, first_k_dense_replace=1, routed_scaling_factor=2.827, num_nextn_predict_layers=0,
    max_position_embeddings=262144, rope_theta=50000.0, bos_token_id=163584, eos_token_id=163585,
    rope_scaling={"beta_fast": 1.0, "beta_slow": 1.0, "factor": 64.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                  "original_max_position_embeddings": 4096, "type": "yarn"})
KIMI_K2_5 = {
    "architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25", "text_config": KIMI_K2_TEXT,
    "vision_config": {"patch_size": 14, "num_attention_heads": 16, "num_hidden_layers": 27, "hidden_size": 1152,
                      "intermediate_size": 4304, "merge_kernel_size": [2, 2]},
    "quantization_config": {
        "config_groups": {"group_0": {"input_activations": None, "output_activations": None, "targets": ["Linear"],
                                      "weights": {"actorder": None, "block_structure": None, "dynamic": False,
                                                  "group_size": 32, "num_bits": 4, "observer": "minmax",
                                                  "observer_kwargs": {}, "strategy": "group", "symmetric": True,
                                                  "type": "int"}}},
        "format": "pack-quantized", "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*",
                                               "re:.*mlp\\.(gate|up|gate_up|down)_proj.*", "re:vision_tower.*",
                                               "re:mm_projector.*"],
        "kv_cache_scheme": None, "quant_method": "compressed-tensors", "quantization_status": "compressed"},
    "tie_word_embeddings": False, "media_placeholder_token_id": 163605}
MROPE = dict(rope_type="default", rope_theta=1e7, partial_rotary_factor=0.25, mrope_section=[11, 11, 10],
             mrope_interleaved=True)


def saved(config, architectures):
    config.architectures = architectures
    return config.to_dict()


def legacy_flat(d, rope_theta, rope_scaling=None, **extra):
    """The pre-v5 spelling: flat rope_theta (+ rope_scaling), no rope_parameters."""
    d = copy.deepcopy(d)
    d.pop("rope_parameters", None)
    d.update(rope_theta=rope_theta, rope_scaling=rope_scaling, **extra)
    return d


def cases():
    out = {}
    out["qwen3_8b_saved"] = saved(Qwen3Config(**QWEN3_8B, rope_parameters={"rope_type": "default", "rope_theta": 1e6}),
                                  ["Qwen3ForCausalLM"])
    q3_4b = dict(QWEN3_8B, hidden_size=2560, intermediate_size=9728, tie_word_embeddings=True)
    out["qwen3_4b_legacy_flat"] = legacy_flat(saved(Qwen3Config(**q3_4b), ["Qwen3ForCausalLM"]), 1e6)
    out["qwen3_yarn_rope_scaling_type"] = legacy_flat(
        saved(Qwen3Config(**QWEN3_8B), ["Qwen3ForCausalLM"]), 1e6,
        {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})
    out["qwen3_yarn_rope_parameters_betas"] = saved(Qwen3Config(**QWEN3_8B, rope_parameters={
        "rope_type": "yarn", "rope_theta": 5e5, "factor": 8.0, "original_max_position_embeddings": 4096,
        "beta_fast": 16.0, "beta_slow": 2.0, "attention_factor": 1.25}), ["Qwen3ForCausalLM"])
    out["qwen3_yarn_no_original_max"] = legacy_flat(
        saved(Qwen3Config(**dict(QWEN3_8B, max_position_embeddings=131072)), ["Qwen3ForCausalLM"]), 1e6,
        {"rope_type": "yarn", "factor": 4.0, "mscale": 0.707, "mscale_all_dim": 1.0})
    sliding = saved(Qwen3Config(**dict(QWEN3_8B, num_hidden_layers=6), use_sliding_window=True, sliding_window=1024,
                                max_window_layers=4), ["Qwen3ForCausalLM"])
    sliding.pop("layer_types")  # exercise the max_window_layers rule
    out["qwen3_sliding_rule"] = sliding

    out["qwen3_5_0p8b_saved"] = saved(Qwen3_5Config(text_config=dict(QWEN35_08B, rope_parameters=MROPE),
                                                    tie_word_embeddings=True),
                                      ["Qwen3_5ForConditionalGeneration"])
    q27 = saved(Qwen3_5Config(text_config=dict(QWEN35_27B, rope_parameters=MROPE)), ["Qwen3_5ForConditionalGeneration"])
    q27["text_config"].pop("layer_types")  # exercise the full_attention_interval rule
    q27["text_config"]["full_attention_interval"] = 4
    out["qwen3_5_27b_interval_rule"] = q27
    odd_interval = copy.deepcopy(q27)
    odd_interval["text_config"].update(num_hidden_layers=10, full_attention_interval=3)
    out["qwen3_5_interval_3"] = odd_interval
    nested = copy.deepcopy(out["qwen3_5_0p8b_saved"])
    nested["text_config"]["rope_parameters"] = {"full_attention": {"rope_type": "default", "rope_theta": 1e6,
                                                                   "partial_rotary_factor": 0.5}}
    out["qwen3_5_rope_nested_by_layer_type"] = nested
    flat35 = copy.deepcopy(out["qwen3_5_0p8b_saved"])
    flat35["text_config"] = legacy_flat(flat35["text_config"], 5e6, None, partial_rotary_factor=0.5)
    out["qwen3_5_flat_partial_top_level"] = flat35
    bare35 = copy.deepcopy(out["qwen3_5_0p8b_saved"])
    del bare35["text_config"]["rope_parameters"]  # class defaults: theta 10000, partial factor 0.25
    out["qwen3_5_no_rope_fields"] = bare35
    yarn35 = copy.deepcopy(out["qwen3_5_0p8b_saved"])
    yarn35["text_config"] = legacy_flat(yarn35["text_config"], 1e7, {
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 262144,
        "mrope_section": [11, 11, 10], "mrope_interleaved": True})
    yarn35["text_config"]["max_position_embeddings"] = 1048576
    out["qwen3_5_yarn_rope_scaling"] = yarn35
    text_only = Qwen3_5TextConfig(**QWEN35_08B, rope_parameters=MROPE, tie_word_embeddings=True)
    out["qwen3_5_text_causal_lm"] = saved(text_only, ["Qwen3_5ForCausalLM"])

    out["qwen3_next_saved"] = saved(Qwen3NextConfig(partial_rotary_factor=0.25, rope_theta=1e7, eos_token_id=151645),
                                    ["Qwen3NextForCausalLM"])
    out["qwen3_next_legacy_flat"] = legacy_flat(
        saved(Qwen3NextConfig(hidden_size=2048, num_hidden_layers=48, mlp_only_layers=[0, 47], decoder_sparse_step=1),
              ["Qwen3NextForCausalLM"]), 1e7, None, partial_rotary_factor=0.25)

    out["llama_3_1_8b_published"] = copy.deepcopy(LLAMA_3_1_8B)  # no head_dim: hidden / heads
    out["gpt_oss_20b_published"] = copy.deepcopy(GPT_OSS_20B)
    bare_oss = copy.deepcopy(GPT_OSS_20B)
    for key in ("rope_scaling", "rope_theta", "layer_types", "head_dim", "sliding_window"):
        del bare_oss[key]  # GptOssConfig's defaults: its YaRN, theta 150000, alternating layers, 64, 128
    bare_oss["num_hidden_layers"] = 5
    out["gpt_oss_class_defaults"] = bare_oss
    out["minimax_m2_published"] = copy.deepcopy(MINIMAX_M2)  # FP8 block-scaled, dequantised at load
    bf16_minimax = copy.deepcopy(MINIMAX_M2)
    del bf16_minimax["quantization_config"]
    out["minimax_m2_published_bf16"] = bf16_minimax
    bare_minimax = copy.deepcopy(bf16_minimax)
    for key in ("rotary_dim", "rope_theta", "head_dim"):
        del bare_minimax[key]  # MiniMaxM2Config's defaults: full rotary, theta 5e6, head_dim 128
    out["minimax_m2_class_defaults"] = bare_minimax
    out["glm_4_5_published"] = copy.deepcopy(GLM_4_5)
    out["glm_4_6_published"] = copy.deepcopy(GLM_4_6)
    bare_glm = copy.deepcopy(GLM_4_5)
    for key in ("partial_rotary_factor", "head_dim", "n_group", "topk_group", "first_k_dense_replace",
                "n_shared_experts", "routed_scaling_factor", "use_qk_norm", "attention_bias"):
        del bare_glm[key]  # Glm4MoeConfig's defaults: partial 0.5, hidden / heads, one group, 1 dense layer...
    out["glm4_moe_class_defaults"] = bare_glm
    out["deepseek_v3_published"] = copy.deepcopy(DEEPSEEK_V3)  # FP8 block-scaled, dequantised at load
    bare_deepseek = {k: v for k, v in DEEPSEEK_V3.items() if k not in (
        "n_group", "topk_group", "first_k_dense_replace", "n_shared_experts", "routed_scaling_factor",
        "num_key_value_heads", "rms_norm_eps", "quantization_config")}  # DeepseekV3Config's defaults
    out["deepseek_v3_class_defaults"] = bare_deepseek
    out["kimi_k2_5_published"] = copy.deepcopy(KIMI_K2_5)  # INT4 (compressed-tensors pack-quantized)
    out["glm_5_published"] = copy.deepcopy(GLM_5)
    bare_glm5 = {k: v for k, v in GLM_5.items() if k not in (
        "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "v_head_dim", "qk_nope_head_dim", "index_topk",
        "index_head_dim", "index_n_heads", "first_k_dense_replace", "n_group", "topk_group", "routed_scaling_factor",
        "n_shared_experts", "n_routed_experts", "num_experts_per_tok", "rms_norm_eps")}  # GlmMoeDsaConfig's defaults
    out["glm_moe_dsa_class_defaults"] = bare_glm5
    out["glm_moe_dsa_indexer_pattern"] = dict(GLM_5, num_hidden_layers=6, index_topk_freq=3, index_skip_topk_offset=1,
                                              mlp_layer_types=["dense", "sparse", "dense", "sparse", "sparse", "dense"])
    return out


# Published files the parser refuses, each for the reason refused.json names: FP8 weights with
# UE8M0 (power-of-two) scales, as DeepSeek-V3.1 publishes them, here on MiniMax-M2's file.
REFUSED = {"minimax_m2_ue8m0_scales": ({**MINIMAX_M2, "quantization_config": {**MINIMAX_M2["quantization_config"],
                                                                            "scale_fmt": "ue8m0"}}, "ue8m0")}


def text_config_of(config):
    return config.text_config if hasattr(config, "text_config") and config.text_config is not None else config


def rotary_reference(text):
    """inv_freq and attention scaling from the model's own rotary embedding class."""
    rope = text.rope_parameters
    if "full_attention" in rope:  # nested per layer type: the modeling classes read the flat form
        text = copy.deepcopy(text)
        text.rope_parameters = dict(rope["full_attention"])
        rope = text.rope_parameters
    cls = {"qwen3": Qwen3RotaryEmbedding, "qwen3_5_text": Qwen3_5TextRotaryEmbedding,
           "qwen3_next": Qwen3NextRotaryEmbedding, "llama": LlamaRotaryEmbedding,
           "gpt_oss": GptOssRotaryEmbedding, "minimax_m2": MiniMaxM2RotaryEmbedding,
           "glm4_moe": Glm4MoeRotaryEmbedding, "deepseek_v3": DeepseekV3RotaryEmbedding,
           "glm_moe_dsa": GlmMoeDsaRotaryEmbedding}[text.model_type]
    emb = cls(text)
    return rope, [float(x) for x in emb.inv_freq.double()], float(emb.attention_scaling)


def expected_of(config):
    text = text_config_of(config)
    rope, inv_freq, scaling = rotary_reference(text)
    eos = text.eos_token_id
    nested = hasattr(config, "text_config") and config.text_config is not None
    expected = {
        "model_type": config.model_type,
        "hidden_size": text.hidden_size, "intermediate_size": text.intermediate_size,
        "num_hidden_layers": text.num_hidden_layers, "num_attention_heads": text.num_attention_heads,
        "num_key_value_heads": text.num_key_value_heads,
        # Glm4MoeConfig has no head_dim field: its attention takes hidden / heads when absent.
        "head_dim": getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads,
        "vocab_size": text.vocab_size, "rms_norm_eps": text.rms_norm_eps,
        "max_position_embeddings": text.max_position_embeddings,
        "tie_word_embeddings": (config if nested else text).tie_word_embeddings,
        # LlamaConfig has no layer_types: every layer is full attention. GLM-5's "indexed_attention"
        # is full attention restricted by the indexer, which the indexer fields below describe.
        "layer_types": [t.replace("indexed_attention", "full_attention")
                        for t in (getattr(text, "layer_types", None) or ["full_attention"] * text.num_hidden_layers)],
        "rope_type": rope["rope_type"], "rope_theta": rope["rope_theta"],
        "partial_rotary_factor": rope.get("partial_rotary_factor", 1.0),
        "inv_freq": inv_freq, "attention_scaling": scaling,
        "eos_token_ids": [] if eos is None else (eos if isinstance(eos, list) else [eos]),
        "sliding_window": getattr(text, "sliding_window", None),
    }
    if rope["rope_type"] in ("yarn", "llama3"):
        expected["rope_factor"] = rope["factor"]
        expected["original_max_position_embeddings"] = rope["original_max_position_embeddings"]
    for key in ("linear_conv_kernel_dim", "linear_key_head_dim", "linear_value_head_dim", "linear_num_key_heads",
                "linear_num_value_heads", "num_experts", "num_experts_per_tok", "moe_intermediate_size",
                "shared_expert_intermediate_size", "decoder_sparse_step", "mlp_only_layers", "swiglu_limit",
                "swiglu_alpha", "mlp_bias", "attention_bias"):
        if hasattr(text, key):
            expected[key] = getattr(text, key)
    if hasattr(text, "kv_lora_rank"):  # multi-head latent attention (DeepSeek-V3, Kimi K2)
        expected.update(q_lora_rank=text.q_lora_rank or 0, kv_lora_rank=text.kv_lora_rank,
                        qk_nope_head_dim=text.qk_nope_head_dim, qk_rope_head_dim=text.qk_rope_head_dim,
                        v_head_dim=text.v_head_dim, rope_interleave=getattr(text, "rope_interleave", True))
    if hasattr(text, "indexer_types"):  # DeepSeek sparse attention (GLM-5)
        expected.update(index_topk=text.index_topk, index_head_dim=text.index_head_dim,
                        index_n_heads=text.index_n_heads, indexer_types=list(text.indexer_types))
    if hasattr(text, "n_routed_experts"):  # the DeepSeek-V3 line's experts (GLM-4.5, DeepSeek-V3)
        expected.update(num_experts=text.n_routed_experts,
                        shared_expert_intermediate_size=text.moe_intermediate_size * text.n_shared_experts,
                        mlp_only_layers=[i for i, t in enumerate(text.mlp_layer_types) if t == "dense"]
                        if hasattr(text, "mlp_layer_types") else
                        list(range(min(text.first_k_dense_replace, text.num_hidden_layers))),
                        n_group=text.n_group, topk_group=text.topk_group,
                        routed_scaling_factor=text.routed_scaling_factor, norm_topk_prob=text.norm_topk_prob,
                        use_qk_norm=getattr(text, "use_qk_norm", False))  # DeepSeek-V3 has none
    return expected


def z_lab_default_layer_ids(num_target_layers, num_draft_layers):
    """DFlash's default taps as z-lab/dflash computes them (Python round: half to even)."""
    if num_draft_layers == 1:
        return [num_target_layers // 2]
    start, end = 1, num_target_layers - 3
    return [int(round(start + (i * (end - start)) / (num_draft_layers - 1))) for i in range(num_draft_layers)]


def default_layer_id_cases():
    """Many (L, n) pairs, including .5 ties that half-to-even rounds down (L=10, n=5: 2.5 -> 2)."""
    pairs = [(L, n) for L in range(4, 97) for n in range(1, 13)]

    def rounds_down_on_tie(L, n):
        positions = [1 + Fraction(i * (L - 4), n - 1) for i in range(n)] if n > 1 else []
        return any(p.denominator == 2 and math.floor(p) % 2 == 0 for p in positions)

    assert sum(rounds_down_on_tie(L, n) for L, n in pairs) > 10, "the pairs must include .5 ties"
    return [{"target_layers": L, "draft_layers": n, "ids": z_lab_default_layer_ids(L, n)} for L, n in pairs]


def main():
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    expected = {}
    for name, config_dict in cases().items():
        case_dir = out_dir / name
        case_dir.mkdir(exist_ok=True)
        (case_dir / "config.json").write_text(json.dumps(config_dict, indent=2))
        expected[name] = expected_of(AutoConfig.from_pretrained(case_dir))
    (out_dir / "expected.json").write_text(json.dumps(expected, indent=1))
    refused = {}
    for name, (config_dict, reason) in REFUSED.items():
        (out_dir / name).mkdir(exist_ok=True)
        (out_dir / name / "config.json").write_text(json.dumps(config_dict, indent=2))
        refused[name] = reason
    (out_dir / "refused.json").write_text(json.dumps(refused, indent=1))
    (out_dir / "default_layer_ids.json").write_text(json.dumps(default_layer_id_cases()))
    print(f"wrote {len(expected)} config cases to {out_dir}")


if __name__ == "__main__":
    main()
