#!/usr/bin/env python3
"""Runs `dflash-eval forward` on an oracle fixture and compares its output file with the
transformers reference (gen_target_models.py): logits, taps, statistics, final hidden state.

With DEMO_TARGET (a model directory with a tokenizer and chat template), also runs
`forward --text ... --chat --no-thinking` and compares ids and logits with transformers run
on the same directory.

Usage: check_forward_cli.py DFLASH_EVAL FIXTURE_DIR OUT_FILE [DEMO_TARGET]
"""

import subprocess
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file


def main():
    exe, fixture, out = sys.argv[1:4]
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    ref = load_file(f"{fixture}/reference.safetensors")
    ids = ref["input_ids"][:64]
    subprocess.run([exe, "forward", "--model", fixture, "--ids", ",".join(map(str, ids.tolist())),
                    "--taps", "1,0", "--stats", "--out", out], check=True)
    got = load_file(out)
    checks = {"logits": ref["logits"][:64], "final_hidden": ref["hidden_states.4"][:64],
              "hidden.0": ref["hidden_states.1"][:64], "hidden.1": ref["hidden_states.2"][:64],
              "stats.0": ref["stats.0"][:64], "stats.1": ref["stats.1"][:64]}
    assert torch.equal(got["input_ids"], ids)
    for name, expected in checks.items():
        diff = (got[name].double() - expected.double()).abs().max().item()
        print(f"{name}: max abs diff {diff:.3g}")
        assert diff <= 1e-4, name
    # A bad request exits with the UsageError code and a message, not a crash.
    bad = subprocess.run([exe, "forward", "--model", fixture, "--ids", "5,100000", "--out", out],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "outside the vocabulary" in bad.stderr, (bad.returncode, bad.stderr)


def check_chat_text(exe, model_dir, out):
    from transformers import AutoModelForCausalLM, AutoTokenizer
    question = "What is 2+3?"
    subprocess.run([exe, "forward", "--model", model_dir, "--text", question, "--chat", "--no-thinking",
                    "--taps", "0", "--out", out], check=True)
    got = load_file(out)
    tok = AutoTokenizer.from_pretrained(model_dir)
    text = tok.apply_chat_template([{"role": "user", "content": question}], tokenize=False,
                                   add_generation_prompt=True, enable_thinking=False)
    ids = tok(text, return_tensors="pt").input_ids
    assert torch.equal(got["input_ids"], ids[0]), (got["input_ids"], ids)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    with torch.no_grad():
        logits = model(ids).logits[0]
    diff = (got["logits"].double() - logits.double()).abs().max().item()
    print(f"--text --chat: {ids.shape[1]} ids equal, logits max abs diff {diff:.3g}")
    assert diff <= 1e-4


if __name__ == "__main__":
    main()
    if len(sys.argv) > 4:
        check_chat_text(sys.argv[1], sys.argv[4], sys.argv[3])
