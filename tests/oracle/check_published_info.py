"""`dflash-eval info` plans the published MiniMax-M2 and GLM-4.5 / 4.6 configs at their real size.

Each config (gen_configs.py's MINIMAX_M2 without its FP8 quantization_config, as the BF16
conversions publish it; GLM_4_5; GLM_4_6) goes beside a checkpoint of the real size: the tensors
transformers builds for it on the meta device (its state_dict: names and shapes of its in-memory
layout, experts stacked), written as a safetensors header over a sparse data region, so nothing
is stored or read but headers. `info` must count exactly those tensors (transformers'
num_parameters() plus the stored correction-bias buffers) and land within 1% of the published
total.

Usage: check_published_info.py DFLASH_EVAL OUT_DIR
"""

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForCausalLM

from gen_configs import GLM_4_5, GLM_4_6, MINIMAX_M2

MINIMAX_M2_BF16 = {k: v for k, v in MINIMAX_M2.items() if k != "quantization_config"}
# name: (config.json, published total parameters: the model cards' "230B" and "355B")
PUBLISHED = {"MiniMax-M2": (MINIMAX_M2_BF16, 230e9), "GLM-4.5": (GLM_4_5, 355e9), "GLM-4.6": (GLM_4_6, 355e9)}
DEVICES = "cuda:0,cuda:1,cuda:2,cuda:3,cuda:4,cuda:5,cuda:6,cuda:7"  # availability unknown here: planned, not refused


def write_sparse_checkpoint(model_dir: Path, config_dict: dict) -> int:
    """model.safetensors with the header of every tensor transformers' model holds, in bf16; the
    data region is a hole. Returns the parameter count the header describes."""
    (model_dir / "config.json").write_text(json.dumps(config_dict, indent=2))
    config = AutoConfig.from_pretrained(model_dir)
    with torch.device("meta"):
        state = AutoModelForCausalLM.from_config(config).state_dict()
    header, offset, parameters = {"__metadata__": {"format": "pt"}}, 0, 0
    for name, tensor in state.items():
        size = tensor.numel() * 2
        header[name] = {"dtype": "BF16", "shape": list(tensor.shape), "data_offsets": [offset, offset + size]}
        offset += size
        parameters += tensor.numel()
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(model_dir / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + offset)
    return parameters


def main():
    binary, out_dir = sys.argv[1], Path(sys.argv[2])
    shutil.rmtree(out_dir, ignore_errors=True)
    try:
        for name, (config_dict, published) in PUBLISHED.items():
            model_dir = out_dir / name
            model_dir.mkdir(parents=True)
            stored = write_sparse_checkpoint(model_dir, config_dict)
            run = subprocess.run([binary, "info", str(model_dir), "--devices", DEVICES, "--dtype", "bf16", "--json"],
                                 capture_output=True, text=True)
            assert run.returncode == 0, f"{name}: info exited {run.returncode}\n{run.stderr}"
            model = json.loads(run.stdout)["model"]
            assert model["validation"]["valid"], (name, model["validation"])
            memory = model["memory"]
            total, active = memory["total_parameters"], memory["active_parameters"]
            assert total == stored, f"{name}: info counts {total}, the checkpoint holds {stored}"
            gap = abs(total - published) / published
            assert gap < 0.01, f"{name}: {total / 1e9:.2f}B is {gap:.2%} from the published {published / 1e9:.0f}B"
            assert 0 < active < total and len(memory["devices"]) == 8, (name, memory)
            print(f"{name}: total {total / 1e9:.2f}B ({gap:.2%} from the published {published / 1e9:.0f}B), "
                  f"active {active / 1e9:.2f}B, {memory['devices'][0]['bytes'] / 2**30:.1f} GiB on cuda:0")
            (model_dir / "model.safetensors").unlink()  # a sparse file of hundreds of GB, apparently
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
