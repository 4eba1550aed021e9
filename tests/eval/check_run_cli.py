"""`dflash-eval run` end to end on the bundled demo models: refusals (block size above the
drafter's trained one, below 2, --shard auto without a launcher, a malformed prompt line) and
a sharded, limited run with --progress json whose every stdout line is JSON, whose summary
intervals contain tau and whose session records the overridden block size; shards merged and
summarised equal the unsharded run; Ctrl-C keeps the finished prompts and summarises them.

Usage: check_run_cli.py DFLASH_EVAL DEMO_DIR SCRATCH_DIR
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

EXIT_OK, EXIT_USAGE, EXIT_FORMAT, EXIT_CANCELLED = 0, 2, 4, 130
LAUNCHER_VARS = ("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS")


def run(binary, demo, out, *args, env=None):
    base = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
    base.update(env or {})
    cmd = [binary, "run", "--target", demo / "target", "--drafter", demo / "drafter-good",
           "--max-new-tokens", "8", "--mode", "live", "--ddtree", "0", "-o", out, "--overwrite", *args]
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=base)
    return p.returncode, p.stdout, p.stderr


def expect_refusal(result, code, *needles):
    rc, _, err = result
    assert rc == code, f"exit {rc}, expected {code}\n{err}"
    for needle in needles:
        assert needle in err, f"{needle!r} not in: {err}"


def check_thinking(binary, demo, scratch):
    """--thinking reaches the chat template: the demo's Qwen3.5-style template leaves the think
    block open with thinking on and closes it empty with thinking off."""
    endings = {}
    for thinking in ("on", "off"):
        out = scratch / f"thinking_{thinking}.dfi"
        rc, _, err = run(binary, demo, out, "--prompts", demo / "prompts.jsonl", "--limit", "1", "--thinking", thinking,
                         "--progress", "none")
        assert rc == EXIT_OK, err
        endings[thinking] = sqlite3.connect(out).execute("SELECT text FROM prompts").fetchone()[0]
    assert endings["on"].endswith("<think>\n"), endings
    assert endings["off"].endswith("<think>\n\n</think>\n\n"), endings


def check_shards_merge_to_the_whole(binary, demo, scratch):
    """Two torchrun ranks of a limited run, merged, summarise to exactly the unsharded run."""
    whole, shards = scratch / "whole.dfi", scratch / "sharded.dfi"
    common = ("--prompts", demo / "prompts.jsonl", "--limit", "5", "--progress", "none")
    assert run(binary, demo, whole, *common)[0] == EXIT_OK
    for rank in (0, 1):
        rc, _, err = run(binary, demo, shards, *common, "--shard", "auto", env={"RANK": str(rank), "WORLD_SIZE": "2"})
        assert rc == EXIT_OK, err
    merged = scratch / "merged.dfi"
    merged.unlink(missing_ok=True)
    parts = [scratch / f"sharded.shard-{rank}-of-2.dfi" for rank in (0, 1)]
    subprocess.run([binary, "merge", *map(str, parts), "-o", str(merged)], check=True, capture_output=True)

    def summary(session):
        out = subprocess.run([binary, "summary", str(session), "--json"], check=True, capture_output=True, text=True)
        return json.loads(out.stdout)["rows"]

    def figures(rows):  # a row's numbers, without the recorded runs it joins (two shards, one whole run)
        return [{k: v for k, v in row.items() if k != "run_ids"} for row in rows]

    assert [len(r["run_ids"]) for r in summary(merged)] == [2] * len(summary(merged)), summary(merged)
    assert figures(summary(merged)) == figures(summary(whole)), (summary(merged), summary(whole))
    assert summary(whole)[0]["responses"] == 5


def check_cancel(binary, demo, scratch):
    """Ctrl-C after the first prompt: exit 130, a partial summary of the finished prompt, and
    the session keeps it."""
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
    out = scratch / "cancel.dfi"
    cmd = [binary, "run", "--target", demo / "target", "--drafter", demo / "drafter-good", "--prompts",
           demo / "prompts.jsonl", "--max-new-tokens", "32", "--mode", "live", "--ddtree", "0", "-o", out,
           "--overwrite", "--progress", "json"]
    p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    events = []
    for line in p.stdout:
        events.append(json.loads(line))
        if events[-1].get("done") == 1:
            p.send_signal(signal.SIGINT)
    rc = p.wait()
    assert rc == EXIT_CANCELLED, f"exit {rc}\n{p.stderr.read()}"
    summary, cancelled = events[-2], events[-1]
    assert summary["event"] == "summary" and summary["partial"], summary
    assert cancelled["event"] == "cancelled" and cancelled["exit_code"] == EXIT_CANCELLED, cancelled
    finished = summary["rows"][0]["responses"]
    assert 1 <= finished < 8, summary
    db = sqlite3.connect(out)
    assert db.execute("SELECT COUNT(*) FROM prompts").fetchone()[0] == finished


def main(binary, demo, scratch):
    demo, scratch = Path(demo), Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    prompts = demo / "prompts.jsonl"
    out = scratch / "run.dfi"

    trained = json.loads((demo / "drafter-good" / "config.json").read_text())["block_size"]
    out.unlink(missing_ok=True)
    expect_refusal(run(binary, demo, out, "--prompts", prompts, "--block-size", str(trained + 1)), EXIT_USAGE,
                   "block_size", f"({trained})", "config.json")
    assert not out.exists(), "a run refused before recording anything leaves no session"
    expect_refusal(run(binary, demo, out, "--prompts", prompts, "--block-size", "1"), EXIT_USAGE, "--block-size")
    expect_refusal(run(binary, demo, out, "--prompts", prompts, "--shard", "auto"), EXIT_USAGE,
                   "RANK/WORLD_SIZE", "SLURM_PROCID/SLURM_NTASKS")

    mixed = scratch / "mixed.jsonl"
    mixed.write_text('{"prompt": "def f(x):", "dataset": "code"}\n'
                     '{"turns": ["def g(y):", "now explain it"], "dataset": "chat"}\n'
                     '{"question": 12}\n'
                     '{"question": "def h(z):", "dataset": "code"}\n')
    expect_refusal(run(binary, demo, out, "--prompts", mixed), EXIT_FORMAT, str(mixed), "line 3", "question")
    assert not out.exists(), "a refused prompt file leaves no session"

    rc, stdout, err = run(binary, demo, scratch / "mixed.dfi", "--prompts", mixed, "--skip-bad-prompts",
                          "--progress", "json")
    assert rc == EXIT_OK, err
    assert "line 3" in err and "skipping" in err, err
    assert "only the first turn" in err, err
    events = [json.loads(line) for line in stdout.splitlines()]  # every line is JSON
    rows = events[-1]["rows"]
    assert [(r["prompt_set"], r["responses"]) for r in rows] == [("code", 2), ("chat", 1), ("all", 3)], rows

    # torchrun's rank 1 of 2 on the first 3 prompts: prompt 1 only, in its own file.
    rc, stdout, err = run(binary, demo, out, "--prompts", prompts, "--limit", "3", "--shard", "auto",
                          "--block-size", "4", "--progress", "json", env={"RANK": "1", "WORLD_SIZE": "2"})
    assert rc == EXIT_OK, err
    events = [json.loads(line) for line in stdout.splitlines()]
    progress = [e for e in events if e["event"] == "progress"]
    assert progress and all(e["total"] == 1 and e["shard"] == "1/2" for e in progress), progress
    summary = events[-1]
    assert summary["event"] == "summary", summary
    shard_file = scratch / "run.shard-1-of-2.dfi"
    assert summary["session"] == str(shard_file) and shard_file.exists(), summary
    for row in summary["rows"]:
        low, high = row["tau_reference_ci95"]
        assert low <= row["tau_reference"] <= high, row
    db = sqlite3.connect(shard_file)
    block_sizes = {b for (b,) in db.execute("SELECT block_size FROM runs")}
    assert block_sizes == {4}, block_sizes
    settings = json.loads(db.execute("SELECT settings_json FROM runs").fetchone()[0])
    assert settings["limit"] == 3 and settings["shard"] == "1/2", settings
    assert [p for (p,) in db.execute("SELECT prompt_id FROM prompts")] == [1]
    check_thinking(binary, demo, scratch)
    check_shards_merge_to_the_whole(binary, demo, scratch)
    check_cancel(binary, demo, scratch)
    print("run CLI: refusals, skipped lines, prompt sets, json progress, shard file, block size, thinking, merged shards and Ctrl-C checked")


if __name__ == "__main__":
    main(*sys.argv[1:])
