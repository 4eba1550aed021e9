#!/usr/bin/env python3
"""Last step of train_all.sh: OUT/provenance.json from the training logs in WORK (step
times, losses, held-out teacher-forced acceptance, file sizes)."""

import json
import sys

import common
from corpus import STDLIB


def main():
    prov = {"corpus": f"Python {sys.version.split()[0]} standard library sources ({STDLIB})",
            "scripts": "tools/demo/train_all.sh", "seconds": {}, "steps": {}}
    times = common.WORK / "times.txt"
    if times.exists():
        for line in times.read_text().split("\n"):
            if line.strip():
                name, s = line.split()
                prov["seconds"][name] = int(s)
    for name in ("target_train", "gen_data", "drafter-good", "drafter-anchor-visible"):
        f = common.WORK / f"{name}.json"
        if f.exists():
            prov["steps"][name] = json.loads(f.read_text())
    prov["bytes"] = {str(p.relative_to(common.OUT)): p.stat().st_size
                     for p in sorted(common.OUT.rglob("*")) if p.is_file()}
    prov["total_bytes"] = sum(prov["bytes"].values())
    common.write_json(common.OUT / "provenance.json", prov)
    print(json.dumps(prov["seconds"]), prov["total_bytes"], "bytes")


if __name__ == "__main__":
    main()
