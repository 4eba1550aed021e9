"""Tiny real checkpoints for `dflash-eval info` (tests/eval, check_info.py).

Targets are transformers models saved with save_pretrained (a Qwen3, a Qwen3.5
ConditionalGeneration with a vision tower and F32 A_log next to BF16 weights, and a Qwen3-MoE
with parameters.json: transformers' total and active parameter counts); drafters are
DFlash configs with the tensor names and shapes of docs/dflash.md 1.3, written with the
safetensors package. expected.json holds what the safetensors package reads back from each
checkpoint: tensor count, parameters, bytes, dtype mix, vision/MTP parameters; and, as a
cross-check, transformers' own num_parameters() for the targets.

Usage: gen_info_models.py OUT_DIR
"""

import json
import sys
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from transformers import Qwen3Config, Qwen3ForCausalLM, Qwen3MoeConfig, Qwen3MoeForCausalLM
from transformers.models.qwen3_5.configuration_qwen3_5 import Qwen3_5Config
from transformers.models.qwen3_5.modeling_qwen3_5 import Qwen3_5ForConditionalGeneration

from transformers_reference import write_parameter_counts

HIDDEN, LAYERS, VOCAB = 64, 6, 512
BYTES_PER = {"BF16": 2, "F16": 2, "F32": 4}


def save_qwen3(out, tied=False, bias=False):
    config = Qwen3Config(hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=LAYERS, num_attention_heads=4,
                         num_key_value_heads=2, head_dim=16, vocab_size=VOCAB, tie_word_embeddings=tied,
                         attention_bias=bias, rope_parameters={"rope_type": "default", "rope_theta": 1e6})
    model = Qwen3ForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(out)
    return model.num_parameters()


def save_qwen3_5(out):
    text = dict(hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=LAYERS, num_attention_heads=4,
                num_key_value_heads=2, head_dim=32, vocab_size=VOCAB, linear_conv_kernel_dim=4,
                linear_key_head_dim=16, linear_value_head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4,
                layer_types=["linear_attention", "linear_attention", "full_attention"] * 2,
                rope_parameters={"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25,
                                 "mrope_section": [2, 1, 1], "mrope_interleaved": True})
    vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=HIDDEN,
                  num_position_embeddings=16, patch_size=4)
    model = Qwen3_5ForConditionalGeneration(Qwen3_5Config(text_config=text, vision_config=vision,
                                                          tie_word_embeddings=False)).to(torch.bfloat16)
    # Real Qwen3.5 checkpoints store A_log in F32 next to BF16 weights (docs/qwen.md 0.1).
    for name, p in model.named_parameters():
        if name.endswith("A_log"):
            p.data = p.data.float()
    model.save_pretrained(out)
    return model.num_parameters()


def save_qwen3_moe(out):
    """Experts on layers 1 and 5 (decoder_sparse_step 2, layer 3 in mlp_only_layers), stored one
    tensor per expert as save_pretrained writes them; parameters.json holds transformers' total
    and active counts."""
    config = Qwen3MoeConfig(hidden_size=HIDDEN, intermediate_size=128, num_hidden_layers=LAYERS, num_attention_heads=4,
                            num_key_value_heads=2, head_dim=16, vocab_size=VOCAB, moe_intermediate_size=32,
                            num_experts=8, num_experts_per_tok=3, decoder_sparse_step=2, mlp_only_layers=[3],
                            tie_word_embeddings=False, rope_parameters={"rope_type": "default", "rope_theta": 1e6})
    model = Qwen3MoeForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(out)
    total, active = write_parameter_counts(out, model)
    assert active < total
    return total


