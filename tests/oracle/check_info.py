"""Runs `dflash-eval info` on the checkpoints gen_info_models.py wrote and compares what it
reports with what the safetensors package read (expected.json), checks that the tensors
transformers wrote are exactly the ones the config implies, then checks the
compatibility reports of a good and a bad drafter/target pairing and the exit codes.

Usage: check_info.py DFLASH_EVAL MODELS_DIR
"""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EXIT_OK, EXIT_VALIDATION = 0, 5


def info(binary, *args):
    run = subprocess.run([binary, "info", *map(str, args)], capture_output=True, text=True)
    return run.returncode, run.stdout, run.stderr


def info_json(binary, *args, expect_rc=EXIT_OK):
    rc, out, err = info(binary, *args, "--json")
    assert rc == expect_rc, f"info {args}: exit {rc}, expected {expect_rc}\n{err}"
    return json.loads(out)


def check_inventory(binary, models, expected):
    for name, want in expected.items():
        # drafter_bad's fc.weight is wider than its config implies: a layout issue, exit 5.
        bad_layout = name == "drafter_bad"
        got = info_json(binary, models / name, expect_rc=EXIT_VALIDATION if bad_layout else EXIT_OK)["model"]
        assert got["kind"] == ("drafter" if name.startswith("drafter") else "target"), (name, got["kind"])
        assert got["validation"]["valid"], (name, got["validation"])
        layout = got["weight_layout"]
        moe = (models / name / "parameters.json").exists()  # transformers' counts, written for MoE targets
        if bad_layout:
            assert layout["issues"] == [{"tensor": "fc.weight", "expected": "[64, 128]", "found": "[64, 192]"}], layout
        elif moe:
            assert layout is None, (name, layout)  # expert layouts (stacked or per expert) are checked at load
        else:
            # The tensors transformers (or the DFlash layout) wrote are exactly what the config implies.
            assert layout["issues"] == [], (name, layout)
        w = got["weights"]
        for key in ("tensors", "parameters", "bytes", "skipped_parameters"):
            assert w[key] == want[key], f"{name}: {key} {w[key]} != {want[key]}"
        dtypes = {t["dtype"]: {"tensors": t["tensors"], "bytes": t["bytes"]} for t in w["dtypes"]}
        assert dtypes == want["dtypes"], f"{name}: dtypes {dtypes} != {want['dtypes']}"
        if got["kind"] == "target":
            # The text engine's parameters: everything stored but the vision tower and MTP head
            # (transformers' num_parameters() equals the stored total, checked by the generator).
            memory = got["memory"]
            text = want["parameters"] - want["skipped_parameters"]
            assert memory["total_parameters"] == text, (name, memory)
            if moe:
                hf = json.loads((models / name / "parameters.json").read_text())
                assert memory["total_parameters"] == hf["total"], (name, memory, hf)
                assert memory["active_parameters"] == hf["active"] < hf["total"], (name, memory, hf)
            else:
                assert memory["active_parameters"] == text, (name, memory)  # dense: all active
            assert memory["fits"] and memory["devices"][0]["bytes"] == 4 * text, (name, memory)  # fp32 default


def issues_by_field(report):
    return {i["field"]: i for i in report["issues"]}


def check_pairs(binary, models):
    good = info_json(binary, "--drafter", models / "drafter_good", "--target", models / "target_qwen3")
    c = good["compatibility"]
    assert c["compatible"] and c["issues"] == [], c
    assert c["checked_fc_weight"] and c["checked_embedding_rows"], c

    # Embedding rows found under the Qwen3.5 name model.language_model.embed_tokens.weight.
    c = info_json(binary, "--drafter", models / "drafter_good", "--target", models / "target_qwen3_5")["compatibility"]
    assert c["compatible"] and c["checked_embedding_rows"], c

    c = info_json(binary, "--drafter", models / "drafter_bad", "--target", models / "target_qwen3",
                  expect_rc=EXIT_VALIDATION)["compatibility"]
    issues = issues_by_field(c)
    assert (c["errors"], c["warnings"]) == (2, 1), c
    assert issues["fc.weight"]["drafter_value"] == "[64, 192]", issues
    assert issues["fc.weight"]["target_value"] == "2 taps x hidden 64 = 128", issues
    assert issues["dflash_config.mask_token_id"]["target_value"] == "embed_tokens rows 512", issues
    assert issues["dflash_config.target_layer_ids[1]"]["severity"] == "warning", issues

    rc, text, _ = info(binary, "--drafter", models / "drafter_bad", "--target", models / "target_qwen3")
    assert rc == EXIT_VALIDATION and "NOT compatible (2 error(s), 1 warning(s))" in text, text


