#!/usr/bin/env bash
# Runs every benchmark of a build and prints their JSON lines (one figure per line, each a
# ratio against a reference measured in the same run).
set -euo pipefail
build=${1:-build/release}
found=0
for b in "$build"/bench/bench_*; do
  [[ -x "$b" ]] || continue
  found=1
  "$b"
done
((found)) || echo "no benchmarks built under $build/bench" >&2
