#!/usr/bin/env python3
"""`dflash-eval import` on records written by their real producer: z-lab's `dflash` package
(0.1.0) decoding the bundled demo (hybrid Qwen3.5-style target, drafter-good) with
dflash_generate, kept as its benchmark keeps them (the namespace dflash_generate(...,
return_stats=True) returns, one a line). transformers' cache crop does not restore the target's
Gated DeltaNet state (gen_dflash_package.py, crop_error), so the package's loop leaves the
target's greedy within a few tokens: every prompt must get exactly the target-side verdict. The
same loop with the target recomputed over the whole sequence instead of cropped
(gen_dflash_package.recomputed_generate) is lossless: no prompt may get it. The cropped records
rewritten in the JSONL, vLLM and SGLang formats get the same verdicts; a malformed line is refused
by file and line with the session unchanged; `summary` tabulates the session with the imports.

Usage: check_import_cli.py DFLASH_EVAL DEMO_DIR WORK_DIR
"""

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import dflash.model
import torch
from dflash.model import DFlashDraftModel, dflash_generate
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM

sys.path.insert(0, str(Path(__file__).parent))
import gen_dflash_package as fixtures  # noqa: E402

PROMPTS = ["def fizzbuzz(n):", "def gcd(a, b):", "def is_prime(n):"]
BLOCK, MAX_NEW = 16, 24


def zlab_record(ids, prompt_length, lengths):
    """One line of the benchmark's records: dflash_generate's namespace, tensors as lists."""
    return {"output_ids": ids, "num_input_tokens": prompt_length, "num_output_tokens": len(ids) - prompt_length,
            "time_to_first_token": 0.0, "time_per_output_token": 0.0, "acceptance_lengths": lengths}


def split(record):
    n = record["num_input_tokens"]
    return record["output_ids"][:n], record["output_ids"][n:], record["acceptance_lengths"]


def jsonl_record(prompt_id, record):
    """The documented JSONL (README, "Importing other pipelines")."""
    _, generated, lengths = split(record)
    return {"format_version": 1, "prompt_id": prompt_id, "output_ids": generated, "acceptance_lengths": lengths,
            "block_size": BLOCK}


def vllm_record(prompt_id, record):
    """vLLM's RequestOutput with the V0 engine's per-request counts (gen_import_fixtures.py)."""
    prompt, generated, lengths = split(record)
    return {"request_id": str(prompt_id), "prompt": None, "prompt_token_ids": prompt, "prompt_logprobs": None,
            "outputs": [{"index": 0, "text": "", "token_ids": generated, "cumulative_logprob": None, "logprobs": None,
                         "finish_reason": "stop", "stop_reason": None, "lora_request": None}],
            "finished": True,
            "metrics": {"arrival_time": 0.0, "last_token_time": 0.0, "first_scheduled_time": 0.0,
                        "first_token_time": 0.0, "time_in_queue": 0.0, "finished_time": 0.0,
                        "spec_token_acceptance_counts": [sum(1 for n in lengths if n - 1 >= k) for k in range(BLOCK)]}}


def sglang_record(record):
    """SGLang's /generate response with its per-request histogram (gen_import_fixtures.py)."""
    _, generated, lengths = split(record)
    return {"text": "", "output_ids": generated,
            "meta_info": {"completion_tokens": len(generated), "spec_verify_ct": len(lengths),
                          "spec_accept_histogram": [sum(1 for n in lengths if n - 1 == k) for k in range(BLOCK)]}}


