#!/usr/bin/env python3
"""A DFlash2 drafter end to end through dflash-eval on the bundled demo target: built and saved
by z-lab's `dflash` package (DFlash2DraftModel, codebooks stored without ".weight" as z-lab's
files are), then `info`, `run` (live, teacher-forced, DDTree), `summary`, `draft` and `serve`'s
inspect. Every recorded step's drafts must be the selector's chosen candidates, the candidates a
slot's top-k, and the `draft` file's selector path the package's own (propose() on the package's
forward of the same block, greedy).

Usage: check_dflash2_cli.py DFLASH_EVAL DEMO_DIR WORK_DIR
"""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file

sys.path.insert(0, str(Path(__file__).parent))
import gen_dflash_package as fixtures  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402

IDS = [510, 1027, 27, 41, 339, 1400, 12, 77, 901, 64, 345, 2000, 19, 88, 1024, 7, 300, 42]
ANCHORS = [3, 9, 14]
TOP_K = 4


def dflash2_for(demo, out):
    target = json.loads((demo / "target" / "config.json").read_text())
    vocab, hidden = target["vocab_size"], target["hidden_size"]
    cfg = dict(hidden=hidden, layers=2, heads=4, kv_heads=2, head_dim=32, inter=256, block=8,
               layer_types=["sliding_attention", "full_attention"], window=6,
               rope={"rope_type": "default", "rope_theta": 10000.0}, bias=False,
               dflash2={"conv_kernel_size": 3, "conv_group_size": 16, "selector_rank": 8, "selector_top_k": TOP_K},
               target_layers=target["num_hidden_layers"], tap_ids=[1, 3], vocab=vocab)
    model = fixtures.new_drafter(cfg, torch.Generator().manual_seed(5))
    config = model.config
    config.dflash_config["mask_token_id"] = 4101  # the demo's mask token, inside its embedding
    model.mask_token_id = 4101
    fixtures.save_zlab_layout(model, out)
    return model


def run(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{args[0]} failed:\n{p.stderr[-3000:]}"
    return p


def check_session(session):
    db = sqlite3.connect(session)
    rows = db.execute("SELECT s.mode, s.draft_tokens, s.candidate_ids, s.candidate_scores, s.chosen_candidates, "
                      "s.topk_ids FROM steps s").fetchall()
    db.close()
    assert rows, "no steps recorded"
    overruled, modes = 0, set()
    for mode, drafts, candidates, scores, chosen, topk in rows:
        drafts = np.frombuffer(drafts, "<i4")
        candidates = np.frombuffer(candidates, "<i4").reshape(len(drafts), TOP_K)
        chosen = np.frombuffer(chosen, "<i4")
        assert len(np.frombuffer(scores, "<f4")) == candidates.size
        assert (candidates[np.arange(len(drafts)), chosen] == drafts).all(), "drafts are not the chosen candidates"
        topk = np.frombuffer(topk, "<i4").reshape(len(drafts), -1)
        assert (candidates == topk[:, :TOP_K]).all(), "candidates are not each slot's top-k by logit"
        overruled += int((chosen != 0).sum())
        modes.add(mode)
    assert modes == {0, 1, 2}, modes
    print(f"run: {len(rows)} steps in live, teacher-forced and ddtree runs; the selector overruled the argmax "
          f"in {overruled} slots")


def package_path(model, demo, anchor):
    """The package's greedy selector path for the block at `anchor` of IDS (no cache)."""
    target = AutoModelForCausalLM.from_pretrained(demo / "target", dtype=torch.float32)
    with torch.no_grad():
        hidden_states = target(torch.tensor([IDS]), output_hidden_states=True).hidden_states
        feats = torch.cat([hidden_states[t + 1][0] for t in model.target_layer_ids], -1)
        embed = target.get_input_embeddings().weight
        lm_head = target.get_output_embeddings()
        _, _, states = fixtures.package_forward(model, lm_head, embed, feats, torch.tensor(IDS), anchor)
        path, _, _ = model.propose(states, torch.tensor([IDS[anchor]]), lm_head, 0.0)
    return path[0].tolist()


def main():
    binary, demo, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    drafter = work / "dflash2"
    model = dflash2_for(demo, drafter)

    info = run(binary, "info", str(drafter), "--json").stdout
    assert "DFlash2DraftModel" in info and "not a field the engine knows" not in info, info[:2000]

    session = work / "dflash2.dfi"
    session.unlink(missing_ok=True)
    run(binary, "run", "--target", str(demo / "target"), "--drafter", str(drafter), "--prompts",
        str(demo / "prompts.jsonl"), "--limit", "2", "--max-new-tokens", "24", "--record-top-k", str(TOP_K),
        "--ddtree", str(TOP_K), "-o", str(session), "--progress", "none")
    check_session(session)
    summary = run(binary, "summary", str(session)).stdout
    assert "dflash2" in summary and "ddtree-4" in summary, summary

    out = work / "draft.safetensors"
    run(binary, "draft", "--target", str(demo / "target"), "--drafter", str(drafter), "--ids",
        ",".join(map(str, IDS)), "--anchors", ",".join(map(str, ANCHORS)), "--path", "both", "--out", str(out))
    drafted = load_file(str(out))
    for j, anchor in enumerate(ANCHORS):
        ours = drafted["selector.draft_tokens"][j].tolist()
        theirs = package_path(model, demo, anchor)
        assert ours == theirs, (anchor, ours, theirs)
    print(f"draft: the selector path at {len(ANCHORS)} anchors equals the package's")

    request = {"type": "inspect", "request_id": 1, "target": str(demo / "target"), "drafter": str(drafter),
               "ids": IDS, "anchor": ANCHORS[1], "top_k": TOP_K, "run_id": 1, "step_id": 1}
    served = subprocess.run([binary, "serve"], input=(json.dumps(request) + "\n").encode(), capture_output=True,
                            timeout=300)
    assert served.returncode == 0, served.stderr.decode()[-2000:]
    steps = [json.loads(line) for line in served.stdout.split(b"\n")
             if line.startswith(b"{") and b'"type":"step"' in line.replace(b" ", b"")]
    assert len(steps) == 1 and steps[0]["draft_tokens"] == package_path(model, demo, ANCHORS[1]), steps
    assert len(steps[0]["candidate_ids"]) == TOP_K * 7 and len(steps[0]["chosen_candidates"]) == 7, steps[0]
    print("serve inspect: the re-drafted block carries the selector's path and candidates")


if __name__ == "__main__":
    main()
