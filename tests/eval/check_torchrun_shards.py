"""Scale-out through the real launcher: `torchrun --nproc-per-node 2 --no-python dflash-eval run
... --shard auto` from the virtual environment, on CPU, on the demo models. Each rank reads its
RANK and WORLD_SIZE from torchrun and writes its own shard file; the two shards merged must hold
exactly the steps of the unsharded run (prompt, step, anchor, draft and target tokens, accepted
count, bonus) and summarise to the same figures.

Usage: check_torchrun_shards.py DFLASH_EVAL DEMO_DIR SCRATCH_DIR
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

LAUNCHER_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "SLURM_PROCID", "SLURM_NTASKS")
STEP_COLUMNS = "prompt_id, step_index, anchor_position, anchor_token, draft_tokens, target_tokens, accepted_count, bonus_token"


def evaluate(binary, demo, out, *extra, launcher=()):
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
    cmd = [*launcher, binary, "run", "--target", demo / "target", "--drafter", demo / "drafter-good",
           "--prompts", demo / "prompts.jsonl", "--limit", "6", "--max-new-tokens", "12", "--mode", "live",
           "--ddtree", "0", "--progress", "none", "--overwrite", "-o", out, *extra]
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")


def steps(session):
    db = sqlite3.connect(session)
    return sorted(db.execute(f"SELECT {STEP_COLUMNS} FROM steps").fetchall())


def figures(binary, session):
    out = subprocess.run([binary, "summary", str(session), "--json"], check=True, capture_output=True, text=True)
    return [{k: v for k, v in row.items() if k != "run_ids"} for row in json.loads(out.stdout)["rows"]]


def main():
    binary, demo, scratch = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    torchrun = Path(sys.executable).parent / "torchrun"

    whole = scratch / "whole.dfi"
    evaluate(binary, demo, whole)
    evaluate(binary, demo, scratch / "sharded.dfi", "--shard", "auto",
             launcher=(torchrun, "--nproc-per-node", "2", "--no-python"))
    parts = [scratch / f"sharded.shard-{rank}-of-2.dfi" for rank in (0, 1)]
    missing = [p.name for p in parts if not p.exists()]
    assert not missing, f"torchrun's ranks did not each write a shard: {missing} (found {sorted(os.listdir(scratch))})"
    for part in parts:
        assert steps(part), f"{part.name} holds no steps: a rank evaluated nothing"
    merged = scratch / "merged.dfi"
    subprocess.run([binary, "merge", *map(str, parts), "-o", str(merged)], check=True, capture_output=True)

    assert steps(merged) == steps(whole), "the merged shards' steps differ from the unsharded run's"
    assert figures(binary, merged) == figures(binary, whole), (figures(binary, merged), figures(binary, whole))
    print(f"torchrun, 2 ranks: {len(steps(merged))} steps over {len(parts)} shards, equal to the unsharded run")


if __name__ == "__main__":
    main()
