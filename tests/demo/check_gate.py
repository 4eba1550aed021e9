#!/usr/bin/env python3
"""Holds `run --require` and `dflash-eval gate` to what a training pipeline's CI needs.

Usage: check_gate.py DFLASH_EVAL DEMO_DIR WORK_DIR

The good and the early demo drafters are evaluated live and teacher-forced on the first 12
prompts with two pass bars given to `run --require`. Then:
- the bars are recorded in the session: `gate` with no --require checks them, exit code 0;
- every measured value equals an independent computation from the exported steps: a
  teacher-forced tau is the z-lab mean over prompts of the mean accepted length + 1, a paired
  difference the mean over prompts of the two drafters' per-prompt taus' difference; each
  interval is the summary's own (`summary --json`) and contains its estimate;
- a selector without a mode takes the live run, one with a prompt set narrows to it;
- a bar just above a value fails with exit code 6; a bar between the interval's low end and
  the estimate passes, is marked within noise, and fails under --strict;
- an unknown drafter fails naming the session's drafters, an unknown mode or variant naming
  itself; a malformed bar is refused with exit code 2 before anything runs, naming the bar.
"""
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

GOOD, EARLY = "drafter-good", "drafter-early"


def gate(engine, session, *bars, strict=False):
    args = [engine, "gate", str(session), "--json"] + [a for bar in bars for a in ("--require", bar)]
    if strict:
        args.append("--strict")
    done = subprocess.run(args, capture_output=True, text=True)
    return done.returncode, (json.loads(done.stdout) if done.stdout.strip() else None), done.stderr


def engine_json(engine, *args):
    return json.loads(subprocess.run([engine, *args], check=True, capture_output=True, text=True).stdout)


