#!/usr/bin/env python3
"""Fixtures of the vLLM and SGLang record formats `dflash-eval import` reads, written from each
producer's own definitions (neither server runs here: no GPU and no network), with the per-step
acceptance lengths they summarise in expected.json so the C++ test checks the reading, not a copy.

vllm.jsonl: vLLM's offline LLM.generate() RequestOutput (vllm/outputs.py, V0 engine, vLLM
0.8-0.9; 0.10 dropped spec_token_acceptance_counts) as vars() with nested objects as dicts: request_id, prompt, prompt_token_ids,
prompt_logprobs, outputs [CompletionOutput: index, text, token_ids, cumulative_logprob, logprobs,
finish_reason, stop_reason, lora_request], finished, metrics [RequestMetrics, vllm/sequence.py:
arrival_time, last_token_time, first_scheduled_time, first_token_time, time_in_queue,
finished_time, scheduler_time, model_forward_time, model_execute_time,
spec_token_acceptance_counts], lora_request, encoder_prompt, encoder_prompt_token_ids,
num_cached_tokens, multi_modal_placeholders. spec_token_acceptance_counts[k] counts the verify
steps that accepted at least k drafts ([0]: every step; vLLM's benchmarks take
sum(counts) / counts[0] as the mean acceptance length).

sglang.jsonl: SGLang's native /generate response (sglang/srt/managers/tokenizer_manager.py):
text, output_ids, meta_info {id, finish_reason, prompt_tokens, completion_tokens, cached_tokens,
e2e_latency, spec_verify_ct, spec_accept_length, spec_accept_rate, spec_accept_token_num,
spec_draft_token_num, spec_accept_histogram}; spec_accept_histogram[n] counts the request's
verify steps that accepted exactly n drafts, spec_accept_length = completion_tokens /
spec_verify_ct. One field a newer release adds (weight_version) is left in, to be reported.

Usage: gen_import_fixtures.py OUT_DIR
"""

import json
import random
import sys
from pathlib import Path

BLOCK = 8
PROMPTS = [[5, 6, 7], [9, 10], [11, 12, 13, 14]]


def steps(rng, count):
    return [rng.randint(1, BLOCK) for _ in range(count)]


def vllm_request(i, prompt, lengths, rng):
    generated = [rng.randrange(100, 200) for _ in range(1 + sum(lengths))]
    at_least = [sum(1 for n in lengths if n - 1 >= k) for k in range(BLOCK)]
    return {
        "request_id": str(i), "prompt": None, "prompt_token_ids": prompt, "prompt_logprobs": None,
        "outputs": [{"index": 0, "text": "", "token_ids": generated, "cumulative_logprob": None, "logprobs": None,
                     "finish_reason": "length", "stop_reason": None, "lora_request": None}],
        "finished": True,
        "metrics": {"arrival_time": 1.0, "last_token_time": 2.0, "first_scheduled_time": 1.0,
                    "first_token_time": 1.5, "time_in_queue": 0.0, "finished_time": 2.0, "scheduler_time": 0.01,
                    "model_forward_time": None, "model_execute_time": None,
                    "spec_token_acceptance_counts": at_least},
        "lora_request": None, "encoder_prompt": None, "encoder_prompt_token_ids": None,
        "num_cached_tokens": 0, "multi_modal_placeholders": {},
    }


def sglang_response(lengths, rng):
    generated = [rng.randrange(100, 200) for _ in range(1 + sum(lengths))]
    histogram = [sum(1 for n in lengths if n - 1 == k) for k in range(BLOCK)]
    accepted = sum(n - 1 for n in lengths)
    return {
        "text": "", "output_ids": generated,
        "meta_info": {"id": f"req-{rng.randrange(10**6)}", "finish_reason": {"type": "length", "length": len(generated)},
                      "prompt_tokens": 3, "completion_tokens": len(generated), "cached_tokens": 0,
                      "e2e_latency": 0.5, "spec_verify_ct": len(lengths),
                      "spec_accept_length": len(generated) / len(lengths),
                      "spec_accept_rate": accepted / (len(lengths) * (BLOCK - 1)),
                      "spec_accept_token_num": accepted, "spec_draft_token_num": len(lengths) * (BLOCK - 1),
                      "spec_accept_histogram": histogram, "weight_version": "default"},
    }


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    lengths = [steps(rng, n) for n in (5, 3, 7)]
    (out / "vllm.jsonl").write_text(
        "".join(json.dumps(vllm_request(i, p, l, rng)) + "\n" for i, (p, l) in enumerate(zip(PROMPTS, lengths))))
    (out / "sglang.jsonl").write_text("".join(json.dumps(sglang_response(l, rng)) + "\n" for l in lengths))
    (out / "expected.json").write_text(json.dumps({"block_size": BLOCK, "prompts": PROMPTS, "lengths": lengths}))
    print(f"import fixtures: {len(lengths)} requests of {[len(l) for l in lengths]} steps in {out}")


if __name__ == "__main__":
    main()
