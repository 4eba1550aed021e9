#!/usr/bin/env python3
"""`dflash-eval diff-dump` against a transformers dump of the same taps.

Builds a tiny random Qwen3 with transformers (as gen_target_models.py does), dumps its
output_hidden_states in transformers' naming (hidden_states.<k> [1, T, H] for k = 0..L, logits
and input_ids with their batch dimension), runs `dflash-eval forward --taps 0..L-1` on the saved
checkpoint, and checks that diff-dump
  - pairs hidden_states.<k> with hidden.<k-1>, the last one with final_hidden, sets the batch
    dimension aside, lists hidden_states.0 and hidden.<L-1> as unmatched, and finds every
    tensor within 1e-4 (exit code 0);
  - names the tensor and position 7 once one layer's position 7 is perturbed (exit code 1),
    in the table, the JSON document and the --out arrays;
  - reads a bf16 dump; refuses a shape mismatch naming the tensor and both shapes (exit 5);
    pairs renamed tensors with --map and refuses a malformed one (exit 2).
With DEMO_DIR (resources/demo), also compares `draft` files: the inference path against the
training path at three anchors (within 1e-4), then names the anchor of a perturbed block.

Usage: check_diff_dump_cli.py DFLASH_EVAL WORK_DIR [DEMO_DIR]
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import Qwen3Config, Qwen3ForCausalLM

SEED = 4321
VOCAB = 1000
LAYERS = 4
SEQ_LEN = 24
POSITION = 7
TOLERANCE = 1e-4


def tiny_qwen3(model_dir: Path):
    torch.manual_seed(SEED)
    config = Qwen3Config(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=LAYERS,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                         max_position_embeddings=512,
                         rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                         tie_word_embeddings=False, initializer_range=0.1, rms_norm_eps=1e-6)
    model = Qwen3ForCausalLM(config)
    with torch.no_grad():  # random norm weights, so a wrongly applied norm shows
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.add_(torch.randn_like(p) * 0.2)
    model.save_pretrained(model_dir, safe_serialization=True)
    return Qwen3ForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()


def diff_dump(exe, *args):
    result = subprocess.run([exe, "diff-dump", *map(str, args)], capture_output=True, text=True)
    print(f"$ diff-dump {' '.join(map(str, args))}  -> exit {result.returncode}\n{result.stdout}{result.stderr}")
    return result


def main():
    exe, work = sys.argv[1], Path(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    model_dir = work / "model"
    model = tiny_qwen3(model_dir)
    ids = torch.randint(0, VOCAB, (1, SEQ_LEN), generator=torch.Generator().manual_seed(SEED + 1))
    with torch.no_grad():
        out = model(input_ids=ids, output_hidden_states=True, use_cache=False)
    assert len(out.hidden_states) == LAYERS + 1
    theirs = {f"hidden_states.{k}": h.contiguous() for k, h in enumerate(out.hidden_states)}
    theirs["logits"] = out.logits.contiguous()
    theirs["input_ids"] = ids
    theirs_file = work / "theirs.safetensors"
    save_file(theirs, str(theirs_file))

    ours_file = work / "ours.safetensors"
    subprocess.run([exe, "forward", "--model", str(model_dir), "--ids", ",".join(map(str, ids[0].tolist())),
                    "--taps", ",".join(map(str, range(LAYERS))), "--out", str(ours_file)], check=True)

    # 1. Everything pairs and matches within 1e-4.
    result = diff_dump(exe, ours_file, theirs_file, "--json", "--tolerance", TOLERANCE)
    assert result.returncode == 0, result.returncode
    report = json.loads(result.stdout)
    pairs = {t["name"]: t["theirs"] for t in report["tensors"]}
    expected = {f"hidden.{k - 1}": f"hidden_states.{k}" for k in range(1, LAYERS)}
    expected.update({"final_hidden": f"hidden_states.{LAYERS}", "logits": "logits", "input_ids": "input_ids"})
    assert pairs == expected, pairs
    assert report["unmatched_ours"] == [f"hidden.{LAYERS - 1}"], report["unmatched_ours"]
    assert report["unmatched_theirs"] == ["hidden_states.0"], report["unmatched_theirs"]
    for t in report["tensors"]:
        assert t["within_tolerance"] and t["max_abs_diff"] <= TOLERANCE, t["name"]
        assert len(t["positions"]["max_abs_diff"]) == SEQ_LEN, t["name"]
        assert min(t["positions"]["cosine"]) > 0.999999, t["name"]
    assert report["within_tolerance"]

    # 2. One layer's position 7 perturbed: that tensor and that position are named.
    perturbed = dict(theirs)
    perturbed["hidden_states.2"] = theirs["hidden_states.2"].clone()
    perturbed["hidden_states.2"][0, POSITION, 5] += 0.01
    perturbed_file = work / "theirs_perturbed.safetensors"
    save_file(perturbed, str(perturbed_file))
    report_file = work / "report.safetensors"
    result = diff_dump(exe, ours_file, perturbed_file, "--out", report_file)
    assert result.returncode == 1, result.returncode
    row = next(line for line in result.stdout.splitlines() if line.startswith("hidden.1 <- hidden_states.2"))
    assert row.split()[-3:-1] == [str(POSITION), str(POSITION)], row  # worst pos, first over tol
    assert f"1 beyond tolerance: hidden.1 (from position {POSITION})" in result.stdout
    arrays = load_file(str(report_file))
    diffs = arrays["hidden.1.max_abs_diff"]
    assert diffs.shape == (SEQ_LEN,)
    assert abs(diffs[POSITION].item() - 0.01) < 1e-4, diffs
    others = torch.cat([diffs[:POSITION], diffs[POSITION + 1:]])
    assert others.max().item() <= TOLERANCE, diffs
    assert arrays["hidden.1.cosine"][POSITION] < 1
    assert arrays["hidden.0.max_abs_diff"].max().item() <= TOLERANCE
    result = diff_dump(exe, ours_file, perturbed_file, "--json")
    flagged = [t for t in json.loads(result.stdout)["tensors"] if not t["within_tolerance"]]
    assert [(t["name"], t["worst_position"], t["first_position_over_tolerance"]) for t in flagged] == \
        [("hidden.1", POSITION, POSITION)], flagged

    # 3. A bf16 dump is read (and differs by bf16 rounding only).
    bf16_file = work / "theirs_bf16.safetensors"
    save_file({k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in theirs.items()}, str(bf16_file))
    result = diff_dump(exe, ours_file, bf16_file, "--json", "--tolerance", "0.1")
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert all(t["theirs_dtype"] in ("BF16", "I64") for t in report["tensors"])
    assert max(t["max_abs_diff"] for t in report["tensors"]) > TOLERANCE

    # 4. Shape mismatch: refused, naming the tensor and both shapes.
    short = dict(theirs)
    short["hidden_states.1"] = theirs["hidden_states.1"][:, :-1].contiguous()
    short_file = work / "theirs_short.safetensors"
    save_file(short, str(short_file))
    result = diff_dump(exe, ours_file, short_file)
    assert result.returncode == 5, result.returncode
    for part in ("hidden.0 <- hidden_states.1", f"[{SEQ_LEN}, 64]", f"[1, {SEQ_LEN - 1}, 64]"):
        assert part in result.stderr, part

    # 5. --map pairs what the rules cannot; a malformed or dangling mapping is a usage error.
    renamed_file = work / "theirs_renamed.safetensors"
    save_file({"target_layer_0": theirs["hidden_states.1"]}, str(renamed_file))
    assert diff_dump(exe, ours_file, renamed_file).returncode == 5  # nothing pairs
    result = diff_dump(exe, ours_file, renamed_file, "--map", "target_layer_0=hidden.0")
    assert result.returncode == 0 and "hidden.0 <- target_layer_0" in result.stdout
    assert diff_dump(exe, ours_file, renamed_file, "--map", "target_layer_0").returncode == 2
    result = diff_dump(exe, ours_file, renamed_file, "--map", "target_layer_0=hidden.99")
    assert result.returncode == 2 and "hidden.99" in result.stderr
    print("diff-dump: forward checks passed")


def check_draft(exe, demo: Path, work: Path):
    """`draft` files: the inference path against the training path of the same anchors
    (tensors paired by name and by --map), one position per anchor; then one anchor's block
    perturbed in one layer."""
    text = "The quick brown fox jumps over the lazy dog and keeps running through the field"
    files = {}
    for path in ("inference", "training"):
        files[path] = work / f"draft_{path}.safetensors"
        subprocess.run([exe, "draft", "--target", str(demo / "target"), "--drafter", str(demo / "drafter-good"),
                        "--text", text, "--anchors", "3,9,15", "--path", path, "--out", str(files[path])],
                       check=True)
    maps = [arg for part in ("layer.0", "layer.1", "logits") for arg in ("--map", f"training.{part}=inference.{part}")]
    result = diff_dump(exe, files["inference"], files["training"], "--json", *maps)
    assert result.returncode == 0, result.returncode
    report = json.loads(result.stdout)
    names = sorted(t["name"] for t in report["tensors"])
    assert names == ["anchors", "context.fc", "context.hidden_norm", "inference.layer.0", "inference.layer.1",
                     "inference.logits", "input_ids"], names
    # The training path's slots' overlap with the target (speculators' accept_rate) has no
    # counterpart on the inference path.
    assert not report["unmatched_ours"] and report["unmatched_theirs"] == ["training.slot_overlap"], report
    layer = next(t for t in report["tensors"] if t["name"] == "inference.layer.1")
    assert len(layer["positions"]["max_abs_diff"]) == 3  # one per anchor

    training = load_file(str(files["training"]))
    training["training.layer.1"][1, 4, :] += 0.5
    perturbed = work / "draft_training_perturbed.safetensors"
    save_file(training, str(perturbed))
    result = diff_dump(exe, files["inference"], perturbed, *maps)
    assert result.returncode == 1, result.returncode
    assert "1 beyond tolerance: inference.layer.1 (from position 1)" in result.stdout
    print("diff-dump: draft checks passed")


if __name__ == "__main__":
    main()
    if len(sys.argv) > 3:
        check_draft(sys.argv[1], Path(sys.argv[3]), Path(sys.argv[2]))