def main():
    engine, demo, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    session = work / "gate.dfi"
    session.unlink(missing_ok=True)
    recorded = [f"tau({GOOD}, teacher-forced) >= 1.5", f"paired({GOOD}, teacher-forced - {EARLY}, teacher-forced) > -5"]
    run = [engine, "run", "--target", str(demo / "target"), "--drafter", str(demo / GOOD), "--drafter",
           str(demo / EARLY), "--prompts", str(demo / "prompts.jsonl"), "--limit", "12", "--max-new-tokens", "48",
           "--mode", "both", "--ddtree", "0", "--no-parity", "--progress", "none", "-o", str(session)]
    failures = []

    # A malformed bar is refused before the evaluation (no session is written).
    bad = subprocess.run(run + ["--require", "tau(drafter-good) => 4"], capture_output=True, text=True)
    if bad.returncode != 2 or "tau(drafter-good) => 4" not in bad.stderr or session.exists():
        failures.append(f"malformed bar: exit {bad.returncode}, {bad.stderr.strip()!r}, session written: {session.exists()}")

    done = subprocess.run(run + [a for bar in recorded for a in ("--require", bar)], capture_output=True, text=True)
    print(done.stdout)
    if done.returncode != 0 or "2 of 2 pass bars met" not in done.stdout:
        failures.append(f"run --require: exit {done.returncode}, {done.stdout[-300:]!r} {done.stderr[-300:]!r}")

    code, result, _ = gate(engine, session)
    if code != 0 or [b["bar"] for b in result["bars"]] != recorded:
        failures.append(f"recorded bars: exit {code}, {result}")

    # Independent values from the exported steps.
    steps = engine_json(engine, "export", "--session", str(session), "--format", "json", "--what", "steps")
    runs = {r["run_id"]: r for r in engine_json(engine, "export", "--session", str(session), "--format", "json",
                                                "--what", "runs")}
    per_prompt = defaultdict(lambda: defaultdict(list))  # drafter -> prompt -> accepted lengths
    for s in steps:
        if s["mode"] == "teacher-forced":
            drafter = Path(runs[s["run_id"]]["drafter_path"]).name
            per_prompt[drafter][s["prompt_id"]].append(s["accepted_count"] + 1)
    prompt_tau = {d: {p: sum(v) / len(v) for p, v in by.items()} for d, by in per_prompt.items()}
    tau = {d: sum(t.values()) / len(t) for d, t in prompt_tau.items()}
    shared = sorted(set(prompt_tau[GOOD]) & set(prompt_tau[EARLY]))
    paired = sum(prompt_tau[GOOD][p] - prompt_tau[EARLY][p] for p in shared) / len(shared)

    summary = engine_json(engine, "summary", str(session), "--json")
    row = next(r for r in summary["rows"] if r["drafter"] == GOOD and r["mode"] == "teacher-forced")
    comparison = next(c for c in summary["comparisons"] if c["mode"] == "teacher-forced" and c["drafter"] == EARLY)

    def expect(bar, estimate, interval=None):
        if not (bar["measured"]["low"] <= bar["measured"]["estimate"] <= bar["measured"]["high"]):
            failures.append(f"{bar['bar']}: estimate outside its interval {bar['measured']}")
        if abs(bar["measured"]["estimate"] - estimate) > 1e-9:
            failures.append(f"{bar['bar']}: {bar['measured']['estimate']} but {estimate} from the steps")
        if interval and (bar["measured"]["low"], bar["measured"]["high"]) != interval:
            failures.append(f"{bar['bar']}: interval {bar['measured']} but the summary's is {interval}")
        print(f"{bar['bar']:60s} {bar['measured']['estimate']:.4f}, independent {estimate:.4f}")

    expect(result["bars"][0], tau[GOOD], tuple(row["tau_reference_ci95"]))
    expect(result["bars"][1], paired)
    # The summary compares the early drafter against the good one (the first): the negation.
    if abs(comparison["tau_reference_difference"] + paired) > 1e-9:
        failures.append(f"summary's comparison {comparison['tau_reference_difference']} is not minus the gate's {paired}")

    # Just above the value: exit 6. Between the interval's low end and the estimate: within noise,
    # passes by the estimate, fails --strict.
    m = result["bars"][0]["measured"]
    above = f"tau({GOOD}, teacher-forced) >= {m['estimate'] + 1e-6:.9f}"
    code, out, _ = gate(engine, session, above)
    if code != 6 or out["passed"] or out["bars"][-1]["passed"]:
        failures.append(f"bar above the value: exit {code}, {out}")
    inside = f"tau({GOOD}, teacher-forced) >= {(m['low'] + m['estimate']) / 2:.9f}"
    code, out, _ = gate(engine, session, inside)
    if code != 0 or not out["bars"][-1]["within_noise"]:
        failures.append(f"bar inside the interval, by the estimate: exit {code}, {out}")
    code, out, _ = gate(engine, session, inside, strict=True)
    if code != 6 or out["bars"][-1]["passed"]:
        failures.append(f"bar inside the interval, --strict: exit {code}, {out}")

    # Defaults and prompt sets: no mode means live; a prompt set narrows the run.
    code, out, _ = gate(engine, session, f"tau({GOOD}) > 0")
    if code != 0 or "/ live /" not in out["bars"][-1]["run"]:
        failures.append(f"default mode: {out}")
    dataset = row["prompt_set"]
    code, out, _ = gate(engine, session, f"tau({GOOD}, teacher-forced, {dataset}) > 0")
    if code != 0:
        failures.append(f"prompt set '{dataset}': exit {code}, {out}")

    # Selectors that name nothing: the bar fails and says what there is.
    code, out, _ = gate(engine, session, "tau(drafter-missing) >= 1")
    problem = out["bars"][-1]["problem"]
    if code != 6 or GOOD not in problem or EARLY not in problem:
        failures.append(f"unknown drafter: exit {code}, {problem!r}")
    code, out, _ = gate(engine, session, f"tau({GOOD}, no-such-mode) >= 1")
    if code != 6 or "no-such-mode" not in out["bars"][-1]["problem"]:
        failures.append(f"unknown qualifier: exit {code}, {out['bars'][-1]}")

    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print("gate: every check held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
