#!/usr/bin/env python3
"""Runs `dflash-eval forward` on an oracle fixture and compares its output file with the
transformers reference (gen_target_models.py): logits, taps, statistics, final hidden state.

Usage: check_forward_cli.py DFLASH_EVAL FIXTURE_DIR OUT_FILE
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


if __name__ == "__main__":
    main()
