"""Reference for bench_checkpoint_open: the safetensors package opening every shard of a
checkpoint (index parsed, each shard's header read through safe_open, all names listed), the
work Checkpoint::open does. Prints one JSON object: the median time over the repeats and the
resident-memory growth of the first open.

Usage: bench_checkpoint_open_ref.py CHECKPOINT_DIR REPEATS
"""

import json
import statistics
import sys
import time
from pathlib import Path

from safetensors import safe_open


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def open_checkpoint(directory):
    index = json.loads((directory / "model.safetensors.index.json").read_text())
    handles = [safe_open(directory / shard, framework="pt") for shard in sorted(set(index["weight_map"].values()))]
    names = [name for handle in handles for name in handle.keys()]
    return handles, names


def main():
    directory, repeats = Path(sys.argv[1]), int(sys.argv[2])
    open_checkpoint(directory)  # the first safe_open imports torch; measure the opens after it
    before = resident_bytes()
    kept = open_checkpoint(directory)
    rss_delta = resident_bytes() - before
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        open_checkpoint(directory)
        times.append(time.perf_counter() - start)
    print(json.dumps({"median_ms": statistics.median(times) * 1e3, "rss_delta_bytes": rss_delta,
                      "tensors": len(kept[1])}))


if __name__ == "__main__":
    main()
