"""Acceptance by position through the CLI, on a short run of the bundled demo models (live,
teacher-forced and DDTree steps with top-k tables): the figures of `summary` (text and --json)
and of `export --what positions` (JSON and CSV) are recomputed here from the raw steps
(`export --what steps --format json`), independently of the C++ code:
- per-slot acceptance: for slot i, the steps whose counted acceptance length exceeds i + 1, over
  all steps (vLLM's num_accepted_tokens_per_pos / num_drafts), and 1 + their sum is tau(vllm);
- tau by anchor-position bin ([0,32), [32,64), [64,128), ...): the pooled mean length, its
  steps and prompts, and an interval around it;
- calibration: the draft's top-k probability against draft == target (every slot of a
  teacher-forced or DDTree step; the reached slots 0..accepted of a live step), in ten bins, ECE;
- teacher-forced steps only: the mean of each slot's recorded overlap sum min(p, q), and the
  analytic accept_len, the mean over steps of 1 + the sum of the overlaps' running products.

Usage: check_positions_cli.py DFLASH_EVAL DEMO_DIR SCRATCH_DIR
"""

import csv
import io
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path


def output(binary, *args):
    return subprocess.run([str(binary), *map(str, args)], check=True, capture_output=True, text=True).stdout


def anchor_bin(position):
    return 0 if position < 32 else (position // 32).bit_length()


def expected_positions(steps, top_k):
    """(run_id, mode) -> the figures, from the raw steps."""
    by_key = defaultdict(list)
    for s in steps:
        by_key[(s["run_id"], s["mode"])].append(s)
    out = {}
    for key, group in by_key.items():
        lengths = [s["counted_length"] or s["accepted_count"] + 1 for s in group]
        slots = max(len(s["draft_tokens"]) for s in group)
        rates = [sum(1 for n in lengths if n >= i + 2) / len(lengths) for i in range(slots)]
        bins = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        for s, n in zip(group, lengths):
            cell = bins[anchor_bin(s["anchor_position"])][s["prompt_id"]]
            cell[0] += n
            cell[1] += 1
        tau_bins = []
        for b in sorted(bins):
            total = sum(c[0] for c in bins[b].values())
            count = sum(c[1] for c in bins[b].values())
            tau_bins.append({"bin": b, "steps": count, "prompts": len(bins[b]), "tau": total / count})
        counts, prob_sums, accepted = [0] * 10, [0.0] * 10, [0] * 10
        unscored = 0
        for s in group:
            drafts, targets = s["draft_tokens"], s["target_tokens"]
            reached = min(len(drafts), s["accepted_count"] + 1) if s["mode"] == "live" else min(len(drafts), len(targets))
            for i in range(reached):
                ids = s["topk_ids"][i * top_k:(i + 1) * top_k]
                if drafts[i] not in ids:
                    unscored += 1
                    continue
                p = min(max(s["topk_probs"][i * top_k + ids.index(drafts[i])], 0.0), 1.0)
                ok = i < s["accepted_count"] if s["mode"] == "live" else drafts[i] == targets[i]
                b = min(int(p * 10), 9)
                counts[b] += 1
                prob_sums[b] += p
                accepted[b] += ok
        scored = sum(counts)
        ece = sum(abs(accepted[b] / counts[b] - prob_sums[b] / counts[b]) * counts[b] / scored
                  for b in range(10) if counts[b]) if scored else 0.0
        overlaps = [s["slot_overlap"] for s in group if s["slot_overlap"]]
        assert bool(overlaps) == (key[1] == "teacher-forced"), (key, len(overlaps))
        widest = max((len(o) for o in overlaps), default=0)
        slot_overlap = [sum(o[i] for o in overlaps if i < len(o)) / sum(1 for o in overlaps if i < len(o))
                        for i in range(widest)]
        analytic, reached = [], [0.0] * widest
        for o in overlaps:
            survival, length = 1.0, 1.0
            for i, v in enumerate(o):
                survival *= min(max(v, 0.0), 1.0)
                length += survival
                reached[i] += survival / len(overlaps)
            analytic.append(length)
        out[key] = {"slot_overlap": slot_overlap, "reached": reached, "analytic": sum(analytic) / len(analytic) if analytic else None,
                    "steps": len(group), "rates": rates, "tau_vllm": sum(lengths) / len(lengths),
                    "tau_bins": tau_bins, "counts": counts, "scored": scored, "unscored": unscored, "ece": ece,
                    "accepted": [accepted[b] / counts[b] if counts[b] else 0.0 for b in range(10)]}
    return out


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol


def check_json_figures(got, want, where):
    assert got["steps"] == want["steps"], where
    assert len(got["slot_acceptance"]) == len(want["rates"]), (where, got["slot_acceptance"], want["rates"])
    assert all(close(a, b) for a, b in zip(got["slot_acceptance"], want["rates"])), (where, got, want)
    # vLLM's definition: 1 + the sum of the per-position rates is the mean acceptance length.
    assert close(1 + sum(got["slot_acceptance"]), want["tau_vllm"]), where
    bins = got["tau_by_anchor_position"]
    assert [b["begin"] for b in bins] == [0 if w["bin"] == 0 else 32 << (w["bin"] - 1) for w in want["tau_bins"]], where
    for b, w in zip(bins, want["tau_bins"]):
        assert (b["steps"], b["prompts"]) == (w["steps"], w["prompts"]), (where, b, w)
        assert close(b["tau"], w["tau"]), (where, b, w)
        assert b["tau_ci95"][0] <= b["tau"] <= b["tau_ci95"][1], (where, b)
    c = got["calibration"]
    assert (c["slots"], c["unscored_slots"]) == (want["scored"], want["unscored"]), (where, c, want)
    assert [r["slots"] for r in c["bins"]] == want["counts"], (where, c, want)
    assert all(close(r["accepted_fraction"], a) for r, a in zip(c["bins"], want["accepted"])), where
    assert close(c["ece"], want["ece"]), (where, c["ece"], want["ece"])
    assert len(got["slot_overlap"]) == len(want["slot_overlap"]), where
    assert all(close(a, b, 1e-5) for a, b in zip(got["slot_overlap"], want["slot_overlap"])), where
    assert all(close(a, b, 1e-5) for a, b in zip(got["slot_overlap_survival"], want["reached"])), where
    if want["analytic"] is not None:  # 1 + the reached chances is the analytic accept_len, as for tau(vllm)
        assert close(1 + sum(got["slot_overlap_survival"]), want["analytic"], 1e-5), where
    if want["analytic"] is None:
        assert got["analytic_accept_len"] is None, where
    else:
        a = got["analytic_accept_len"]
        assert close(a["estimate"], want["analytic"], 1e-5) and a["ci95"][0] <= a["estimate"] <= a["ci95"][1], (where, a)


def main(binary, demo, scratch):
    demo, scratch = Path(demo), Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    session = scratch / "positions.dfi"
    top_k = 4
    subprocess.run([str(binary), "run", "--target", str(demo / "target"), "--drafter", str(demo / "drafter-good"),
                    "--prompts", str(demo / "prompts.jsonl"), "--limit", "3", "--max-new-tokens", "48",
                    "--mode", "both", "--ddtree", "4", "--record-top-k", str(top_k), "--progress", "none",
                    "-o", str(session), "--overwrite"], check=True, capture_output=True)
    steps = json.loads(output(binary, "export", "--session", session, "--what", "steps", "--format", "json"))
    want = expected_positions(steps, top_k)
    assert {mode for (_, mode) in want} == {"live", "teacher-forced", "ddtree"}, want.keys()
    assert all(w["scored"] > 0 for w in want.values()), want

    exported = json.loads(output(binary, "export", "--session", session, "--what", "positions", "--format", "json"))
    assert len(exported) == len(want), (len(exported), len(want))
    for row in exported:
        check_json_figures(row, want[(row["run_id"], row["mode"])], f"export {row['run_id']} {row['mode']}")

    summary = json.loads(output(binary, "summary", session, "--json"))
    assert len(summary["positions"]) == len(want)
    for row in summary["positions"]:
        check_json_figures(row, want[(row["run_id"], row["mode"])], f"summary {row['run']}")
        assert row["run"], row

    table = list(csv.DictReader(io.StringIO(output(binary, "export", "--session", session, "--what", "positions"))))
    for row in table:
        w = want[(int(row["run_id"]), row["mode"])]
        if row["table"] == "slot_acceptance":
            assert close(float(row["value"]), w["rates"][int(row["index"])]), row
        elif row["table"] == "reliability":
            assert int(row["count"]) == w["counts"][int(row["index"])], row
        elif row["table"] == "calibration_ece":
            assert close(float(row["value"]), w["ece"]), row
        elif row["table"] == "slot_overlap":
            assert close(float(row["value"]), w["slot_overlap"][int(row["index"])], 1e-5), row
        elif row["table"] == "slot_overlap_survival":
            assert close(float(row["value"]), w["reached"][int(row["index"])], 1e-5), row
        elif row["table"] == "analytic_accept_len":
            assert close(float(row["value"]), w["analytic"], 1e-5), row
    assert {r["table"] for r in table} == {"slot_acceptance", "tau_by_anchor_position", "reliability", "calibration_ece",
                                           "slot_overlap", "slot_overlap_survival", "analytic_accept_len"}

    text = output(binary, "summary", session)
    for row in summary["positions"]:
        assert f"positions: {row['run']} ({row['mode']}, {row['steps']} steps" in text, text
        assert f"ECE {row['calibration']['ece']:.3f} over {row['calibration']['slots']} slots" in text, text
        assert "  ".join(f"{r:.3f}" for r in row["slot_acceptance"][:16]) in text, text
        if row["analytic_accept_len"]:
            assert f"accept_len at T=1 (speculators' analytic, from sum min(p,q)): {row['analytic_accept_len']['estimate']:.3f}" in text, text
    print("positions: summary (text, json) and export (json, csv) match the figures recomputed from the steps for",
          ", ".join(f"{m} ({w['steps']} steps, ECE {w['ece']:.3f}" +
                    (f", analytic accept_len {w['analytic']:.3f})" if w["analytic"] else ")")
                    for (_, m), w in sorted(want.items())))


if __name__ == "__main__":
    main(*sys.argv[1:])
