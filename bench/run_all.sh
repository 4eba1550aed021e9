#!/usr/bin/env bash
# Runs every benchmark of a build and prints their JSON lines (one figure per line, each a
# ratio against a reference measured in the same run). A benchmark that fails does not stop
# the ones after it; the run then names it and exits non-zero.
set -uo pipefail
build=${1:-build/release}
found=0
failed=()
for b in "$build"/bench/bench_*; do
  [[ -f "$b" && -x "$b" ]] || continue
  found=1
  "$b" || failed+=("$(basename "$b")")
done
((found)) || { echo "no benchmarks built under $build/bench" >&2; exit 1; }
((${#failed[@]} == 0)) || { echo "failed: ${failed[*]}" >&2; exit 1; }