def save_drafter(out, taps, fc_in, mask_token_id, layers=2):
    out.mkdir(parents=True, exist_ok=True)
    config = {"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "hidden_size": HIDDEN,
              "intermediate_size": 128, "num_hidden_layers": layers, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 16, "vocab_size": VOCAB, "rms_norm_eps": 1e-6,
              "rope_theta": 1e6, "rope_scaling": None, "max_position_embeddings": 4096, "block_size": 4,
              "num_target_layers": LAYERS, "dflash_config": {"mask_token_id": mask_token_id, "target_layer_ids": taps}}
    (out / "config.json").write_text(json.dumps(config, indent=2))
    g = torch.Generator().manual_seed(0)

    def w(*shape, dtype=torch.bfloat16):
        return torch.randn(*shape, generator=g).to(dtype)

    tensors = {"fc.weight": w(HIDDEN, fc_in), "hidden_norm.weight": w(HIDDEN, dtype=torch.float32),
               "norm.weight": w(HIDDEN, dtype=torch.float32)}
    for i in range(layers):
        p = f"layers.{i}."
        tensors.update({p + "input_layernorm.weight": w(HIDDEN, dtype=torch.float32),
                        p + "post_attention_layernorm.weight": w(HIDDEN, dtype=torch.float32),
                        p + "self_attn.q_proj.weight": w(4 * 16, HIDDEN), p + "self_attn.k_proj.weight": w(2 * 16, HIDDEN),
                        p + "self_attn.v_proj.weight": w(2 * 16, HIDDEN), p + "self_attn.o_proj.weight": w(HIDDEN, 4 * 16),
                        p + "self_attn.q_norm.weight": w(16, dtype=torch.float32),
                        p + "self_attn.k_norm.weight": w(16, dtype=torch.float32),
                        p + "mlp.gate_proj.weight": w(128, HIDDEN), p + "mlp.up_proj.weight": w(128, HIDDEN),
                        p + "mlp.down_proj.weight": w(HIDDEN, 128)})
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})


def inventory(model_dir):
    """What the safetensors package reads from every shard of a checkpoint."""
    result = {"tensors": 0, "parameters": 0, "bytes": 0, "skipped_parameters": 0, "dtypes": {}}
    for shard in sorted(model_dir.glob("*.safetensors")):
        with safe_open(str(shard), "pt") as f:
            for name in f.keys():
                s = f.get_slice(name)
                numel = 1
                for d in s.get_shape():
                    numel *= d
                dtype = s.get_dtype()
                result["tensors"] += 1
                result["parameters"] += numel
                result["bytes"] += numel * BYTES_PER[dtype]
                if name.startswith(("model.visual.", "mtp.")):
                    result["skipped_parameters"] += numel
                tally = result["dtypes"].setdefault(dtype, {"tensors": 0, "bytes": 0})
                tally["tensors"] += 1
                tally["bytes"] += numel * BYTES_PER[dtype]
    return result


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    hf_counts = {"target_qwen3": save_qwen3(out / "target_qwen3"),
                 "target_qwen3_tied_bias": save_qwen3(out / "target_qwen3_tied_bias", tied=True, bias=True),
                 "target_qwen3_5": save_qwen3_5(out / "target_qwen3_5"),
                 "target_qwen3_moe": save_qwen3_moe(out / "target_qwen3_moe")}
    save_drafter(out / "drafter_good", taps=[1, 3], fc_in=2 * HIDDEN, mask_token_id=VOCAB - 1)
    # fc built for three taps while the config names two; mask id past the embedding; last-layer tap.
    save_drafter(out / "drafter_bad", taps=[1, LAYERS - 1], fc_in=3 * HIDDEN, mask_token_id=VOCAB + 88)
    expected = {}
    for model_dir in sorted(p for p in out.iterdir() if p.is_dir()):
        expected[model_dir.name] = inventory(model_dir)
        if model_dir.name in hf_counts:
            assert hf_counts[model_dir.name] == expected[model_dir.name]["parameters"], model_dir.name
    (out / "expected.json").write_text(json.dumps(expected, indent=1))
    print(f"wrote {len(expected)} models to {out}")


if __name__ == "__main__":
    main()
