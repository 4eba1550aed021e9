#!/usr/bin/env python3
"""Last step of train_all.sh: OUT/provenance.json from the training logs in WORK (step
times, losses, held-out teacher-forced acceptance, sizes of the files made). A stage with no log in WORK
keeps its entry of the existing provenance.json, so that a stage re-run alone (one drafter
added) is recorded without dropping the others."""

import json
import sys

import common
from corpus import STDLIB


def main():
    old = common.OUT / "provenance.json"
    old = json.loads(old.read_text()) if old.exists() else {}
    prov = {"corpus": f"Python {sys.version.split()[0]} standard library sources ({STDLIB})",
            "scripts": "tools/demo/train_all.sh", "seconds": old.get("seconds", {}),
            "steps": old.get("steps", {})}
    times = common.WORK / "times.txt"
    if times.exists():
        for line in times.read_text().split("\n"):
            if line.strip():
                name, s = line.split()
                prov["seconds"][name] = int(s)
    for name in ("target_train", "gen_data", "drafter-good", "drafter-anchor-visible", "drafter-tap-shifted",
                 "drafter-speculators-reduced", "drafter-dspark"):
        f = common.WORK / f"{name}.json"
        if f.exists():
            prov["steps"][name] = json.loads(f.read_text())
    # The files the build makes; not the records about them (this file, whose size would be its
    # previous version's, the README and the tau the evaluation measured).
    records = {"provenance.json", "README.md", "expected_tau.json"}
    prov["bytes"] = {str(p.relative_to(common.OUT)): p.stat().st_size
                     for p in sorted(common.OUT.rglob("*")) if p.is_file() and p.name not in records}
    prov["total_bytes"] = sum(prov["bytes"].values())
    common.write_json(common.OUT / "provenance.json", prov)
    print(json.dumps(prov["seconds"]), prov["total_bytes"], "bytes")


if __name__ == "__main__":
    main()
