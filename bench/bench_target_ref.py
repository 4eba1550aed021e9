"""Reference side of bench_target: Hugging Face transformers on the same random ~100M-parameter
checkpoints of each family (Qwen3, Qwen3.5; MiniMax-M2, DeepSeek-V3 and GLM-5 with their experts),
the same token ids, the same thread count. ARCHS is the list both sides run.

Writes each checkpoint (config.json + 100 MB safetensors shards) under --data-dir the first time (with
--tiny, the bench's smoke run: models ~400 times smaller in as many shards), then
prints one JSON object: {"<arch>": {"<dtype>": {"prefill_s": .., "decode_s": ..}}} where
prefill_s is the best time of a --prefill-token forward with a fresh cache, and decode_s the
best time of --decode greedy one-token steps after it (the argmax fed back, as in generation).
"""
import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # keep stderr for errors
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch
from transformers import (DeepseekV3Config, DeepseekV3ForCausalLM, GlmMoeDsaConfig, GlmMoeDsaForCausalLM,
                          MiniMaxM2Config, MiniMaxM2ForCausalLM, Qwen3Config, Qwen3ForCausalLM, Qwen3_5ForCausalLM,
                          Qwen3_5TextConfig)

# Both architectures' sizes, and the smoke run's.
SIZES = {"bench": dict(hidden_size=768, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=12,
                       num_key_value_heads=4, head_dim=64),
         "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16)}
LINEAR_SIZES = {"bench": dict(linear_key_head_dim=64, linear_value_head_dim=64, linear_num_key_heads=8,
                              linear_num_value_heads=16),
                "tiny": dict(linear_key_head_dim=16, linear_value_head_dim=16, linear_num_key_heads=2,
                             linear_num_value_heads=4)}
SHARD_SIZE = {"bench": "100MB", "tiny": "256KB"}


def qwen3_config(vocab, size):
    return Qwen3Config(vocab_size=vocab, **SIZES[size], max_position_embeddings=4096, tie_word_embeddings=True)


def qwen35_config(vocab, size):
    # Every fourth layer full attention (the Qwen3.5 interval rule), the rest Gated DeltaNet.
    return Qwen3_5TextConfig(vocab_size=vocab, **SIZES[size], **LINEAR_SIZES[size], linear_conv_kernel_dim=4,
                             max_position_embeddings=4096, tie_word_embeddings=True)


# The mixture-of-experts families: 8 experts of 512 (32 in the smoke run), 2 routed per token.
EXPERTS = {"bench": dict(moe_intermediate_size=512), "tiny": dict(moe_intermediate_size=32)}
# Multi-head latent attention at the bench's width (DeepSeek-V3's proportions, halved), and the smoke run's.
LATENT = {"bench": dict(q_lora_rank=384, kv_lora_rank=256, qk_nope_head_dim=64, qk_rope_head_dim=32, v_head_dim=64),
          "tiny": dict(q_lora_rank=32, kv_lora_rank=16, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=16)}


def minimax_m2_config(vocab, size):
    dims = SIZES[size]
    return MiniMaxM2Config(vocab_size=vocab, **{k: v for k, v in dims.items() if k != "intermediate_size"},
                           intermediate_size=EXPERTS[size]["moe_intermediate_size"], rotary_dim=dims["head_dim"] // 2,
                           num_local_experts=8, num_experts_per_tok=2, max_position_embeddings=4096,
                           tie_word_embeddings=True, bos_token_id=None, eos_token_id=None)  # its ids: a 200k vocabulary


def latent_moe(size):
    dims = dict(SIZES[size], num_key_value_heads=SIZES[size]["num_attention_heads"])
    del dims["head_dim"]
    return dict(dims, **LATENT[size], **EXPERTS[size], n_routed_experts=8, num_experts_per_tok=2, n_group=1,
                topk_group=1, n_shared_experts=1, first_k_dense_replace=1, max_position_embeddings=4096,
                tie_word_embeddings=True, rope_parameters={"rope_type": "default", "rope_theta": 10000.0})


def deepseek_v3_config(vocab, size):
    return DeepseekV3Config(vocab_size=vocab, **latent_moe(size))


def glm5_config(vocab, size):
    # The indexer keeps half of the bench's prefill: sparse attention, not a formality.
    return GlmMoeDsaConfig(vocab_size=vocab, **latent_moe(size), index_topk=128 if size == "bench" else 8,
                           index_head_dim=64 if size == "bench" else 16, index_n_heads=8 if size == "bench" else 2)


ARCHS = {"qwen3": (qwen3_config, Qwen3ForCausalLM), "qwen35": (qwen35_config, Qwen3_5ForCausalLM),
         "minimax_m2": (minimax_m2_config, MiniMaxM2ForCausalLM),
         "deepseek_v3": (deepseek_v3_config, DeepseekV3ForCausalLM), "glm5": (glm5_config, GlmMoeDsaForCausalLM)}


def bench_ids(n, vocab):
    """The same ids bench_target.cpp uses: a fixed walk over the vocabulary."""
    return torch.tensor([[(7919 * i + 13) % vocab for i in range(n)]], dtype=torch.long)


def ensure_checkpoint(directory: Path, arch: str, vocab: int, size: str):
    make_config, cls = ARCHS[arch]
    if not (directory / "model.safetensors.index.json").exists():
        torch.manual_seed(0)
        # Sharded like real checkpoints, so the C++ side can weigh its load against a shard.
        cls(make_config(vocab, size)).save_pretrained(directory, safe_serialization=True,
                                                      max_shard_size=SHARD_SIZE[size])
    return cls.from_pretrained(directory, torch_dtype=torch.float32).eval()


@torch.inference_mode()
def measure(model, prefill, decode, repeat, vocab):
    ids = bench_ids(prefill, vocab)
    best_prefill = best_decode = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = model(input_ids=ids, use_cache=True)
        best_prefill = min(best_prefill, time.perf_counter() - start)
        cache, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
        start = time.perf_counter()
        for _ in range(decode):
            out = model(input_ids=token, past_key_values=cache, use_cache=True)
            cache, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
        best_decode = min(best_decode, time.perf_counter() - start)
    return {"prefill_s": best_prefill, "decode_s": best_decode}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--prefill", type=int, default=256)
    parser.add_argument("--decode", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--dtypes", default="fp32,bf16")
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--tiny", action="store_true", help="the smoke run's models")
    args = parser.parse_args()
    size = "tiny" if args.tiny else "bench"
    torch.set_num_threads(args.threads)
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16}
    result = {}
    for arch in ARCHS:
        model = ensure_checkpoint(args.data_dir / f"bench_{arch}", arch, args.vocab, size)
        result[arch] = {}
        for name in args.dtypes.split(","):
            model = model.to(dtypes[name])
            result[arch][name] = measure(model, args.prefill, args.decode, args.repeat, args.vocab)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
