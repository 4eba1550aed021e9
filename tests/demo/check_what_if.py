#!/usr/bin/env python3
"""Holds `summary --what-if` against independent computations on a real demo run.

Usage: check_what_if.py DFLASH_EVAL DEMO_DIR WORK_DIR

The good demo drafter is evaluated teacher-forced at its trained block size (16) at every
second generated position, with DDTree-8 and --calibrate-cost. From the exported steps (not the
engine's analysis code) this script then computes:
- for every verify length v, the z-lab tau of min(accepted, v - 1) + 1: equal to the what-if's;
  v = 16 is also the teacher-forced run's own tau;
- for every DDTree budget, the tau of the tree built from each step's stored top-k by the
  independent Python DDTree of tests/oracle/gen_ddtree.py (written from the published
  algorithm), walked along the target's tokens: equal to the what-if's within 0.01 (the
  engine takes float32 logs of the stored probabilities, numpy's may differ by an ulp, which
  can reorder an exact tie); DDTree-8 is also the recorded DDTree-8 run's tau, exactly;
- each speedup from the recorded cost model, linear between its points:
  tau * T(1) / (drafter + T(verified)): equal to the what-if's.
The calibrated cost model must be in the session and exactly one row marked best.

What it does not claim: a drafter *run* at block size v drafts differently from the first v
tokens of its 16-slot blocks (its later mask slots are gone). On the demo, --block-size 4 and 8
at the same anchors measured tau 2.52 and 3.63 against 2.99 and 4.33 for verify 4 and 8,
outside the intervals; the what-ifs say so and label the rows as verify lengths.
"""
import json
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))
from gen_ddtree import build_tree  # noqa: E402  the independent DDTree

ANCHORS = "every:2"


def engine_json(engine, *args):
    return json.loads(subprocess.run([engine, *args], check=True, capture_output=True, text=True).stdout)


def zlab_tau(lengths_by_prompt):
    return sum(sum(v) / len(v) for v in lengths_by_prompt.values()) / len(lengths_by_prompt)


def tree_accepted(step, k, budget):
    slots = len(step["draft_tokens"])
    ids = [step["topk_ids"][s * k:(s + 1) * k] for s in range(slots)]
    lps = [[float(np.log(np.float32(p))) for p in step["topk_probs"][s * k:(s + 1) * k]] for s in range(slots)]
    tree, children = build_tree(ids, lps, budget, step["anchor_token"])
    cur, accepted = 0, 0
    for token in step["target_tokens"]:
        if token not in children[cur]:
            break
        cur = children[cur][token]
        accepted += 1
    return accepted


def target_ms(cost, tokens):
    points = sorted((int(n), ms) for n, ms in cost["target_ms"].items())
    if len(points) == 1:
        return points[0][1]
    upper = 1
    while upper + 1 < len(points) and points[upper][0] < tokens:
        upper += 1
    (n0, t0), (n1, t1) = points[upper - 1], points[upper]
    return max(0.0, t0 + (t1 - t0) / (n1 - n0) * (tokens - n0))


def main():
    engine, demo, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    session = work / "what_if.dfi"
    session.unlink(missing_ok=True)
    subprocess.run([engine, "run", "--target", str(demo / "target"), "--drafter", str(demo / "drafter-good"),
                    "--prompts", str(demo / "prompts.jsonl"), "--anchors", ANCHORS, "--no-parity", "--mode",
                    "teacher,ddtree", "--ddtree", "8", "--calibrate-cost", "--progress", "none", "-o", str(session)],
                   check=True, stdout=subprocess.DEVNULL)
    report = engine_json(engine, "summary", str(session), "--json", "--what-if")
    [what_if] = report["what_if"]
    rows = {r["setting"]: r for r in what_if["rows"]}
    cost = what_if["cost"]
    failures = []
    if cost is None or not cost["source"].startswith("calibrated in run"):
        failures.append(f"no calibrated cost model in the session: {cost}")
    if sum(r["best"] for r in rows.values()) != 1:
        failures.append("not exactly one best row")

    runs = {r["run_id"]: r for r in engine_json(engine, "export", "--session", str(session), "--format", "json",
                                                "--what", "runs")}
    steps = engine_json(engine, "export", "--session", str(session), "--format", "json", "--what", "steps")
    teacher = [s for s in steps if s["mode"] == "teacher-forced"]
    ddtree = [s for s in steps if s["mode"] == "ddtree"]
    [tf_run] = {s["run_id"] for s in teacher}
    block, k = runs[tf_run]["block_size"], runs[tf_run]["top_k"]

    def check(name, expected, tolerance=1e-9):
        got = rows[name]["tau"]["estimate"]
        print(f"{name:10s} what-if {got:.4f}, independent {expected:.4f}")
        if abs(got - expected) > tolerance:
            failures.append(f"{name}: what-if tau {got} but {expected} computed from the steps")
        if cost is not None:
            verified = rows[name]["verified_tokens"]
            speedup = got * target_ms(cost, 1) / (cost["drafter_ms"] + target_ms(cost, verified))
            if abs(rows[name]["speedup"]["estimate"] - speedup) > 1e-9 * max(1.0, speedup):
                failures.append(f"{name}: speedup {rows[name]['speedup']['estimate']}, the cost model gives {speedup}")

    for v in range(2, block + 1):
        by_prompt = defaultdict(list)
        for s in teacher:
            by_prompt[s["prompt_id"]].append(min(s["accepted_count"], v - 1) + 1)
        check(f"verify {v}", zlab_tau(by_prompt))
    by_prompt = defaultdict(list)
    for s in ddtree:
        by_prompt[s["prompt_id"]].append(s["accepted_count"] + 1)
    recorded_tree = zlab_tau(by_prompt)
    check("ddtree-8", recorded_tree)
    for name in rows:
        if not name.startswith("ddtree-"):
            continue
        budget = int(name.split("-")[1])
        by_prompt = defaultdict(list)
        for s in teacher:
            by_prompt[s["prompt_id"]].append(tree_accepted(s, k, budget) + 1)
        check(name, zlab_tau(by_prompt), tolerance=0.01)
    teacher_row = [r for r in report["rows"] if r["mode"] == "teacher-forced"][0]
    if not math.isclose(teacher_row["tau_reference"], rows[f"verify {block}"]["tau"]["estimate"], abs_tol=1e-9):
        failures.append("verify B differs from the teacher-forced run's own tau")

    print(f"best: {[n for n, r in rows.items() if r['best']]} under {cost['source'] if cost else 'no cost'}")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
