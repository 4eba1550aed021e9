#!/usr/bin/env python3
"""One run summary for the CLI and the GUI: `dflash-eval summary --json` and the overview panel's
table (`dflash-inspector --render overview --format csv`) agree key by key, row by row, on one
session (the demo models) that holds greedy runs of two drafters in every mode, a sampled
evaluation repeated twice, and a diagnosis, whose baseline is one live row and whose hypothesis
runs belong to its own panel and appear in neither table.

Usage: check_summary_gui_cli.py DFLASH_EVAL DFLASH_INSPECTOR DEMO_DIR WORK_DIR
"""

import csv
import json
import subprocess
import sys
from pathlib import Path


def run(*args):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, f"{' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr[-3000:]}"
    return p.stdout


def evaluate(engine, demo, out, *extra):
    run(engine, "run", "--target", demo / "target", "--prompts", demo / "prompts.jsonl", "--limit", "3",
        "--max-new-tokens", "16", "--progress", "none", "--overwrite", "-o", out, *extra)
    return out


def cell_values(value):
    """What the CSV cell of a --json value holds: lists are space-separated."""
    return value if isinstance(value, list) else [value]


def main():
    engine, inspector, demo, work = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
    work.mkdir(parents=True, exist_ok=True)
    parts = [
        evaluate(engine, demo, work / "greedy.dfi", "--drafter", demo / "drafter-good", "--drafter",
                 demo / "drafter-early", "--mode", "both", "--ddtree", "4"),
        evaluate(engine, demo, work / "sampled.dfi", "--drafter", demo / "drafter-good", "--mode", "live",
                 "--ddtree", "0", "--temperature", "1", "--seed", "5", "--samples", "2"),
    ]
    diagnosis = work / "diagnosis.dfi"
    run(engine, "diagnose", "--target", demo / "target", "--drafter", demo / "drafter-tap-shifted", "--prompts",
        demo / "prompts.jsonl", "--limit", "1", "--max-new-tokens", "12", "--overwrite", "-o", diagnosis,
        "--progress", "none")
    parts.append(diagnosis)
    session = work / "all.dfi"
    session.unlink(missing_ok=True)
    run(engine, "merge", *parts, "-o", session)

    summary = json.loads(run(engine, "summary", session, "--json"))["rows"]
    renders = work / "renders"
    env_render = ["env", "QT_QPA_PLATFORM=offscreen"]
    subprocess.run([*env_render, inspector, "--render", "overview", "--format", "csv", "--out", str(renders),
                    str(session)], check=True, capture_output=True, timeout=600)
    with open(renders / "overview.csv", newline="") as f:
        table = list(csv.DictReader(f))

    assert len(table) == len(summary), f"{len(table)} overview rows, {len(summary)} summary rows"
    diagnosed = [(row["mode"], row["prompt_set"]) for row in summary if row["drafter"] == "drafter-tap-shifted"]
    assert diagnosed == [("live", "prompts")], f"a diagnosis's hypothesis runs reached the summary: {diagnosed}"
    sampled = [row for row in summary if row.get("repeats") == 2]
    assert sampled, f"no row has the sampled evaluation's two repeats: {summary}"
    assert {row["mode"] for row in summary} >= {"live", "teacher-forced", "ddtree-4"}, summary
    for index, (expected, shown) in enumerate(zip(summary, table)):
        assert set(shown) >= set(expected), f"row {index}: columns {sorted(shown)} lack {sorted(expected)}"
        for key, cell in shown.items():
            if key not in expected:
                assert cell == "", f"row {index}: {key} is '{cell}' in the overview, absent from summary --json"
                continue
            values = cell_values(expected[key])
            texts = cell.split(" ") if isinstance(expected[key], list) else [cell]
            assert len(texts) == len(values), f"row {index}, {key}: '{cell}' against {expected[key]}"
            for text, value in zip(texts, values):
                same = float(text) == float(value) if isinstance(value, (int, float)) else text == value
                assert same, f"row {index}, {key}: the overview shows '{text}', summary --json {value!r}"
    print(f"summary --json and the overview agree on {len(summary)} rows ({len(sampled)} sampled over 2 repeats; "
          f"the diagnosis's hypotheses left out), every key")


if __name__ == "__main__":
    main()
