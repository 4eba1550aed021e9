"""`dflash-eval info` plans the published MiniMax-M2, GLM-4.5 / 4.6, DeepSeek-V3, Kimi K2.5 and
GLM-5 configs at their real size.

Each config (gen_configs.py's MINIMAX_M2, DEEPSEEK_V3 and KIMI_K2_5 without their quantization_config,
as the BF16 conversions publish them; GLM_4_5; GLM_4_6) goes beside a checkpoint of the real size: the tensors
transformers builds for it on the meta device (its state_dict: names and shapes of its in-memory
layout, experts stacked), written as a safetensors header over a sparse data region, so nothing
is stored or read but headers. `info` must count exactly those tensors (transformers'
num_parameters() plus the stored correction-bias buffers), land within 1% of the published
total, and split it over 8 devices by bytes (no device above an even share plus one layer).
Kimi K2.5's checkpoint holds its text model (DeepseekV3ForCausalLM of its text_config) under
the published names (language_model.model.*, language_model.lm_head); the vision tower is not
counted.

Usage: check_published_info.py DFLASH_EVAL OUT_DIR
"""

import json
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModelForCausalLM

from gen_configs import DEEPSEEK_V3, GLM_4_5, GLM_4_6, GLM_5, KIMI_K2_5, MINIMAX_M2


def bf16(config):
    return {k: v for k, v in config.items() if k != "quantization_config"}


# name: (config.json, published total parameters: the model cards' "230B" and "355B", DeepSeek-V3's
# technical report's 671B (the MTP module's 14B apart), the Hub's 1.03T for the Kimi K2 text model, GLM-5's 744B)
PUBLISHED = {"MiniMax-M2": (bf16(MINIMAX_M2), 230e9), "GLM-4.5": (GLM_4_5, 355e9), "GLM-4.6": (GLM_4_6, 355e9),
             "DeepSeek-V3": (bf16(DEEPSEEK_V3), 671e9), "Kimi-K2.5": (bf16(KIMI_K2_5), 1.03e12),
             "GLM-5": (GLM_5, 744e9)}
DEVICES = "cuda:0,cuda:1,cuda:2,cuda:3,cuda:4,cuda:5,cuda:6,cuda:7"  # availability unknown here: planned, not refused


def write_sparse_checkpoint(model_dir: Path, config_dict: dict) -> int:
    """model.safetensors with the header of every tensor transformers' model holds, in bf16; the
    data region is a hole. Returns the parameter count the header describes and the largest
    part a device must take whole (a layer, the embeddings or the head)."""
    (model_dir / "config.json").write_text(json.dumps(config_dict, indent=2))
    config, prefix = AutoConfig.from_pretrained(model_dir), ""
    if hasattr(config, "text_config"):  # a vision-language config: its text model, as the published files name it
        config, prefix = config.text_config, "language_model."
    with torch.device("meta"):
        state = {prefix + k: v for k, v in AutoModelForCausalLM.from_config(config).state_dict().items()}
    header, offset, parameters, parts = {"__metadata__": {"format": "pt"}}, 0, 0, {}
    for name, tensor in state.items():
        layer = re.search(r"layers\.(\d+)\.", name)
        part = int(layer.group(1)) if layer else name
        parts[part] = parts.get(part, 0) + tensor.numel()
        size = tensor.numel() * 2
        header[name] = {"dtype": "BF16", "shape": list(tensor.shape), "data_offsets": [offset, offset + size]}
        offset += size
        parameters += tensor.numel()
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(model_dir / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + offset)
    return parameters, max(parts.values())


def main():
    binary, out_dir = sys.argv[1], Path(sys.argv[2])
    shutil.rmtree(out_dir, ignore_errors=True)
    try:
        for name, (config_dict, published) in PUBLISHED.items():
            model_dir = out_dir / name
            model_dir.mkdir(parents=True)
            stored, largest_part = write_sparse_checkpoint(model_dir, config_dict)
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
            # Split by bytes: no device holds more than an even share and one part that cannot be cut.
            shares = [device["bytes"] for device in memory["devices"]]
            assert max(shares) <= 2 * (total / 8 + largest_part), (name, shares, largest_part)
            print(f"{name}: total {total / 1e9:.2f}B ({gap:.2%} from the published {published / 1e9:.0f}B), "
                  f"active {active / 1e9:.2f}B, {min(shares) / 2**30:.1f} to {max(shares) / 2**30:.1f} GiB a device")
            (model_dir / "model.safetensors").unlink()  # a sparse file of hundreds of GB, apparently
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
