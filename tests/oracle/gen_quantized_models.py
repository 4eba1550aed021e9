#!/usr/bin/env python3
"""Quantised Qwen3 targets and their references, one directory per format under OUT/.

Each OUT/<name>/ holds a tiny random Qwen3 (bf16 weights, as published checkpoints are) stored
quantised the way its format's own tools write it, and:
  dequantized.safetensors  every quantised weight as the reference dequantises it (fp32, the
                           values exact), under the unquantised name (<module>.weight)
  reference.safetensors    input_ids [T] and logits [T, V]: the dequantised model run by
                           transformers in fp32

The quantisers and the references:
  fp8_block          transformers' FP8 quantiser (integrations/finegrained_fp8.py Fp8Quantize,
                     weight_block_size [32, 32]) writes the checkpoint; transformers loads it with
                     FineGrainedFP8Config(dequantize=True) (its Fp8Dequantize) as the reference
  fp8_block_moe      the same on a Qwen3-MoE (four experts, stored one tensor per expert as
                     save_pretrained writes them; the router stays unquantised); transformers
                     dequantises the experts into its stacked layout, split back per expert here
  fp8_block_ragged   weight_block_size [64, 48]: blocks that do not divide the weights (the last
                     ones partial), quantised here per block as Fp8Quantize does per whole block;
                     reference: transformers' _dequantize_fp8_weight (the path that handles
                     partial blocks) in fp32
  ct_*               compressed-tensors (the pinned package) applies each scheme and its own
                     ModelCompressor compresses and saves; transformers loads the checkpoint with
                     CompressedTensorsConfig(run_compressed=False), which decompresses through
                     the package's compressors, as the reference:
                       ct_w4_group       pack-quantized INT4, group 32, symmetric; ignore lists
                                         lm_head and layer 1's down_proj (a "re:" pattern)
                       ct_w4_group_asym  pack-quantized INT4, group 32, zero points
                       ct_w8_channel     pack-quantized INT8, per channel
                       ct_w4_channel_asym pack-quantized INT4, per channel, zero points
                       ct_fp8_tensor     float-quantized FP8, one scale per tensor
                       ct_fp8_channel    float-quantized FP8, per channel
                       ct_fp8_block      float-quantized FP8, 32 x 32 blocks
                       ct_nvfp4          nvfp4-pack-quantized (E2M1, FP8 group scales, global scale)
  modelopt_nvfp4     NVIDIA ModelOpt's NVFP4 layout (hf_quant_config.json, weight uint8 two E2M1
                     codes a byte low nibble first, weight_scale F8_E4M3 per 16 inputs row-major,
                     weight_scale_2 = amax / (6 * 448) fp32, input_scale), as ModelOpt exports it
                     and vLLM's modelopt loader reads it; written here. Reference: the value vLLM's
                     NVFP4 emulation computes (nvfp4_emulation_utils.dequantize_to_dtype, unswizzled):
                     code * (fp32(weight_scale) * weight_scale_2) in fp32
  gptq               GPTQ v1 ("checkpoint_format": "gptq", AutoGPTQ's layout as vLLM's gptq loader
                     and quant_utils.pack_rows describe it): qweight int32 [in/8, out], input 8w+j
                     at bits 4j; qzeros int32 [groups, out/8] along the row, each stored one less
                     than applied; scales fp16 [groups, out]; g_idx = i // group_size. Reference:
                     scales[g] * (q - (z + 1)) in fp16 (AutoGPTQ's dequantisation)
  gptq_act_order     the same with desc_act: true and a permuted g_idx (inputs grouped by an order)
  awq                AutoAWQ's GEMM layout (vLLM's auto_awq.py / quant_utils.awq_pack): qweight
                     int32 [in, out/8] and qzeros [groups, out/8], outputs interleaved 0 2 4 6 1 3 5 7
                     within a word; scales fp16. Reference: (q - z) * s in fp16 (AutoAWQ's)
Written from those descriptions, not from the packages' code (none of them is a dependency).

OUT/bad/<case>/: checkpoints the engine must refuse with an error that names the file, the
tensor, the config field and both shapes (each a copy of one above with one thing wrong):
  fp8_block_size_disagrees   weight_block_size [16, 32] against scales written for [32, 32]
  ct_w4_packed_short         one weight_packed a column short
  ct_w4_num_bits_disagrees   num_bits 8 against words packed with 4 bits
  gptq_group_size_disagrees  group_size 64 against qzeros and scales of 32-input groups
  gptq_act_order_without_g_idx  desc_act: true and no g_idx tensors

Usage: gen_quantized_models.py OUT_DIR
"""

