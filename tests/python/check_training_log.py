#!/usr/bin/env python3
"""Holds the native training-log reader (dfi/analysis/training_log.h) to TensorBoard's own.

Usage: check_training_log.py DUMP_TRAINING_LOG WORK_DIR

- Event files written by torch.utils.tensorboard.SummaryWriter, as SpecForge's and speculators'
  trackers write them (add_scalar, add_scalars, non-scalar events between), read back equal to
  tensorboard's EventAccumulator: every tag, step, value (float32) and wall time.
- A file whose last record is cut short (a trainer still writing) keeps every record before it.
- A flipped byte in a record's data fails naming the file and the byte offset of that record.
- JSON lines (SpecForge's jsonl tracker: nested objects joined with "/") and a Hugging Face
  trainer_state.json's log_history, against the same values computed here.
- The acceptance tag and its convention: speculators' eal as is, SpecForge's accept_len + 1.
"""
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from torch.utils.tensorboard import SummaryWriter


def dump(tool, path):
    done = subprocess.run([tool, str(path)], capture_output=True, text=True)
    return done.returncode, (json.loads(done.stdout) if done.returncode == 0 else None), done.stderr


def main():
    tool, work = sys.argv[1], Path(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    failures = []

    # SpecForge-style tracker output: runs/<name>/events.out.tfevents.*
    writer = SummaryWriter(log_dir=str(work / "tb" / "runs" / "run1"))
    rng = np.random.default_rng(7)
    for step in range(0, 3000, 250):
        writer.add_text("note", f"step {step}", step)  # not a scalar: skipped
        writer.add_scalar("train/accept_len", float(2.0 + step / 1000 + rng.normal(0, 0.05)), step)
        writer.add_scalar("train/loss", float(np.exp(-step / 1000)), step)  # the file's last record
        if step % 1000 == 0:
            writer.add_scalars("lr", {"drafter": 1e-4 * (1 - step / 3000)}, step)
    writer.close()
    events = sorted((work / "tb").rglob("events.out.tfevents.*"))

    code, ours, err = dump(tool, work / "tb")
    if code != 0:
        failures.append(f"event folder refused: {err}")
    else:
        reference = {}
        for f in events:
            acc = EventAccumulator(str(f), size_guidance={"scalars": 0})
            acc.Reload()
            for tag in acc.Tags()["scalars"]:
                reference.setdefault(tag, []).extend((e.step, e.value, e.wall_time) for e in acc.Scalars(tag))
        # add_scalars writes its values into a sub-run folder named "<main_tag>_<tag>" under the tag "lr".
        got = {t: [tuple(p) for p in pts] for t, pts in ours["scalars"].items()}
        if sorted(got) != sorted(reference):
            failures.append(f"tags: {sorted(got)} != TensorBoard's {sorted(reference)}")
        for tag, points in reference.items():
            mine = sorted(got.get(tag, []))
            theirs = sorted(points)
            if len(mine) != len(theirs) or any(
                    a[0] != b[0] or np.float32(a[1]) != np.float32(b[1]) or abs(a[2] - b[2]) > 1e-6
                    for a, b in zip(mine, theirs)):
                failures.append(f"{tag}: {mine[:3]}... != TensorBoard's {theirs[:3]}...")
        if ours["acceptance"] != {"tag": "train/accept_len", "to_tau": 1}:
            failures.append(f"acceptance tag: {ours['acceptance']}")

    main_file = next(f for f in events if f.parent.name == "run1")
    data = main_file.read_bytes()
    # Record boundaries, to cut and corrupt at known places.
    bounds, at = [], 0
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        bounds.append((at, length))
        at += 12 + length + 4
    complete = EventAccumulator(str(main_file), size_guidance={"scalars": 0})
    complete.Reload()
    last_start, _ = bounds[-1]

    cut = work / "cut" / main_file.name
    cut.parent.mkdir()
    cut.write_bytes(data[:last_start + 12 + 3])  # the last record's data cut short
    code, got, err = dump(tool, cut)
    expected = sum(len(complete.Scalars(t)) for t in complete.Tags()["scalars"])
    if code == 0:
        total = sum(len(v) for v in got["scalars"].values())
        # The last record holds one scalar (each add_scalar is one event).
        if total != expected - 1:
            failures.append(f"cut file: {total} scalars, expected {expected - 1}")
    else:
        failures.append(f"cut file refused: {err}")

    bad = work / "bad" / main_file.name
    bad.parent.mkdir()
    corrupt_start, corrupt_length = bounds[3]
    flipped = bytearray(data)
    flipped[corrupt_start + 12 + corrupt_length // 2] ^= 0x40
    bad.write_bytes(bytes(flipped))
    code, _, err = dump(tool, bad)
    if code == 0 or str(bad) not in err or f"byte {corrupt_start + 12}" not in err or "CRC" not in err:
        failures.append(f"corrupt record: exit {code}, {err.strip()!r}")

    # SpecForge's jsonl tracker and speculators' eal.
    lines = [{"step": s, "train": {"eal": 1.5 + s / 10000, "loss": 1.0 / (s + 1)}, "lr": 1e-4} for s in range(0, 5000, 1000)]
    jsonl = work / "log.jsonl"
    jsonl.write_text("\n".join(json.dumps(x) for x in lines) + "\n{\"step\": 5000, \"train\"")  # last line mid-write
    code, got, err = dump(tool, jsonl)
    want = {"train/eal": [[x["step"], x["train"]["eal"], 0] for x in lines],
            "train/loss": [[x["step"], x["train"]["loss"], 0] for x in lines],
            "lr": [[x["step"], 1e-4, 0] for x in lines]}
    if code != 0 or got["scalars"] != want or got["acceptance"] != {"tag": "train/eal", "to_tau": 0}:
        failures.append(f"jsonl: exit {code} {err.strip()!r} {got and got['scalars']} {got and got['acceptance']}")
    broken = work / "broken.jsonl"
    broken.write_text("{\"step\": 1, \"eal\": 2}\nnot json\n{\"step\": 2, \"eal\": 3}\n")
    code, _, err = dump(tool, broken)
    if code == 0 or str(broken) not in err or "line 2" not in err:
        failures.append(f"broken jsonl: exit {code}, {err.strip()!r}")

    # Hugging Face Trainer: the newest checkpoint's trainer_state.json holds the history.
    state = {"global_step": 40, "log_history": [{"step": 20, "loss": 0.5, "accept_len": 2.25},
                                                {"step": 40, "loss": 0.25, "accept_len": 2.75},
                                                {"step": 40, "train_runtime": 12.5}]}
    ckpt = work / "hf" / "checkpoint-40"
    ckpt.mkdir(parents=True)
    (ckpt / "trainer_state.json").write_text(json.dumps(state))
    code, got, err = dump(tool, work / "hf")
    if code != 0 or got["scalars"].get("accept_len") != [[20, 2.25, 0], [40, 2.75, 0]] \
            or got["scalars"].get("train_runtime") != [[40, 12.5, 0]] \
            or got["acceptance"] != {"tag": "accept_len", "to_tau": 1}:
        failures.append(f"trainer_state.json: exit {code} {err.strip()!r} {got}")

    (work / "log.txt").write_text("x")
    code, _, err = dump(tool, work / "log.txt")
    if code == 0 or "log.txt" not in err:
        failures.append(f"unknown file kind: exit {code}, {err.strip()!r}")

    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
