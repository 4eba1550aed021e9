"""`dflash-eval serve`'s inspect requests on the bundled demo models, through the protocol
(JSON header lines, binary payloads): one block's attention of every drafter layer (each row a
distribution, zero exactly where the returned mask forbids), its masks, its hidden-state
statistics (the target taps' per-position mean/std/rms/abs-max checked against transformers'
hidden_states on the same ids), a re-draft with another checkpoint and mask variant, and a
bad request answered with an error while the server keeps serving. Requests queue: all of them
are answered although the input ends right after them.

Usage: check_serve_cli.py DFLASH_EVAL DEMO_DIR
"""

import json
import struct
import subprocess
import sys
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

IDS = [510, 1027, 27, 41, 339, 1400, 12, 77, 901, 64, 345, 2000, 19, 88, 1024, 7, 300, 42]
ANCHOR = 9
STATS = ("mean", "std", "rms", "absmax", "nan", "inf", "histogram", "histogram_range")


def frames(stream: bytes):
    """Splits the engine's output into (header, payload) pairs."""
    pos = 0
    while pos < len(stream):
        end = stream.index(b"\n", pos)
        header = json.loads(stream[pos:end])
        pos = end + 1
        size = header.get("payload_bytes", 0)
        yield header, stream[pos:pos + size]
        pos += size


def serve(binary, requests):
    text = "".join(json.dumps(r) + "\n" for r in requests)
    p = subprocess.run([binary, "serve"], input=text.encode(), capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode()
    log = p.stderr.decode()
    # Models stay loaded between requests: one target and each drafter read once.
    assert log.count("loading target") == 1, log
    assert log.count("loading drafter") == len({r["drafter"] for r in requests if "drafter" in r}), log
    by_request, current = {}, []
    for header, payload in frames(p.stdout):
        if header["type"] == "hello":
            continue
        current.append((header, payload))
        if header["type"] in ("done", "error"):
            by_request[header["request_id"]] = current
            current = []
    return by_request


def inspect(demo, request_id, drafter, **extra):
    return {"type": "inspect", "request_id": request_id, "target": str(demo / "target"),
            "drafter": str(demo / drafter), "ids": IDS, "anchor": ANCHOR, "top_k": 4,
            "run_id": 3, "step_id": 40 + request_id, **extra}


def floats(payload):
    return struct.unpack(f"<{len(payload) // 4}f", payload)


def check_block(answer, demo, drafter_config):
    done = answer[-1][0]
    assert done["type"] == "done" and done["request"] == "inspect", done
    steps = [h for h, _ in answer if h["type"] == "step"]
    assert len(steps) == 1 and steps[0]["anchor_position"] == ANCHOR and steps[0]["step_id"] == 41
    assert len(steps[0]["draft_tokens"]) == drafter_config["dflash_config"]["block_size"] - 1
    tensors = {h["name"]: (h, p) for h, p in answer if h["type"] == "tensor"}
    mask_header, mask = tensors["drafter.mask.full"]
    b, keys = mask_header["shape"]
    assert keys == ANCHOR + b, mask_header  # reference mask: context 0..anchor-1, then the block
    for layer in range(drafter_config["num_hidden_layers"]):
        header, payload = tensors[f"drafter.layers.{layer}.attn.probs"]
        heads, rows, columns = header["shape"]
        assert (rows, columns) == (b, keys) and header["layout"] == "head,query,key", header
        probs = floats(payload)
        for h in range(heads):
            for q in range(rows):
                row = probs[(h * rows + q) * columns:(h * rows + q + 1) * columns]
                assert abs(sum(row) - 1) < 1e-4, (layer, h, q, sum(row))
                for k, allowed in enumerate(mask[q * columns:(q + 1) * columns]):
                    assert (row[k] > 0) == bool(allowed), (layer, h, q, k, row[k], allowed)

    stats = {(h["name"], h["layer"]): h["values_f32"] for h, _ in answer if h["type"] == "statistic"}
    taps = drafter_config["dflash_config"]["target_layer_ids"]
    expected_names = {(f"target.tap.{s}", t) for s in STATS for t in taps}
    expected_names |= {(f"drafter.{n}.{s}", -1) for n in ("fc", "hidden_norm") for s in STATS}
    expected_names |= {(f"drafter.layer.{s}", l) for s in STATS for l in range(drafter_config["num_hidden_layers"])}
    assert set(stats) == expected_names, set(stats) ^ expected_names
    for l in range(drafter_config["num_hidden_layers"]):
        assert len(stats[("drafter.layer.mean", l)]) == b
        assert sum(stats[("drafter.layer.histogram", l)]) == b * drafter_config["hidden_size"]

    # The taps' statistics against transformers' hidden_states over the context positions.
    model = AutoModelForCausalLM.from_pretrained(demo / "target", dtype=torch.float32)
    with torch.no_grad():
        hidden = model(torch.tensor([IDS]), output_hidden_states=True).hidden_states
    worst = 0.0
    for t in taps:
        x = hidden[t + 1][0, :ANCHOR].double()
        reference = {"mean": x.mean(-1), "std": x.std(-1, unbiased=False), "rms": x.pow(2).mean(-1).sqrt(),
                     "absmax": x.abs().amax(-1)}
        for name, values in reference.items():
            ours = torch.tensor(stats[(f"target.tap.{name}", t)], dtype=torch.float64)
            assert ours.shape == values.shape, (name, t)
            worst = max(worst, (ours - values).abs().max().item())
    assert worst < 1e-4, worst
    print(f"tap statistics vs transformers hidden_states: max abs diff {worst:.2e}")


def main():
    binary, demo = sys.argv[1], Path(sys.argv[2])
    config = json.loads((demo / "drafter-good" / "config.json").read_text())
    answers = serve(binary, [
        inspect(demo, 1, "drafter-good"),
        inspect(demo, 5, "drafter-good", attention=False, statistics=False),
        inspect(demo, 2, "drafter-good", anchor=len(IDS)),  # outside the sequence
        {"type": "no-such-request", "request_id": 3},
        inspect(demo, 4, "drafter-early", mask_variant="anchor-visible", statistics=False, attention=False),
    ])
    check_block(answers[1], demo, config)
    error = answers[2][-1][0]
    assert error["type"] == "error" and "outside the sequence" in error["message"], error
    unknown = answers[3][-1][0]
    assert unknown["type"] == "error" and "no-such-request" in unknown["message"], unknown
    redraft = answers[4]
    assert redraft[-1][0]["type"] == "done", redraft[-1][0]
    step = next(h for h, _ in redraft if h["type"] == "step")
    assert step["mask_variant"] == "anchor-visible", step
    names = {h["name"] for h, _ in redraft if h["type"] == "tensor"}
    assert names == {"drafter.mask.full"}, names  # anchor-visible mask; no attention asked
    mask_header = next(h for h, _ in redraft if h["type"] == "tensor")
    assert mask_header["shape"][1] == ANCHOR + 1 + mask_header["shape"][0], mask_header  # sees the anchor row
    assert not any(h["type"] == "statistic" for h, _ in redraft)
    print("serve inspect: attention, masks, statistics, re-draft and errors as specified")


if __name__ == "__main__":
    main()