import json
import sys
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from transformers import (AutoModelForCausalLM, FineGrainedFP8Config, Qwen3Config, Qwen3ForCausalLM, Qwen3MoeConfig,
                          Qwen3MoeForCausalLM)
from transformers.integrations.finegrained_fp8 import Fp8Quantize, _dequantize_fp8_weight
from transformers.utils.quantization_config import CompressedTensorsConfig

SEED = 1234
VOCAB = 1000
SEQ_LEN = 64
FP8_MAX = torch.finfo(torch.float8_e4m3fn).max  # 448
E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


GEOMETRY = dict(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                head_dim=16, tie_word_embeddings=False, initializer_range=0.2, max_position_embeddings=256)


def qwen3():
    """Two layers, GQA, untied head. Weights of order one (initializer_range 0.2) and perturbed
    norms, so the logits are of order one and the 1e-5 tolerance means something."""
    torch.manual_seed(SEED)
    return perturbed_bf16(Qwen3ForCausalLM(Qwen3Config(intermediate_size=128, **GEOMETRY)))


def qwen3_moe():
    """The same with four experts of 32 (two a token) in every layer, stored one tensor per expert."""
    torch.manual_seed(SEED)
    return perturbed_bf16(Qwen3MoeForCausalLM(Qwen3MoeConfig(intermediate_size=128, moe_intermediate_size=32, num_experts=4,
                                                             num_experts_per_tok=2, norm_topk_prob=True, **GEOMETRY)))


def perturbed_bf16(model):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.add_(torch.randn_like(p) * 0.2)
    return model.to(torch.bfloat16).eval()


def projections(state):
    return [k for k in state if k.startswith("model.layers.") and k.endswith("proj.weight")]


def input_ids():
    return torch.randint(0, VOCAB, (SEQ_LEN,), generator=torch.Generator().manual_seed(SEED + 1))


def logits_of(model):
    with torch.no_grad():
        return model(input_ids=input_ids()[None], use_cache=False).logits[0].float().contiguous()


def write_references(model_dir: Path, dequantized: dict, model):
    """dequantized: <module>.weight -> the reference's values; model: the reference fp32 model."""
    save_file({k: v.float().contiguous() for k, v in dequantized.items()}, str(model_dir / "dequantized.safetensors"))
    save_file({"input_ids": input_ids(), "logits": logits_of(model)}, str(model_dir / "reference.safetensors"))
    print(f"{model_dir.name}: {len(dequantized)} quantised weights")


def fp32_model_with(model_dir: Path, dequantized: dict):
    """The saved model's unquantised tensors and the dequantised weights, in a fp32 Qwen3."""
    config = Qwen3Config.from_pretrained(model_dir)
    config.quantization_config = None
    model = Qwen3ForCausalLM(config).float().eval()
    state = model.state_dict()
    with safe_open(str(model_dir / "model.safetensors"), "pt") as f:
        for k in f.keys():
            if k in state and k not in dequantized:
                state[k] = f.get_tensor(k).float()
    state.update({k: v.float() for k, v in dequantized.items()})
    model.load_state_dict(state)
    return model


