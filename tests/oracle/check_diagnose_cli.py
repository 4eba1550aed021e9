#!/usr/bin/env python3
"""`dflash-eval diagnose` end to end on the bundled demo (one prompt, a few tokens): the JSON
report's shape (every hypothesis with name, delta_tau, ci, applicable; sorted by delta_tau;
lint under "lint"), `export --what diagnosis` equal to it, and `--training-dump` against
features written by transformers (the specification of the target): SpecForge's offline
layout (input_ids, aux_hidden_state) with the taps the config names must match tap by tap;
the same features taken one layer early (hidden_states[id] instead of hidden_states[id + 1],
the off-by-one the drafters here are diagnosed for) must be reported as a mismatch naming the
layer each tap really is; a dump of the wrong width is reported naming the tensor and shape.

Usage: check_diagnose_cli.py DFLASH_EVAL DEMO_DIR WORK_DIR
"""

import json
import subprocess
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM

TAPS = [1, 3, 4]  # drafter-good's target_layer_ids


def diagnose(engine, demo, work, name, *extra):
    session = work / f"{name}.dfi"
    p = subprocess.run([engine, "diagnose", "--target", str(demo / "target"), "--drafter", str(demo / "drafter-good"),
                        "--prompts", str(demo / "prompts.jsonl"), "--limit", "1", "--max-new-tokens", "12",
                        "--json", "--overwrite", "-o", str(session), "--progress", "none", *extra],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"diagnose {name} failed:\n{p.stderr[-3000:]}"
    return json.loads(p.stdout), session


def dumps(demo, work):
    """Transformers' hidden states of the demo target on a short text, in SpecForge's layout."""
    tok = Tokenizer.from_file(str(demo / "target" / "tokenizer.json"))
    ids = tok.encode("def count_words(text):\n    return len(text.split())\n").ids
    model = AutoModelForCausalLM.from_pretrained(demo / "target", dtype=torch.float32).eval()
    with torch.no_grad():
        hs = model(torch.tensor([ids]), output_hidden_states=True).hidden_states
    out = {}
    for name, offset in (("right", 1), ("early", 0)):
        features = torch.cat([hs[i + offset][0] for i in TAPS], dim=-1).contiguous()
        save_file({"input_ids": torch.tensor([ids]), "aux_hidden_state": features[None]}, str(work / f"{name}.safetensors"))
        out[name] = work / f"{name}.safetensors"
    save_file({"input_ids": torch.tensor(ids), "aux_hidden_state": hs[2][0][:, :100].contiguous()},
              str(work / "narrow.safetensors"))
    out["narrow"] = work / "narrow.safetensors"
    return out


def lint_of(report, code):
    return [f for f in report["lint"] if f["code"] == code]


def main():
    engine, demo, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    failures = []

    report, session = diagnose(engine, demo, work, "plain")
    hyps = report["hypotheses"]
    for h in hyps:
        for key in ("name", "delta_tau", "ci", "applicable"):
            if key not in h:
                failures.append(f"hypothesis {h.get('name')} has no {key}")
    measured = [h["delta_tau"] for h in hyps if h["delta_tau"] is not None]
    if measured != sorted(measured, reverse=True):
        failures.append(f"hypotheses not sorted by delta_tau: {measured}")
    if any(h["delta_tau"] is not None for h in hyps[len(measured):]):
        failures.append("a measured hypothesis after an unmeasured one")
    if not all(len(h["ci"]) == 2 and h["ci"][0] <= h["delta_tau"] <= h["ci"][1] for h in hyps if h["ci"]):
        failures.append("an interval does not hold its estimate")
    names = {h["name"] for h in hyps}
    for required in ("mask:anchor-visible", "positions:+1", "slot0:mask", "block-size:8", "taps-shift:+1",
                     "taps-shift:-1", "tap-shift:0:-1", "tap-ablate:2", "tap-noise:0.2", "chat-template:off",
                     "target-dtype:bf16", "gdn:chunked", "window:full"):
        if required not in names:
            failures.append(f"{required} missing from the battery")
    window = next(h for h in hyps if h["name"] == "window:full")
    if window["applicable"] or "sliding" not in window.get("reason", ""):
        failures.append(f"window:full should be listed as not applicable with its reason: {window}")
    if not lint_of(report, "prompt-format"):
        failures.append("no prompt-format lint finding")
    exported = json.loads(subprocess.run([engine, "export", "--session", str(session), "--what", "diagnosis",
                                          "--format", "json"], check=True, capture_output=True, text=True).stdout)
    if exported != report:
        failures.append("export --what diagnosis differs from diagnose --json")

    # `summary` reads the diagnosis's runs by their diagnosis: its one row is the drafter's live
    # run (whose anchors the diagnosis measures at); no teacher-forced row pools the baseline and
    # the hypothesis runs (each a variant of the drafter).
    summary = json.loads(subprocess.run([engine, "summary", str(session), "--json"], check=True,
                                        capture_output=True, text=True).stdout)
    if [r["mode"] for r in summary["rows"]] != ["live"]:
        failures.append(f"summary pools a diagnosis's runs into tau rows: {summary['rows']}")
    if len(summary["diagnoses"]) != 1 or summary["diagnoses"][0]["hypotheses"] != report["hypotheses"]:
        failures.append("summary --json should hold the one diagnosis as diagnose --json reports it")

    # The prompt-format lint against a training template that put a system turn first: the
    # first differing byte is named (12, after the common "<|im_start|>"), and the plain run (whose drafter ships no template) has none.
    if lint_of(report, "training-template-differs"):
        failures.append(f"training-template-differs without a training template: {report['lint']}")
    template = json.loads((demo / "target" / "tokenizer_config.json").read_text())["chat_template"]
    trained = work / "training_template.jinja"
    trained.write_text("{{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}" + template)
    templated, _ = diagnose(engine, demo, work, "template", "--training-template", str(trained))
    differs = lint_of(templated, "training-template-differs")
    if len(differs) != 1 or "from byte 12" not in differs[0]["message"] or 'training "system' not in differs[0]["message"]:
        failures.append(f"a training template with a system turn should differ from byte 12: {templated['lint']}")

    files = dumps(demo, work)
    right, _ = diagnose(engine, demo, work, "right", "--training-dump", str(files["right"]))
    matched = lint_of(right, "training-dump-tap")
    if len(matched) != len(TAPS) or lint_of(right, "training-dump-tap-mismatch"):
        failures.append(f"the configured taps should match tap by tap: {right['lint']}")
    early, _ = diagnose(engine, demo, work, "early", "--training-dump", str(files["early"]))
    wrong = lint_of(early, "training-dump-tap-mismatch")
    if len(wrong) != len(TAPS) or any(f["severity"] != "error" for f in wrong):
        failures.append(f"each early tap should be a mismatch: {early['lint']}")
    for finding, tap in zip(wrong, TAPS):
        really = "the embedding" if tap == 0 else f"layer {tap - 1}"
        if really not in finding["message"] or f"layer {tap}" not in finding["message"]:
            failures.append(f"mismatch of layer {tap} should name {really}: {finding['message']}")
    narrow, _ = diagnose(engine, demo, work, "narrow", "--training-dump", str(files["narrow"]))
    bad = lint_of(narrow, "training-dump")
    if len(bad) != 1 or "aux_hidden_state" not in bad[0]["subject"] or "[" not in bad[0]["message"]:
        failures.append(f"a dump of the wrong width should be one error naming the tensor and shape: {narrow['lint']}")

    print(f"{len(hyps)} hypotheses, {len(measured)} measured; dump findings: "
          f"{[f['code'] for f in right['lint']]} / {[f['code'] for f in early['lint']]}")
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
