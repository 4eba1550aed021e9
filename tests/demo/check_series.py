#!/usr/bin/env python3
"""Holds run --drafter-series, summary --series and watch to a training run's folder.

Usage: check_series.py DFLASH_EVAL DEMO_DIR WORK_DIR

A SpecForge-style output folder is built from the demo drafters: run1-step1000 (the good
drafter), run1-step5000 (the early one), run1-step3000 holding only training_state.pt and a
run1-latest link, with a TensorBoard log written by torch's SummaryWriter (train/accept_len,
SpecForge's convention: accepted drafts without the bonus token). Then:
- run --drafter-series evaluates the two drafters in step order and names the skipped state;
- summary --series: each point's tau equals the z-lab mean over prompts computed here from the
  exported steps, the logged value is the log's accept_len at that step + 1, the gap their
  difference, the analytic accept_len at T=1 the mean over steps of 1 + the running products of
  their slot_overlap (no logged counterpart: SpecForge's accept_len is greedy), the best checkpoint the higher tau, best - last the paired mean difference over
  prompts; per-slot acceptance equals the fraction of steps accepting that slot;
- watch --once evaluates a complete checkpoint, waits on a half-written one, evaluates it once
  complete and never evaluates one twice; Ctrl-C on a waiting watch exits 130 and the session
  keeps every run.
"""
import json
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from torch.utils.tensorboard import SummaryWriter


def engine_json(engine, *args):
    return json.loads(subprocess.run([engine, *args], check=True, capture_output=True, text=True).stdout)


def logged_accept_len(step):
    return 1.0 + step / 4000


def runs_of(engine, session):
    return engine_json(engine, "export", "--session", str(session), "--format", "json", "--what", "runs")