def write_records(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def run(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{args[0]} failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    return p


def main():
    binary, demo, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    # The package's stats clock synchronises CUDA; without a GPU, the host's (timing only).
    if not torch.cuda.is_available():
        dflash.model._cuda_time = time.perf_counter
    # The prompts as the demo was trained on them (the engine's chat template, thinking off), given
    # to both sides as token ids; the stop tokens are the engine's: the target's eos and the
    # tokenizer's end-of-turn and end-of-text tokens.
    prompts = [json.loads(run(binary, "tokenize", "--tokenizer", str(demo / "target"), "--text", p, "--chat",
                              "--no-thinking").stdout)["ids"] for p in PROMPTS]
    (work / "prompts.jsonl").write_text("".join(json.dumps({"ids": ids}) + "\n" for ids in prompts))
    tokenizer = Tokenizer.from_file(str(demo / "target" / "tokenizer.json"))
    stops = [json.loads((demo / "target" / "generation_config.json").read_text())["eos_token_id"]]
    stops += [tokenizer.token_to_id(t) for t in ("<|im_end|>", "<|endoftext|>")]

    target = AutoModelForCausalLM.from_pretrained(demo / "target", dtype=torch.float32).eval()
    drafter = DFlashDraftModel.from_pretrained(demo / "drafter-good", dtype=torch.float32).eval()
    cropped, recomputed = [], []
    with torch.no_grad():
        for ids in prompts:
            out = dflash_generate(drafter, target, torch.tensor([ids]), MAX_NEW, stops, block_size=BLOCK,
                                  return_stats=True)
            cropped.append(zlab_record(out.output_ids[0].tolist(), out.num_input_tokens, list(out.acceptance_lengths)))
            full, lengths = fixtures.recomputed_generate(drafter, target, ids, MAX_NEW, stops, BLOCK)
            recomputed.append(zlab_record(full, len(ids), lengths))
    write_records(work / "zlab_cropped.jsonl", cropped)
    write_records(work / "zlab_recomputed.jsonl", recomputed)

    session = str(work / "import.dfi")
    common = ["--session", session, "--block-size", str(BLOCK), "--max-new-tokens", str(MAX_NEW), "--json"]
    first = json.loads(run(binary, "import", "--format", "zlab", str(work / "zlab_cropped.jsonl"), *common,
                           "--target", str(demo / "target"), "--drafter", str(demo / "drafter-good"),
                           "--prompts", str(work / "prompts.jsonl"), "--no-chat").stdout)
    verdicts = [p["verdict"] for p in first["prompts"]]
    assert verdicts == ["target-side"] * len(PROMPTS), f"the package's cropped loop: {first['prompts']}"
    assert all(p["lossless"] is False for p in first["prompts"])
    tokens = [p["first_token"] for p in first["prompts"]]
    assert first["verdicts"]["target-side"] == len(PROMPTS) and first["diverging_share"] == 1.0
    print(f"cropped loop: target-side on {len(PROMPTS)} prompts, first divergent tokens {tokens}, "
          f"tau {first['tau_imported']['estimate']:.3f} against the reference's {first['tau_reference']['estimate']:.3f}")

    # The reference is found in the session now; the lossless loop leaves the target's greedy nowhere.
    second = json.loads(run(binary, "import", "--format", "zlab", str(work / "zlab_recomputed.jsonl"), *common).stdout)
    assert second["reference_run"] == first["reference_run"]
    for p in second["prompts"]:
        assert p["lossless"] is True and p["verdict"] != "target-side", f"the recomputed loop: {p}"
    print(f"recomputed loop: verdicts {second['verdicts']}, tau {second['tau_imported']['estimate']:.3f} "
          f"(difference {second['tau_difference']['estimate']:+.3f})")

    # The same records in the other formats (vLLM's and SGLang's keep per-request counts only, as
    # gen_import_fixtures.py describes): the same verdicts and first divergent tokens; the step
    # where the acceptance first differs only where the step order is recorded.
    for fmt, records in (("jsonl", [jsonl_record(i, r) for i, r in enumerate(cropped)]),
                         ("vllm", [vllm_record(i, r) for i, r in enumerate(cropped)]),
                         ("sglang", [sglang_record(r) for r in cropped])):
        write_records(work / f"cropped.{fmt}.jsonl", records)
        other = json.loads(run(binary, "import", "--format", fmt, str(work / f"cropped.{fmt}.jsonl"), *common).stdout)
        assert [p["verdict"] for p in other["prompts"]] == verdicts, (fmt, other["prompts"])
        assert [p["first_token"] for p in other["prompts"]] == tokens, (fmt, other["prompts"])
        steps = [p["first_step"] for p in other["prompts"]]
        assert steps == ([p["first_step"] for p in first["prompts"]] if fmt == "jsonl" else [None] * len(PROMPTS)), fmt
        assert abs(other["tau_imported"]["estimate"] - first["tau_imported"]["estimate"]) < 1e-12, fmt
    print("jsonl, vllm and sglang forms of the same records: the same verdicts and tau")

    # A malformed line is refused by file and line, and the session keeps what it had.
    runs_before = sqlite3.connect(session).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    bad = work / "bad.jsonl"
    bad.write_text(json.dumps(jsonl_record(0, cropped[0])) + "\n" + '{"prompt_id": 1, "acceptance_lengths": [1,\n')
    p = subprocess.run([binary, "import", "--format", "jsonl", str(bad), "--session", session], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 4 and f"{bad}: line 2" in p.stderr, (p.returncode, p.stderr)
    assert sqlite3.connect(session).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == runs_before

    summary = run(binary, "summary", session).stdout
    assert "zlab_cropped.jsonl" in summary and "zlab_recomputed.jsonl" in summary, summary
    print("import on the demo: ok")


if __name__ == "__main__":
    main()
