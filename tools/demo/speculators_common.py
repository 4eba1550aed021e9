"""What the demo's speculators-format drafters share (convert_speculators.py, train_dspark.py).

Importing vLLM's `speculators` (0.9.0): the package's __init__ imports its data pipeline
(openai, datasets, hs_connectors), which its models do not use and which are not installed in
the venv. Those modules are stood in by empty ones before the package is imported, and only
after transformers' modeling code is loaded (transformers probes for `datasets` and must not find
a stand-in). Everything the drafters run is the package's own code. tests/oracle/gen_speculators.py
does the same for the engine's test fixtures; this is a copy because the demo scripts must not
depend on the test tree.

Also here: the package's inputs computed from the demo target (the concatenated aux hidden states
and the target's last hidden state BEFORE its final norm: the package applies verifier_norm and
the LM head itself, while transformers' hidden_states[-1] is already normed), drafter-good's
geometry as the Qwen3 decoder-layer config the package nests, and the bf16 save.
"""

import json
import sys
import types

import torch
import transformers.models.qwen3.modeling_qwen3  # noqa: F401  (loaded before the stand-ins)
import transformers.models.qwen3_5.modeling_qwen3_5  # noqa: F401
from safetensors.torch import load_file
from transformers import Qwen3_5ForCausalLM, Qwen3Config

import common


def _stand_in(name):
    module = types.ModuleType(name)
    module.__path__ = []  # a package, so its submodules can be stood in too
    module.__getattr__ = lambda attr: type(attr, (), {"__init__": lambda self, *a, **k: None})
    sys.modules[name] = module


for _name in ("openai", "openai.types", "openai.types.chat", "openai.types.completion", "datasets",
              "hs_connectors"):
    if _name not in sys.modules:
        _stand_in(_name)

from speculators.losses import resolve_loss_config  # noqa: E402

TARGET_DIR = common.OUT / "target"
GOOD_DIR = common.OUT / "drafter-good"
# What the saved configs name as the verifier (speculators_config.verifier.name_or_path): the
# repository path, not this machine's absolute one. load_reduced/load_saved point the package at
# the real directory when reloading.
VERIFIER_NAME = "resources/demo/target"


def good_config():
    return json.loads((GOOD_DIR / "config.json").read_text())


def layer_config(good):
    """drafter-good's decoder geometry as the Qwen3Config the package nests
    (transformer_layer_config: num_hidden_layers = the draft's layers, vocab_size = the target's)."""
    return Qwen3Config(
        vocab_size=good["vocab_size"], hidden_size=good["hidden_size"],
        intermediate_size=good["intermediate_size"], num_hidden_layers=good["num_hidden_layers"],
        num_attention_heads=good["num_attention_heads"], num_key_value_heads=good["num_key_value_heads"],
        head_dim=good["head_dim"], hidden_act=good["hidden_act"], rms_norm_eps=good["rms_norm_eps"],
        max_position_embeddings=good["max_position_embeddings"], rope_theta=good["rope_theta"],
        attention_bias=good["attention_bias"], layer_types=good["layer_types"], tie_word_embeddings=False)


def drafter_args(good):
    """from_training_args' DFlash fields for drafter-good: speculators' aux ids are z-lab's
    target_layer_ids + 1 (0 is the embedding output); eager attention (CPU, no flex compile)."""
    dflash = good["dflash_config"]
    return {"block_size": dflash["block_size"], "mask_token_id": dflash["mask_token_id"],
            "target_layer_ids": [i + 1 for i in dflash["target_layer_ids"]],
            "verifier_name_or_path": str(TARGET_DIR), "draft_attn_impl": "eager"}


def load_good_weights(model):
    """drafter-good's tensors (z-lab names = the package's names) into a package model; everything
    the package reconstructs from the verifier, and the heads a subclass adds, stay as they are."""
    missing, unexpected = model.load_state_dict(
        {k: v.float() for k, v in load_file(str(GOOD_DIR / "model.safetensors")).items()}, strict=False)
    assert not unexpected, unexpected
    allowed = ("embed_tokens.", "lm_head.", "verifier_lm_head.", "verifier_norm.", "t2d", "d2t",
               "markov_head.", "confidence_head.")
    assert all(k.startswith(allowed) for k in missing), missing


def load_target():
    return Qwen3_5ForCausalLM.from_pretrained(TARGET_DIR, dtype=torch.float32).eval()


def verifier_inputs(target, ids, aux_ids):
    """The package forward's inputs for one sequence: hidden_states [1, T, len(aux)*H] =
    transformers' hidden_states[i] for i in aux_ids, concatenated; verifier_last_hidden_states
    [1, T, H] = the last decoder layer's output before the final norm (captured at the norm's
    input). Also returns the target's logits, to check the package's verifier_norm + LM head."""
    seen = {}
    hook = target.model.norm.register_forward_pre_hook(lambda mod, args: seen.update(pre=args[0]))
    try:
        with torch.no_grad():
            out = target(input_ids=ids[None], output_hidden_states=True, use_cache=False)
    finally:
        hook.remove()
    hidden = torch.cat([out.hidden_states[i] for i in aux_ids], -1)
    return hidden, seen["pre"], out.logits


def eager_losses(loss="kl_div"):
    """The package's eager loss implementations (its fused ones need Triton on a GPU); `loss` is
    its --loss-fn spec (kl_div: its default for DSpark; ce: for DFlash)."""
    return {"loss_config": resolve_loss_config(loss, "eager"),
            "tv_loss_fn": resolve_loss_config("tv", "eager")["tv"][0]}


def save_bf16(model, out_dir):
    """The package's save_pretrained of the model in bf16 (verifier-owned tensors are left out by
    the package), the verifier named by its repository path. transformers also writes config.py,
    a copy of the package's config class source, with auto_map {"": "config.<class>"} (the
    package's configs set _auto_class ""): not kept, as the package resolves its config classes
    from speculators_model_type and the engine reads config.json only. Files made readable by all,
    like the other demo files."""
    model = model.to(torch.bfloat16)
    model.config.speculators_config.verifier.name_or_path = VERIFIER_NAME
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    model.config.speculators_config.verifier.name_or_path = str(TARGET_DIR)
    (out_dir / "config.py").unlink(missing_ok=True)
    config_file = out_dir / "config.json"
    cfg = json.loads(config_file.read_text())
    cfg.pop("auto_map", None)
    config_file.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    for f in out_dir.iterdir():
        f.chmod(0o644)
    return model


def load_saved(model_class, out_dir):
    """The saved drafter reloaded by the package (fp32 compute), the verifier's tensors read from
    the target directory."""
    config = model_class.config_class.from_pretrained(out_dir)
    config.speculators_config.verifier.name_or_path = str(TARGET_DIR)
    config.transformer_layer_config._attn_implementation = "eager"  # noqa: SLF001
    return model_class.from_pretrained(out_dir, config=config, dtype=torch.float32).eval()


def check_config(out_dir, model_type):
    """The fields the engine's speculators reader depends on."""
    cfg = json.loads((out_dir / "config.json").read_text())
    good = good_config()["dflash_config"]
    assert cfg["speculators_model_type"] == model_type, cfg["speculators_model_type"]
    assert cfg["aux_hidden_state_layer_ids"] == [i + 1 for i in good["target_layer_ids"]]
    assert cfg["block_size"] == good["block_size"] and cfg["mask_token_id"] == good["mask_token_id"]
    assert cfg["transformer_layer_config"]["model_type"] == "qwen3"
    assert cfg["transformer_layer_config"]["vocab_size"] == common.TARGET_VOCAB
    return cfg
