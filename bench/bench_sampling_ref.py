#!/usr/bin/env python3
"""Reference side of bench_sampling: z-lab's own dflash_generate (dflash 0.1.0) at a sampling
temperature on dense models it builds here (a Qwen3 target and a package drafter that taps it,
written to OUT_DIR for the engine to load), timed over the same prompts and budget the bench
gives the engine. --models tiny: the live-loop oracle's models (tests/oracle/
gen_dflash_package.py: width 32, vocabulary 16), where the loop's own overhead is the cost;
small: width 256, vocabulary 2048, where the models' arithmetic takes a good part of it.
Prints one JSON document: tokens generated, steps, seconds (best of --repeat passes), and the
mean acceptance length.

Usage: bench_sampling_ref.py OUT_DIR --models tiny|small --threads N --max-new-tokens M --repeat R --temperature T
"""

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "oracle"))
import dflash.model  # noqa: E402
import gen_dflash_package as fixtures  # noqa: E402
from transformers import Qwen3Config, Qwen3ForCausalLM  # noqa: E402

VOCAB = 2048
# Small enough for a CPU bench, large enough that the models' arithmetic, not Python alone,
# takes time: 4 target layers of width 256, a 2-layer drafter of block 16.
DRAFTER = dict(hidden=256, layers=2, heads=8, kv_heads=4, head_dim=32, inter=512, block=16,
               layer_types=["full_attention", "full_attention"], window=None,
               rope={"rope_type": "default", "rope_theta": 10000.0}, bias=False,
               target_layers=4, tap_ids=[1, 2], vocab=VOCAB)
PROMPTS = [[(7 * i + 3 * k) % (VOCAB - 1) for k in range(24 + 4 * i)] for i in range(6)]


def build_tiny(out):
    target = fixtures.live_target()
    drafter = fixtures.new_drafter(fixtures.LIVE_DRAFTER, torch.Generator().manual_seed(fixtures.SEED + 1))
    target.save_pretrained(out / "target", safe_serialization=True)
    drafter.save_pretrained(out / "drafter", safe_serialization=True)
    (out / "prompts.json").write_text(json.dumps(fixtures.LIVE_PROMPTS))
    return target, drafter, fixtures.LIVE_PROMPTS


def build_small(out):
    torch.manual_seed(fixtures.SEED)
    target = Qwen3ForCausalLM(Qwen3Config(
        vocab_size=VOCAB, hidden_size=256, intermediate_size=512, num_hidden_layers=4, num_attention_heads=8,
        num_key_value_heads=4, head_dim=32, max_position_embeddings=1024, rope_theta=10000.0,
        tie_word_embeddings=False)).eval()
    fixtures.randomize(target, torch.Generator().manual_seed(fixtures.SEED))
    drafter = fixtures.new_drafter(DRAFTER, torch.Generator().manual_seed(fixtures.SEED + 1))
    target.save_pretrained(out / "target", safe_serialization=True)
    drafter.save_pretrained(out / "drafter", safe_serialization=True)
    (out / "prompts.json").write_text(json.dumps(PROMPTS))
    return target, drafter, PROMPTS


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--models", choices=("tiny", "small"), default="tiny")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--temperature", type=float, default=1.0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    target, drafter, prompts = (build_tiny if args.models == "tiny" else build_small)(args.out)
    if not torch.cuda.is_available():  # acceptance_lengths come with return_stats' CUDA clock
        dflash.model._cuda_time = time.perf_counter
    best, tokens, lengths = None, 0, []
    with torch.inference_mode():
        for r in range(args.repeat):
            torch.manual_seed(r)
            start = time.perf_counter()
            pass_tokens, pass_lengths = 0, []
            for prompt in prompts:
                out = dflash.model.dflash_generate(drafter, target, torch.tensor([prompt]), args.max_new_tokens, None,
                                                   temperature=args.temperature, return_stats=True)
                pass_tokens += out.num_output_tokens
                pass_lengths += list(out.acceptance_lengths)
            seconds = time.perf_counter() - start
            if best is None or seconds < best:
                best, tokens, lengths = seconds, pass_tokens, pass_lengths
    print(json.dumps({"seconds": best, "tokens": tokens, "steps": len(lengths),
                      "mean_acceptance_length": sum(lengths) / len(lengths)}))


if __name__ == "__main__":
    main()