def rewrite(model_dir: Path, tensors: dict, quantization_config: dict):
    save_file(tensors, str(model_dir / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((model_dir / "config.json").read_text())
    config["quantization_config"] = quantization_config
    (model_dir / "config.json").write_text(json.dumps(config, indent=2))


# --- FP8 block-scaled (transformers) -----------------------------------------------------------

class _Quantizer:
    def __init__(self, config):
        self.quantization_config = config


def per_expert(state: dict, name: str):
    """A per-expert weight's value in transformers' stacked experts (gate_up_proj [E, 2I, H]: gate
    rows, then up rows; down_proj [E, H, I])."""
    prefix, expert, proj = name.rsplit(".", 3)[0], int(name.split(".")[-3]), name.split(".")[-2]
    stacked = state[prefix + (".down_proj" if proj == "down_proj" else ".gate_up_proj")][expert]
    if proj == "down_proj":
        return stacked
    half = stacked.shape[0] // 2
    return stacked[:half] if proj == "gate_proj" else stacked[half:]


def fp8_block(out: Path, name="fp8_block", build=qwen3):
    model_dir = out / name
    build().save_pretrained(model_dir)
    tensors = load_file(str(model_dir / "model.safetensors"))
    quantize = Fp8Quantize(_Quantizer(FineGrainedFP8Config(weight_block_size=(32, 32))))
    for name in projections(tensors):
        tensors.update(quantize.convert({name: tensors.pop(name)}))
    rewrite(model_dir, tensors, {"quant_method": "fp8", "weight_block_size": [32, 32], "activation_scheme": "dynamic",
                                 "fmt": "e4m3", "modules_to_not_convert": ["lm_head"]})
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32,
                                                 quantization_config=FineGrainedFP8Config(dequantize=True)).eval()
    state = model.state_dict()
    write_references(model_dir, {k: per_expert(state, k) if ".mlp.experts." in k else state[k]
                                 for k in projections(tensors)}, model)


def fp8_block_ragged(out: Path):
    """Blocks of 64 x 48 over 64- and 128-wide weights: partial blocks at the ends."""
    model_dir = out / "fp8_block_ragged"
    qwen3().save_pretrained(model_dir)
    tensors = load_file(str(model_dir / "model.safetensors"))
    block = (64, 48)
    dequantized = {}
    for name in projections(tensors):
        w = tensors.pop(name).float()
        rows, cols = w.shape
        grid = (-(-rows // block[0]), -(-cols // block[1]))
        padded = torch.zeros(grid[0] * block[0], grid[1] * block[1])
        padded[:rows, :cols] = w
        amax = padded.unflatten(0, (grid[0], block[0])).unflatten(-1, (grid[1], block[1])).abs().amax((1, 3))
        scale_inv = torch.where(amax > 0, amax / FP8_MAX, torch.ones_like(amax))
        expanded = scale_inv.repeat_interleave(block[0], 0).repeat_interleave(block[1], 1)[:rows, :cols]
        codes = torch.clamp(w / expanded, -FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        tensors[name], tensors[name + "_scale_inv"] = codes, scale_inv.contiguous()
        dequantized[name] = _dequantize_fp8_weight(codes, scale_inv, list(block), torch.float32)
    rewrite(model_dir, tensors, {"quant_method": "fp8", "weight_block_size": list(block), "activation_scheme": "dynamic"})
    write_references(model_dir, dequantized, fp32_model_with(model_dir, dequantized))


# --- compressed-tensors ------------------------------------------------------------------------

def ct_scheme(kind):
    from compressed_tensors.quantization import QuantizationArgs, QuantizationScheme
    from compressed_tensors.quantization.quant_scheme import preset_name_to_scheme

    def args(**kw):
        return QuantizationScheme(targets=["Linear"], weights=QuantizationArgs(**kw))

    return {
        "ct_w4_group": lambda: args(num_bits=4, type="int", strategy="group", group_size=32, symmetric=True),
        "ct_w4_group_asym": lambda: args(num_bits=4, type="int", strategy="group", group_size=32, symmetric=False),
        "ct_w8_channel": lambda: args(num_bits=8, type="int", strategy="channel", symmetric=True),
        "ct_w4_channel_asym": lambda: args(num_bits=4, type="int", strategy="channel", symmetric=False),
        "ct_fp8_tensor": lambda: preset_name_to_scheme("FP8", ["Linear"]),
        "ct_fp8_channel": lambda: preset_name_to_scheme("FP8_DYNAMIC", ["Linear"]),
        "ct_fp8_block": lambda: args(num_bits=8, type="float", strategy="block", block_structure=[32, 32], symmetric=True),
        "ct_nvfp4": lambda: preset_name_to_scheme("NVFP4A16", ["Linear"]),
    }[kind]()


CT_FORMAT = {"ct_fp8_tensor": "float-quantized", "ct_fp8_channel": "float-quantized", "ct_fp8_block": "float-quantized",
             "ct_nvfp4": "nvfp4-pack-quantized"}


def ct_calibrate(model):
    """Each quantised module's weight scales (and zero points, global scale) from its own
    min/max through the package's calculate_qparams, as a weight observer would set them."""
    from compressed_tensors.quantization.utils import calculate_qparams, generate_gparam
    for module in model.modules():
        scheme = getattr(module, "quantization_scheme", None)
        if scheme is None:
            continue
        w, a = module.weight.data, scheme.weights
        if a.strategy in ("group", "tensor_group"):
            g = w.unflatten(-1, (-1, a.group_size))
            low, high = g.amin(-1), g.amax(-1)
        elif a.strategy == "channel":
            low, high = w.amin(-1, keepdim=True), w.amax(-1, keepdim=True)
        elif a.strategy == "block":
            bh, bw = a.block_structure
            g = w.unflatten(0, (-1, bh)).unflatten(-1, (-1, bw))
            low, high = g.amin((1, 3)), g.amax((1, 3))
        else:
            low, high = w.amin(), w.amax()
        global_scale = None
        if a.strategy == "tensor_group":
            global_scale = generate_gparam(w.amin(), w.amax())
            module.weight_global_scale.data.copy_(global_scale)
        scale, zero = calculate_qparams(low, high, a, global_scale=global_scale)
        module.weight_scale.data.copy_(scale.reshape(module.weight_scale.shape))
        if hasattr(module, "weight_zero_point"):
            module.weight_zero_point.data.copy_(zero.reshape(module.weight_zero_point.shape))


def compressed_tensors_model(out: Path, name: str):
    from compressed_tensors.compressors import ModelCompressor
    from compressed_tensors.quantization import QuantizationConfig, apply_quantization_config
    model_dir = out / name
    model = qwen3()
    ignore = ["lm_head"] + ([r"re:.*layers\.1\.mlp\.down_proj$"] if name == "ct_w4_group" else [])
    config = QuantizationConfig(config_groups={"group_0": ct_scheme(name)}, ignore=ignore,
                                quantization_status="initialized")
    apply_quantization_config(model, config)
    ct_calibrate(model)
    compressor = ModelCompressor.from_pretrained_model(model, CT_FORMAT.get(name, "pack-quantized"))
    compressor.compress_model(model)
    model_dir.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(model_dir)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(model_dir / "model.safetensors"),
              metadata={"format": "pt"})
    compressor.update_config(str(model_dir))
    reference = AutoModelForCausalLM.from_pretrained(
        model_dir, dtype=torch.float32, quantization_config=CompressedTensorsConfig(run_compressed=False)).eval()
    state = reference.state_dict()
    with safe_open(str(model_dir / "model.safetensors"), "pt") as f:
        stored = {k: f.get_slice(k).get_dtype() for k in f.keys()}
    quantised = [k for k in state if k.endswith(".weight") and stored.get(k, "F8_E4M3") == "F8_E4M3"]
    write_references(model_dir, {k: state[k] for k in quantised}, reference)


# --- ModelOpt NVFP4 ----------------------------------------------------------------------------

def e2m1_codes(x):
    """Nearest E2M1 code of each value (ties to the smaller magnitude's code)."""
    magnitude = (x.abs()[..., None] - E2M1[:8]).abs().argmin(-1)
    return torch.where(x < 0, magnitude + 8, magnitude).to(torch.uint8)


def modelopt_nvfp4(out: Path):
    model_dir = out / "modelopt_nvfp4"
    qwen3().save_pretrained(model_dir)
    tensors = load_file(str(model_dir / "model.safetensors"))
    group = 16
    dequantized = {}
    for name in projections(tensors):
        module = name[: -len(".weight")]
        w = tensors.pop(name).float()
        scale_2 = (w.abs().amax() / (6.0 * FP8_MAX)).float()
        scale = (w.unflatten(-1, (-1, group)).abs().amax(-1) / (6.0 * scale_2)).to(torch.float8_e4m3fn)
        effective = scale.float() * scale_2
        codes = e2m1_codes(w.unflatten(-1, (-1, group)) / effective[..., None]).flatten(-2)
        tensors[name] = (codes[:, 0::2] | (codes[:, 1::2] << 4)).contiguous()
        tensors[module + ".weight_scale"] = scale.contiguous()
        tensors[module + ".weight_scale_2"] = scale_2.reshape(())
        tensors[module + ".input_scale"] = torch.tensor(1.0 / 448.0)
        dequantized[name] = (E2M1[codes.long()].unflatten(-1, (-1, group)) * effective[..., None]).flatten(-2)
    save_file(tensors, str(model_dir / "model.safetensors"), metadata={"format": "pt"})
    (model_dir / "hf_quant_config.json").write_text(json.dumps(
        {"producer": {"name": "modelopt", "version": "0.29.0"},
         "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": None, "group_size": group,
                          "exclude_modules": ["lm_head"]}}, indent=2))
    write_references(model_dir, dequantized, fp32_model_with(model_dir, dequantized))


# --- GPTQ and AWQ ------------------------------------------------------------------------------

AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]  # the output stored in each nibble slot of a word


def pack_words(codes, along_rows, order=range(8)):
    """Eight 4-bit codes a word, slot s holding the code at position order[s] of its eight."""
    codes = codes.to(torch.int64)
    if along_rows:
        codes = codes.t()
    groups = codes.unflatten(-1, (-1, 8))
    words = torch.zeros(groups.shape[:-1], dtype=torch.int64)
    for slot, position in enumerate(order):
        words |= groups[..., position] << (4 * slot)
    words = torch.where(words >= 2 ** 31, words - 2 ** 32, words).to(torch.int32)
    return (words.t() if along_rows else words).contiguous()


def int4_quantize(w_t, group_of, groups):
    """w_t [in, out]: per group and output an asymmetric 4-bit scale and zero point."""
    low = torch.stack([w_t[group_of == g].amin(0) for g in range(groups)]).clamp(max=0)
    high = torch.stack([w_t[group_of == g].amax(0) for g in range(groups)]).clamp(min=0)
    scales = ((high - low) / 15).clamp(min=1e-8).to(torch.float16)
    # From 1: GPTQ v1 stores zero - 1, and a zero of 0 would not survive its 4 bits.
    zeros = torch.clamp(torch.round(-low / scales.float()), 1, 15).to(torch.int64)
    q = torch.clamp(torch.round(w_t / scales.float()[group_of]) + zeros[group_of], 0, 15).to(torch.int64)
    return q, zeros, scales


def gptq_awq(out: Path, name: str):
    model_dir = out / name
    qwen3().save_pretrained(model_dir)
    tensors = load_file(str(model_dir / "model.safetensors"))
    group_size = 32
    act_order = name == "gptq_act_order"
    dequantized = {}
    for index, weight_name in enumerate(projections(tensors)):
        module = weight_name[: -len(".weight")]
        w_t = tensors.pop(weight_name).float().t().contiguous()  # [in, out]
        n_in = w_t.shape[0]
        groups = n_in // group_size
        group_of = torch.arange(n_in) // group_size
        if act_order:  # the inputs in a permuted order fill the groups one after another
            perm = torch.randperm(n_in, generator=torch.Generator().manual_seed(SEED + index))
            group_of = torch.empty(n_in, dtype=torch.int64)
            group_of[perm] = torch.arange(n_in) // group_size
        q, zeros, scales = int4_quantize(w_t, group_of, groups)
        if name == "awq":
            tensors[module + ".qweight"] = pack_words(q, along_rows=False, order=AWQ_ORDER)
            tensors[module + ".qzeros"] = pack_words(zeros, along_rows=False, order=AWQ_ORDER)
            value = (q - zeros[group_of]).to(torch.float16) * scales[group_of]
        else:
            tensors[module + ".qweight"] = pack_words(q, along_rows=True)
            tensors[module + ".qzeros"] = pack_words(zeros - 1, along_rows=False)  # v1 stores zero - 1
            tensors[module + ".g_idx"] = group_of.to(torch.int32)
            value = scales[group_of] * (q - ((zeros - 1) + 1)[group_of]).to(torch.float16)
        tensors[module + ".scales"] = scales.contiguous()
        dequantized[weight_name] = value.t().contiguous()
    if name == "awq":
        config = {"quant_method": "awq", "bits": 4, "group_size": group_size, "zero_point": True, "version": "gemm",
                  "modules_to_not_convert": ["lm_head"]}
    else:
        config = {"quant_method": "gptq", "bits": 4, "group_size": group_size, "desc_act": act_order, "sym": False,
                  "checkpoint_format": "gptq"}
    rewrite(model_dir, tensors, config)
    write_references(model_dir, dequantized, fp32_model_with(model_dir, dequantized))


# --- bad input ---------------------------------------------------------------------------------

def bad_copy(out: Path, source: str, case: str, config_change=None, tensor_change=None):
    model_dir = out / "bad" / case
    model_dir.mkdir(parents=True, exist_ok=True)
    tensors = load_file(str(out / source / "model.safetensors"))
    if tensor_change:
        tensor_change(tensors)
    save_file(tensors, str(model_dir / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((out / source / "config.json").read_text())
    if config_change:
        config_change(config["quantization_config"])
    (model_dir / "config.json").write_text(json.dumps(config, indent=2))


def bad_inputs(out: Path):
    bad_copy(out, "fp8_block", "fp8_block_size_disagrees",
             config_change=lambda q: q.update(weight_block_size=[16, 32]))
    name = "model.layers.0.self_attn.q_proj.weight_packed"
    bad_copy(out, "ct_w4_group", "ct_w4_packed_short",
             tensor_change=lambda t: t.update({name: t[name][:, :-1].contiguous()}))
    bad_copy(out, "ct_w4_group", "ct_w4_num_bits_disagrees",
             config_change=lambda q: q["config_groups"]["group_0"]["weights"].update(num_bits=8))
    bad_copy(out, "gptq", "gptq_group_size_disagrees", config_change=lambda q: q.update(group_size=64))
    bad_copy(out, "gptq_act_order", "gptq_act_order_without_g_idx",
             tensor_change=lambda t: [t.pop(k) for k in [k for k in t if k.endswith(".g_idx")]])


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    fp8_block(out)
    fp8_block(out, "fp8_block_moe", qwen3_moe)
    fp8_block_ragged(out)
    for name in ("ct_w4_group", "ct_w4_group_asym", "ct_w8_channel", "ct_w4_channel_asym", "ct_fp8_tensor",
                 "ct_fp8_channel", "ct_fp8_block", "ct_nvfp4"):
        compressed_tensors_model(out, name)
    modelopt_nvfp4(out)
    for name in ("gptq", "gptq_act_order", "awq"):
        gptq_awq(out, name)
    bad_inputs(out)


if __name__ == "__main__":
    main()
