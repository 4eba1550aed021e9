"""Loads the files the C++ SafetensorsWriter wrote (test_safetensors_oracle) with the
reference `safetensors` package and checks them against what C++ meant to write.

DIR/expected.json (written by the C++ test) maps each file to its metadata and tensors: dtype
name, shape and the SHA-256 of the bytes C++ passed in. Some tensors also carry known values,
checked here by value (so byte order and dtype semantics are verified, not only bytes).

Usage: check_cpp_safetensors.py DIR    (exit status 1 and a message per mismatch)
"""

import hashlib
import json
import sys
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file

KNOWN_VALUES = {
    "f32.arange": lambda: torch.arange(6, dtype=torch.float32).reshape(2, 3) * 0.25,
    "i64.negative": lambda: -torch.arange(5, dtype=torch.int64) * 1_000_000_000_000,
    "bf16.halves": lambda: torch.tensor([0.5, -1.5, 2.5, 65280.0], dtype=torch.bfloat16),
    "bool.alternating": lambda: torch.arange(7) % 2 == 0,
    "f8_e4m3.powers": lambda: torch.tensor([1.0, 2.0, 0.25, -448.0], dtype=torch.float8_e4m3fn),
}


def main():
    directory = Path(sys.argv[1])
    expected = json.loads((directory / "expected.json").read_text())
    problems = []
    for file, want in expected.items():
        path = directory / file
        loaded = load_file(path)
        with safe_open(path, framework="pt") as f:
            if (f.metadata() or {}) != want["metadata"]:
                problems.append(f"{file}: metadata {f.metadata()} != {want['metadata']}")
            if set(f.keys()) != set(want["tensors"]):
                problems.append(f"{file}: tensors {sorted(f.keys())} != {sorted(want['tensors'])}")
            for name, entry in want["tensors"].items():
                if name not in loaded:
                    continue
                tensor = loaded[name]
                got = {"dtype": f.get_slice(name).get_dtype(), "shape": list(tensor.shape),
                       "sha256": hashlib.sha256(
                           tensor.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()).hexdigest()}
                for key, value in got.items():
                    if value != entry[key]:
                        problems.append(f"{file}: {name}: {key} {value} != {entry[key]}")
                if name in KNOWN_VALUES:
                    reference = KNOWN_VALUES[name]()
                    if tensor.dtype != reference.dtype or not torch.equal(tensor.float(), reference.float()):
                        problems.append(f"{file}: {name}: values {tensor} != {reference}")
    written = {name for want in expected.values() for name in want["tensors"]}
    problems += [f"no tensor {name} was written" for name in sorted(set(KNOWN_VALUES) - written)]
    for problem in problems:
        print(problem)
    checked = sum(len(want["tensors"]) for want in expected.values())
    print(f"checked {checked} tensors in {len(expected)} files: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
