"""A benchmark's smoke test (bench/CMakeLists.txt): runs it (at its tiny size, DFI_BENCH_SMOKE=1
in the environment) and fails unless it exits 0 and prints at least one figure, every stdout
line a JSON object naming its bench with a finite ratio against a reference (a key holding
"ratio", "speedup" or "_over_"), the contract bench/run_all.sh's readers rely on.

usage: check_smoke.py BENCHMARK [ARGS...]
"""
import json
import math
import subprocess
import sys

RATIO_WORDS = ("ratio", "speedup", "_over_")


def reject(constant):
    # Python reads NaN and Infinity, which are not JSON: a figure over a zero reference fails.
    raise ValueError(f"{constant} is not JSON")


def problem(line):
    try:
        figure = json.loads(line, parse_constant=reject)
    except ValueError as e:
        return f"not JSON ({e})"
    if not isinstance(figure, dict) or not isinstance(figure.get("bench"), str):
        return "not a JSON object with a \"bench\" name"
    has_ratio = any(any(w in k for w in RATIO_WORDS) and isinstance(v, (int, float)) and not isinstance(v, bool)
                    and math.isfinite(v) for k, v in figure.items())
    return None if has_ratio else "no numeric ratio against a reference"


def main():
    run = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, text=True)
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    print("\n".join(lines))
    failures = [f"exit status {run.returncode}"] if run.returncode != 0 else []
    failures += [f"line {i + 1}: {why}" for i, line in enumerate(lines) if (why := problem(line))]
    if not lines:
        failures.append("printed no figure")
    if failures:
        sys.exit("smoke run failed: " + "; ".join(failures))


if __name__ == "__main__":
    main()
