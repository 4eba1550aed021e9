#!/usr/bin/env bash
# Decode step time on a GPU against the memory-bandwidth bound, for random Qwen3-8B-shaped and
# Qwen3.6-27B-shaped targets (bf16). Prepared for the device machine (one H200): builds the
# engine against that machine's own torch, writes the random checkpoints to a scratch folder
# and prints one JSON line per model with the measured step and the bound
# (weight bytes / peak bandwidth). A decode step must read every weight once, so
# bound_over_step is the fraction of peak bandwidth the step reaches.
#
#   bash bench/gpu.sh [SCRATCH_DIR]    (env: PYTHON, PEAK_BYTES_PER_S, LAYERS_27B)
#
# The 27B-shaped model keeps its real layer shapes with LAYERS_27B (default 16) of its 64
# layers, so it fits a 64 GB disk next to the 8B one; the bound uses the bytes actually loaded.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=${1:-/tmp/dfi-gpu-bench}
python=${PYTHON:-$(command -v python3)}
peak=${PEAK_BYTES_PER_S:-4.8e12}   # H200: 4.8 TB/s HBM3e
build="$root/build/gpu"

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDFI_BUILD_UI=OFF -DDFI_BUILD_FUZZ=OFF \
  -DBUILD_TESTING=OFF -DDFI_PYTHON="$python" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
grep -q "CUDA paths: ON" "$build.configure.log" || echo "warning: engine built without CUDA paths" >&2
cmake --build "$build" --target target_decode_gpu -j "$(nproc)" > /dev/null

mkdir -p "$scratch"
run() {
  "$build/bench/target_decode_gpu" --shape "$1" --dir "$scratch/$1" --layers "$2" --device cuda:0 --dtype bf16 |
    "$python" -c "
import json, sys
r = json.loads(sys.stdin.read())
r['bound_s'] = r['weight_bytes'] / $peak
r['bound_over_step'] = r['bound_s'] / r['median_step_s']
print(json.dumps(r))"
}
run qwen3-8b 36
run qwen3.6-27b "${LAYERS_27B:-16}"
