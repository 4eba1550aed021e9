"""Reference safetensors files for the C++ reader (test_safetensors_oracle).

The `safetensors` package writes them: one file with every dtype the reader supports, rank-0
and zero-size tensors, a non-ASCII name and metadata; and a Qwen3.5-style sharded checkpoint
(vision tower, MTP head, mixed dtypes within a shard) saved by huggingface_hub the way
save_pretrained shards weights. expected.json records what the reference reads back: each
tensor's dtype and shape (as safe_open reports them) and the SHA-256 of its bytes (hashlib),
and for the checkpoint the text-only names, total bytes and the header identity.

Usage: gen_safetensors.py --out OUT_DIR
"""

import argparse
import hashlib
import json
import struct
from pathlib import Path

import torch
from huggingface_hub import save_torch_state_dict
from safetensors import safe_open
from safetensors.torch import save_file

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64, torch.float8_e4m3fn, torch.float8_e5m2]


def random_tensor(dtype, shape, generator):
    if dtype == torch.bool:
        return torch.rand(shape, generator=generator) > 0.5
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        return torch.randint(info.min, info.max, shape, generator=generator, dtype=torch.int64).to(dtype)
    # Doubles scaled wide enough to hit subnormals, infinities and NaN after the fp8 casts.
    return (torch.randn(shape, generator=generator, dtype=torch.float64) * 300).to(dtype)


def tensor_bytes(tensor):
    return tensor.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def describe(path):
    """What the reference reads back from one file."""
    tensors = {}
    with safe_open(path, framework="pt") as f:
        metadata = f.metadata() or {}
        for name in f.keys():
            tensors[name] = {
                "dtype": f.get_slice(name).get_dtype(),
                "shape": list(f.get_slice(name).get_shape()),
                "sha256": hashlib.sha256(tensor_bytes(f.get_tensor(name))).hexdigest(),
            }
    return {"metadata": metadata, "tensors": tensors}


def raw_header(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        f.seek(0)
        return f.read(8 + length)


def all_dtypes(out, generator):
    tensors = {}
    for i, dtype in enumerate(DTYPES):
        name = "t." + str(dtype).removeprefix("torch.")
        tensors[name] = random_tensor(dtype, (i % 4 + 1, 7), generator)
    tensors["rank0.f32"] = torch.tensor(3.5, dtype=torch.float32)
    tensors["rank0.bf16"] = torch.tensor(-0.125, dtype=torch.bfloat16)
    tensors["zero.bf16"] = torch.zeros((0, 7), dtype=torch.bfloat16)
    tensors["zero.i64"] = torch.zeros((3, 0), dtype=torch.int64)
    tensors["名前.weight"] = random_tensor(torch.float32, (2, 2), generator)
    path = out / "all_dtypes.safetensors"
    save_file(tensors, path, metadata={"format": "pt", "note": "ünïcode ✓"})
    return describe(path)


def qwen_text_name(stored):
    """docs/qwen.md 0.3: skip the vision tower and MTP head, strip model.language_model."""
    if stored.startswith("model.visual.") or stored.startswith("mtp."):
        return None
    if stored.startswith("model.language_model."):
        return "model." + stored.removeprefix("model.language_model.")
    return stored


def sharded_checkpoint(out, generator):
    hidden = 64
    state = {"model.language_model.embed_tokens.weight": (torch.bfloat16, (96, hidden)),
             "lm_head.weight": (torch.bfloat16, (96, hidden)),
             "model.language_model.norm.weight": (torch.bfloat16, (hidden,)),
             "model.visual.patch_embed.proj.weight": (torch.bfloat16, (hidden, 3, 2, 4, 4)),
             "model.visual.blocks.0.norm1.weight": (torch.float32, (hidden,)),
             "mtp.fc.weight": (torch.bfloat16, (hidden, 2 * hidden)),
             "mtp.norm.weight": (torch.bfloat16, (hidden,))}
    for layer in range(3):
        prefix = f"model.language_model.layers.{layer}."
        state[prefix + "input_layernorm.weight"] = (torch.bfloat16, (hidden,))
        state[prefix + "mlp.up_proj.weight"] = (torch.bfloat16, (2 * hidden, hidden))
        state[prefix + "linear_attn.A_log"] = (torch.float32, (8,))  # F32 next to BF16, as in real shards
        state[prefix + "linear_attn.dt_bias"] = (torch.bfloat16, (8,))
        state[prefix + "linear_attn.conv1d.weight"] = (torch.bfloat16, (96, 1, 4))
    tensors = {name: random_tensor(dtype, shape, generator) for name, (dtype, shape) in state.items()}
    directory = out / "sharded"
    directory.mkdir(exist_ok=True)
    save_torch_state_dict(tensors, directory, max_shard_size="24KB", safe_serialization=True)
    index = json.loads((directory / "model.safetensors.index.json").read_text())
    shards = sorted(set(index["weight_map"].values()))
    assert len(shards) >= 3, shards  # the point is to exercise the index

    mapped = {}
    for shard in shards:
        for stored, entry in describe(directory / shard)["tensors"].items():
            name = qwen_text_name(stored)
            if name is not None:
                mapped[name] = dict(entry, stored=stored, shard=shard,
                                    nbytes=tensors[stored].numel() * tensors[stored].element_size())
    return {
        "dir": "sharded",
        "shards": shards,
        "tensors": mapped,
        "total_bytes": sum(entry["nbytes"] for entry in mapped.values()),
        "header_sha256": hashlib.sha256(b"".join(raw_header(directory / s) for s in shards)).hexdigest(),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    generator = torch.Generator().manual_seed(1234)
    expected = {"all_dtypes.safetensors": all_dtypes(args.out, generator),
                "checkpoint": sharded_checkpoint(args.out, generator)}
    (args.out / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
