"""What transformers itself says about a target model, shared by the oracle generators:
its greedy continuation, its parameter counts and its routers' choices."""

import json
import math
import re
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file


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


ROUTER_MIN_GAP = 2e-5  # 10x the fp32 router-logit differences an exact implementation may have


def routers(model):
    """(layer, router module) for every sparse layer, from the module names transformers gives
    (mlp.gate in the Qwen MoE families and GLM-4.5, block_sparse_moe.gate in MiniMax-M2's
    layout, mlp.router in gpt-oss)."""
    out = []
    for name, module in model.named_modules():
        if type(module).__name__.lower().endswith("topkrouter"):
            out.append((int(re.search(r"layers\.(\d+)\.(mlp|block_sparse_moe)\.(gate|router)$", name).group(1)), module))
    return out


def choice_scores(module, args, logits):
    """What a router ranks to choose: its logits (a softmax keeps their order), or for the
    sigmoid routers sigmoid(logits) + e_score_correction_bias (a buffer of GLM-4.5's router, an
    argument of MiniMax-M2's), the experts outside the kept groups at -inf."""
    bias = getattr(module, "e_score_correction_bias", None)
    if bias is None and len(args) > 1:
        bias = args[1]
    if bias is None:
        return logits.float()
    choice = logits.float().sigmoid() + bias.float()
    groups = getattr(module, "num_group", 1)
    if groups > 1:
        grouped = choice.view(choice.shape[0], groups, -1)
        kept = grouped.topk(2, -1).values.sum(-1).topk(module.topk_group, -1).indices
        mask = torch.zeros(choice.shape[0], groups, dtype=torch.bool).scatter_(1, kept, True)
        choice = grouped.masked_fill(~mask[..., None], float("-inf")).view_as(choice)
    return choice


def group_gap(module, args, logits):
    """The smallest gap between the last kept and the first dropped group's rank (inf without groups)."""
    groups = getattr(module, "num_group", 1)
    if groups == 1 or module.topk_group == groups:
        return float("inf")
    choice = logits.float().sigmoid() + module.e_score_correction_bias.float()
    ranks = choice.view(choice.shape[0], groups, -1).topk(2, -1).values.sum(-1).sort(-1, descending=True).values
    return (ranks[:, module.topk_group - 1] - ranks[:, module.topk_group]).min().item()


def reference_routing(model, ids):
    """The experts and weights each router of `model` chose for `ids` (router.<layer>.experts
    [T, k] I64, router.<layer>.weights [T, k] F32, taken from the routers' own outputs by forward
    hooks), and the smallest gap between the k-th and (k+1)-th score the router ranks (and
    between the kept and dropped groups of a group-limited router): a near tie would
    let fp32 rounding differences (~1e-6 in these models' hidden states) pick another expert,
    and the comparison would test luck."""
    found, gaps, handles = {}, [], []
    for layer, router in routers(model):
        def hook(module, args, output, layer=layer):
            logits, scores, indices = output
            choice = choice_scores(module, args, logits)
            # The sigmoid routers' top-k is unsorted (sorted=False); the record lists the experts
            # best first, as the softmax routers do.
            order = choice.gather(1, indices).argsort(dim=-1, descending=True, stable=True)
            found[f"router.{layer}.experts"] = indices.gather(1, order).to(torch.int64).contiguous()
            found[f"router.{layer}.weights"] = scores.float().gather(1, order).contiguous()
            ranked = choice.sort(-1, descending=True).values
            gaps.append(min((ranked[:, module.top_k - 1] - ranked[:, module.top_k]).min().item(),
                            group_gap(module, args, logits)))
        handles.append(router.register_forward_hook(hook))
    with torch.no_grad():
        model(input_ids=ids[None], use_cache=False)
    for h in handles:
        h.remove()
    return found, min(gaps)


def add_reference_routing(model_dir: Path, fp32_model):
    """Adds to MODEL_DIR/reference.safetensors the routing `fp32_model` (the checkpoint as
    transformers loads it) chose for its input_ids, and sparse_layers: the layers that route."""
    path = model_dir / "reference.safetensors"
    ref = load_file(path)
    routing, min_gap = reference_routing(fp32_model, ref["input_ids"])
    assert min_gap > ROUTER_MIN_GAP, f"{model_dir.name}: a near tie between routed experts ({min_gap:.2e}); change its seed"
    sparse = sorted({int(k.split(".")[1]) for k in routing})
    used = torch.cat([v.flatten() for k, v in routing.items() if k.endswith("experts")]).unique().numel()
    ref.update(routing)
    ref["sparse_layers"] = torch.tensor(sparse, dtype=torch.int64)
    save_file(ref, str(path))
    layers = fp32_model.config.get_text_config().num_hidden_layers
    print(f"{model_dir.name}: sparse layers {sparse} of {layers}, {used} experts used, "
          f"smallest router logit gap at the top-k boundary {min_gap:.2e}")