def check_invalid_config(binary, models):
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "drafter"
        shutil.copytree(models / "drafter_good", bad)
        config = json.loads((bad / "config.json").read_text())
        config["num_key_value_heads"] = 3
        config["dflash_config"]["block_size"] = 8  # disagrees with the flat block_size 4
        (bad / "config.json").write_text(json.dumps(config))
        got = info_json(binary, bad, expect_rc=EXIT_VALIDATION)["model"]
        fields = sorted(p["field"] for p in got["validation"]["problems"])
        assert fields == ["dflash_config.block_size", "num_key_value_heads"], fields
        assert got["weights"]["tensors"] == 25, got["weights"]

        (bad / "config.json").write_text("{ not json")
        rc, _, err = info(binary, bad)
        assert rc == 4 and "config.json" in err, (rc, err)


def check_default_taps_from_target(binary, models):
    """A drafter naming neither taps nor target depth takes the depth of the target it is paired with."""
    with tempfile.TemporaryDirectory() as tmp:
        drafter = Path(tmp) / "drafter"
        shutil.copytree(models / "drafter_good", drafter)
        config = json.loads((drafter / "config.json").read_text())
        del config["num_target_layers"], config["dflash_config"]["target_layer_ids"]
        (drafter / "config.json").write_text(json.dumps(config))
        alone = info_json(binary, drafter, expect_rc=EXIT_VALIDATION)["model"]
        assert [p["field"] for p in alone["validation"]["problems"]] == ["dflash_config.target_layer_ids"], alone
        pair = info_json(binary, "--drafter", drafter, "--target", models / "target_qwen3")
        geometry = pair["drafter"]["geometry"]
        assert geometry["target_layer_ids"] == [1, 3] and geometry["target_layer_ids_source"] == "default rule", geometry
        # The taps as each format states them: speculators and transformers count the embedding as 0.
        assert geometry["taps_by_format"] == {"zlab_target_layer_ids": [1, 3],
                                              "speculators_aux_hidden_state_layer_ids": [2, 4],
                                              "transformers_hidden_states": [2, 4]}, geometry["taps_by_format"]
        # Every field two formats read differently, as stated here and as the other would take it.
        conventions = {c["field"]: c for c in geometry["conventions"]}
        assert {"taps", "mask", "drafts", "vocabulary", "rope", "block"} <= conventions.keys(), conventions
        assert "target_layer_ids [1, 3]" in conventions["taps"]["stated"], conventions["taps"]
        assert "aux_hidden_state_layer_ids [2, 4]" in conventions["taps"]["other_readers"], conventions["taps"]
        rc, text, _ = info(binary, "--drafter", drafter, "--target", models / "target_qwen3")
        assert rc == 0 and "conventions, as stated here" in text and "one layer earlier" in text, text
        assert pair["compatibility"]["compatible"], pair["compatibility"]


def check_placement(binary, models):
    """Two devices: the layers split in order, the tied head copied to the last device; a cap
    below the need is refused naming the device and the shortfall, with exit code 5."""
    target = models / "target_qwen3_tied_bias"
    alone = info_json(binary, target, "--dtype", "bf16")["model"]["memory"]
    split = info_json(binary, target, "--devices", "cpu,cpu", "--dtype", "bf16")["model"]["memory"]
    first, last = split["devices"]
    layers = alone["devices"][0]["layers"]
    assert (first["first_layer"], first["layers"], last["first_layer"]) == (0, (layers + 1) // 2, (layers + 1) // 2), split
    assert first["embeddings"] and not first["head"] and last["head"] and not last["embeddings"], split
    geometry = info_json(binary, target)["model"]["geometry"]
    copy = 2 * geometry["vocab_size"] * geometry["hidden_size"]
    assert first["bytes"] + last["bytes"] == alone["devices"][0]["bytes"] + copy, (alone, split)

    rc, out, err = info(binary, target, "--max-memory", "cpu=2KiB", "--json")
    assert rc == EXIT_VALIDATION, (rc, err)
    memory = json.loads(out)["model"]["memory"]
    assert not memory["fits"] and "cpu cannot hold" in memory["refusal"] and " short" in memory["refusal"], memory
    rc, text, _ = info(binary, target, "--max-memory", "cpu=2KiB")
    assert rc == EXIT_VALIDATION and "DOES NOT FIT" in text and "cpu cannot hold" in text and "short" in text, text
    rc, _, err = info(binary, target, "--max-memory", "cpu=lots")
    assert rc == 2 and "malformed size 'lots'" in err, (rc, err)


def main():
    binary, models = sys.argv[1], Path(sys.argv[2])
    expected = json.loads((models / "expected.json").read_text())
    check_inventory(binary, models, expected)
    check_pairs(binary, models)
    check_invalid_config(binary, models)
    check_default_taps_from_target(binary, models)
    check_placement(binary, models)
    print(f"info matches the safetensors package on {len(expected)} checkpoints; pair reports and exit codes as expected")


if __name__ == "__main__":
    main()
