#!/usr/bin/env python3
"""`dflash-eval import` on records written by their real producer: z-lab's `dflash` package
(0.1.0) decoding the bundled demo (hybrid Qwen3.5-style target, drafter-good) with
dflash_generate, kept as its benchmark keeps them (the namespace dflash_generate(...,
return_stats=True) returns, one a line). transformers' cache crop does not restore the target's
Gated DeltaNet state (gen_dflash_package.py, crop_error), so the package's loop leaves the
target's greedy within a few tokens: every prompt must get exactly the target-side verdict. The
same loop with the target recomputed over the whole sequence instead of cropped
(gen_dflash_package.recomputed_generate) is lossless: no prompt may get it. Then `summary`
still tabulates the session with the imported runs in it.

Usage: check_import_cli.py DFLASH_EVAL DEMO_DIR WORK_DIR
"""

import json
import shutil
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

    summary = run(binary, "summary", session).stdout
    assert "zlab_cropped.jsonl" in summary and "zlab_recomputed.jsonl" in summary, summary
    print("import on the demo: ok")


if __name__ == "__main__":
    main()
