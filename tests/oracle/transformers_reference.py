"""What transformers itself says about a target model, shared by the oracle generators:
its greedy continuation and its parameter counts."""

import json
import math
from pathlib import Path

import torch


def greedy(model, prompt, new_tokens):
    """transformers' greedy continuation of `prompt`, every token from a full recompute."""
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(new_tokens):
            ids.append(int(model(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1].argmax()))
    return ids


def write_parameter_counts(model_dir: Path, model):
    """MODEL_DIR/parameters.json: {"total", "active"} for `info` and the memory plan.

    total: transformers' own num_parameters() of the language model (a vision-language
    checkpoint's vision tower is not part of the target the engine runs). active: the count per
    token from transformers' module tree: the routed experts (the parameters under each layer's
    mlp.experts) count k/E, applied once over all of them and rounded half up; shared experts
    and routers always count."""
    total = model.num_parameters()
    visual = getattr(getattr(model, "model", None), "visual", None)
    if visual is not None:
        total -= visual.num_parameters()
    routed, experts_per_layer = 0, set()
    for module in model.modules():
        experts = getattr(getattr(module, "mlp", None), "experts", None)
        if experts is not None:
            routed += sum(p.numel() for p in experts.parameters())
            experts_per_layer.add(experts.num_experts)
    share = 1.0
    if routed:
        assert len(experts_per_layer) == 1, f"{model_dir}: layers with different expert counts {experts_per_layer}"
        share = model.config.get_text_config().num_experts_per_tok / experts_per_layer.pop()
    active = total - routed + math.floor(routed * share + 0.5)
    (model_dir / "parameters.json").write_text(json.dumps({"total": total, "active": active}))
    return total, active