def main():
    engine, demo, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    train = work / "train"
    train.mkdir(parents=True)
    shutil.copytree(demo / "drafter-good", train / "run1-step1000")
    shutil.copytree(demo / "drafter-early", train / "run1-step5000")
    (train / "run1-step3000").mkdir()
    (train / "run1-step3000" / "training_state.pt").write_bytes(b"state")
    (train / "run1-latest").symlink_to(train / "run1-step5000")
    writer = SummaryWriter(log_dir=str(train / "runs" / "run1"))
    for step in range(0, 6001, 500):
        writer.add_scalar("train/accept_len", logged_accept_len(step), step)
        writer.add_scalar("train/loss", 1.0 / (step + 1), step)
    writer.close()
    failures = []

    session = work / "series.dfi"
    common = ["--target", str(demo / "target"), "--prompts", str(demo / "prompts.jsonl"), "--limit", "8",
              "--max-new-tokens", "32", "--mode", "teacher-forced", "--ddtree", "0", "--no-parity", "--progress", "none"]
    done = subprocess.run([engine, "run", "--drafter-series", str(train), *common, "-o", str(session)],
                          capture_output=True, text=True)
    if done.returncode != 0 or "run1-step3000" not in done.stderr or "specforge.export.to_hf" not in done.stderr:
        failures.append(f"run --drafter-series: exit {done.returncode}, {done.stderr[-400:]!r}")
    runs = {r["run_id"]: r for r in runs_of(engine, session)}
    order = [Path(r["drafter_path"]).name for r in sorted(runs.values(), key=lambda r: r["run_id"])]
    if order != ["run1-step1000", "run1-step5000"]:
        failures.append(f"evaluation order: {order}")

    # Independent values from the exported steps.
    steps = engine_json(engine, "export", "--session", str(session), "--format", "json", "--what", "steps")
    per_prompt = defaultdict(lambda: defaultdict(list))
    for s in steps:
        per_prompt[Path(runs[s["run_id"]]["drafter_path"]).name][s["prompt_id"]].append(s["accepted_count"] + 1)
    prompt_tau = {d: {p: sum(v) / len(v) for p, v in by.items()} for d, by in per_prompt.items()}
    # The analytic accept_len at T=1: per step 1 + the running products of its slots' overlap.
    analytic_lengths = defaultdict(list)
    for s in steps:
        survival, length = 1.0, 1.0
        for v in s["slot_overlap"]:
            survival *= v
            length += survival
        analytic_lengths[Path(runs[s["run_id"]]["drafter_path"]).name].append(length)
    analytic = {d: sum(v) / len(v) for d, v in analytic_lengths.items()}
    tau = {d: sum(t.values()) / len(t) for d, t in prompt_tau.items()}
    block = 16
    slots = {d: [sum(1 for s in steps if Path(runs[s["run_id"]]["drafter_path"]).name == d and s["accepted_count"] > k)
                 / sum(len(v) for v in per_prompt[d].values()) for k in range(block - 1)] for d in per_prompt}

    summary = engine_json(engine, "summary", str(session), "--series", str(train), "--json")
    series = summary.get("series")
    if not series:
        failures.append("summary --series: no series")
        series = {"points": []}
    print(json.dumps(series, indent=1)[:1500])
    if [p["step"] for p in series["points"]] != [1000, 5000]:
        failures.append(f"steps: {[p['step'] for p in series['points']]}")
    if series.get("log_tag") != "train/accept_len" or series.get("mode") != "teacher-forced":
        failures.append(f"log tag / mode: {series.get('log_tag')} {series.get('mode')}")
    for p in series["points"]:
        name = p["drafter"]
        if name not in tau:
            failures.append(f"point names {name}, the session has {sorted(tau)}")
            continue
        if abs(p["tau"] - tau[name]) > 1e-9 or not p["tau_ci95"][0] <= p["tau"] <= p["tau_ci95"][1]:
            failures.append(f"{name}: tau {p['tau']} {p['tau_ci95']} != {tau[name]}")
        want_logged = logged_accept_len(p["step"]) + 1
        if p["logged_step"] != p["step"] or abs(p["logged"] - want_logged) > 1e-6 \
                or abs(p["gap"] - (p["tau"] - p["logged"])) > 1e-9:
            failures.append(f"{name}: logged {p['logged']} at {p['logged_step']}, gap {p['gap']}; want {want_logged}")
        # Beside it the analytic accept_len; this SpecForge-style log has no counterpart for it.
        if p["analytic"] is None or abs(p["analytic"] - analytic[name]) > 1e-5 or p["logged_analytic"] is not None:
            failures.append(f"{name}: analytic {p['analytic']} (logged {p['logged_analytic']}) != {analytic[name]}")
        got_slots = p["slot_acceptance"]
        if len(got_slots) != len(slots[name]) or any(abs(a - b) > 1e-9 for a, b in zip(got_slots, slots[name])):
            failures.append(f"{name}: slots {got_slots[:4]} != {slots[name][:4]}")
    best = max(tau, key=tau.get)
    if series.get("best") != best:
        failures.append(f"best {series.get('best')} != {best} ({tau})")
    if best == "run1-step1000":
        shared = sorted(set(prompt_tau[best]) & set(prompt_tau["run1-step5000"]))
        paired = sum(prompt_tau[best][q] - prompt_tau["run1-step5000"][q] for q in shared) / len(shared)
        got = series.get("best_minus_last") or {}
        if abs(got.get("estimate", 1e9) - paired) > 1e-9 or got.get("prompts") != len(shared):
            failures.append(f"best - last {got} != {paired} over {len(shared)}")
    text = subprocess.run([engine, "summary", str(session), "--series", str(train)], capture_output=True, text=True)
    if text.returncode != 0 or "checkpoint series" not in text.stdout or "train/accept_len" not in text.stdout:
        failures.append(f"summary --series text: {text.stdout[-400:]!r} {text.stderr[-300:]!r}")

    # watch: a complete checkpoint and a half-written one.
    live = work / "live"
    live.mkdir()
    shutil.copytree(demo / "drafter-good", live / "step1000")
    shutil.copytree(demo / "drafter-early", live / "step2000")
    weights = live / "step2000" / "model.safetensors"
    whole = weights.read_bytes()
    weights.write_bytes(whole[: len(whole) // 3])
    watched = work / "watch.dfi"
    watch = [engine, "watch", str(live), *common, "-o", str(watched)]
    first = subprocess.run(watch + ["--once"], capture_output=True, text=True)
    names = [Path(r["drafter_path"]).name for r in runs_of(engine, watched)] if watched.exists() else []
    if first.returncode != 0 or names != ["step1000"] or "waiting for" not in first.stderr:
        failures.append(f"watch, one half-written: exit {first.returncode}, runs {names}, {first.stderr[-400:]!r}")
    weights.write_bytes(whole)
    second = subprocess.run(watch + ["--once"], capture_output=True, text=True)
    third = subprocess.run(watch + ["--once"], capture_output=True, text=True)
    names = [Path(r["drafter_path"]).name for r in runs_of(engine, watched)]
    if second.returncode != 0 or third.returncode != 0 or names != ["step1000", "step2000"]:
        failures.append(f"watch resumed: exits {second.returncode} {third.returncode}, runs {names}, "
                        f"{second.stderr[-300:]!r} {third.stderr[-300:]!r}")

    waiting = subprocess.Popen(watch + ["--poll-seconds", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4)
    waiting.send_signal(signal.SIGINT)
    try:
        _, err = waiting.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        waiting.kill()
        _, err = waiting.communicate()
    names = [Path(r["drafter_path"]).name for r in runs_of(engine, watched)]
    if waiting.returncode != 130 or names != ["step1000", "step2000"]:
        failures.append(f"Ctrl-C on watch: exit {waiting.returncode}, runs {names}, {err[-300:]!r}")

    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
