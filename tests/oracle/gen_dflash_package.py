#!/usr/bin/env python3
"""References from z-lab's published `dflash` package (0.1.0, scripts/requirements-nodeps.txt):
its DFlashDraftModel and its dflash_generate are the oracle of the engine's drafter and live
loop, so a misreading of the reference shared by the engine and a Python reference written in
this repository cannot pass.

OUT/forward/<case>/: a drafter built as the package's DFlashDraftModel with random unit-scale
weights and saved with its own save_pretrained (config.json + model.safetensors, the layout
z-lab publishes), and reference.safetensors:
  embed_tokens [V, H], lm_head [V, H]  the "target's" embedding and LM head
  features [T, F*H], tokens [T] (I64), anchors [N] (I64)
  layer_output.<j>.<l> [B, H]         the package's decoder layer l output for anchor j
  logits.<j> [B-1, V]                 the package's compute_logits of slots 1..B-1
The package's forward runs without a cache: context = features[:anchor] at positions
0..anchor-1, block [token[anchor], MASK x (B-1)] at anchor..anchor+B-1.

OUT/live/: a tiny random dense Qwen3 target (target/), a package drafter that taps it
(drafter/) and cases.json: per case the prompt, block size, max_new_tokens, stop tokens, and
what dflash_generate (its own caches, greedy) returned: output_ids and acceptance_lengths.
Stop tokens are chosen from the unstopped output so that they fire (one of them on the first
generated token, where the package makes no step at all).

OUT/hybrid/: the same on a tiny Qwen3.5 target (Gated DeltaNet layers, target/) with a package
drafter (drafter/). transformers' DynamicCache.crop does not restore a Gated DeltaNet layer's
recurrent state (transformers 5.24, torch path), so dflash_generate is not lossless there; this
script measures that (logits after a crop against a full recompute, crop_max_abs_diff in
cases.json) and instead runs dflash_generate's loop with the package's drafter (its own cache)
and a target recomputed over the whole sequence at every step: cases.json holds per case
output_ids and acceptance_lengths of that loop, which the engine, rolling its own recurrent
state back, must reproduce. That loop (recomputed_generate) is our transcription, so before it
serves, it must give dflash_generate's own output_ids and acceptance_lengths on the dense live
target, where the package's crop is exact (check_recomputed_generate).

Usage: gen_dflash_package.py OUT_DIR
"""

import json
import sys
from pathlib import Path

import time

import dflash.model
import torch
from dflash.model import DFlash2DraftModel, DFlashDraftModel, dflash_generate
from safetensors.torch import load_file, save_file
from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig, Qwen3Config, Qwen3ForCausalLM

SEED = 2027
EPS = 1e-6

FORWARD_CASES = {
    # Every layer full and non-causal (the published Qwen3 drafters), GQA 2:1, plain RoPE.
    "full": dict(hidden=48, layers=2, heads=4, kv_heads=2, head_dim=12, inter=80, block=5,
                 layer_types=["full_attention", "full_attention"], window=None,
                 rope={"rope_type": "default", "rope_theta": 1e6}, bias=False,
                 target_layers=6, tap_ids=[1, 3], seq=20, anchors=[0, 1, 6, 13, 19], vocab=200),
    # Causal sliding + non-causal full (Qwen3.6 drafters), window shorter than the context,
    # YaRN with positions past original_max_position_embeddings, attention bias.
    "sliding_yarn_bias": dict(
        hidden=64, layers=3, heads=4, kv_heads=2, head_dim=16, inter=96, block=4,
        layer_types=["sliding_attention", "full_attention", "sliding_attention"], window=6,
        rope={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
              "original_max_position_embeddings": 16},
        bias=True, target_layers=8, tap_ids=[1, 3, 5], seq=24, anchors=[0, 3, 9, 15, 23], vocab=300),
    # Every layer sliding and non-causal (is_causal false): the window is symmetric, and
    # shorter than the block, so later slots are cut too.
    "sliding_noncausal": dict(
        hidden=32, layers=2, heads=4, kv_heads=2, head_dim=8, inter=48, block=6,
        layer_types=["sliding_attention", "sliding_attention"], window=3,
        rope={"rope_type": "default", "rope_theta": 10000.0}, bias=False, is_causal=False,
        target_layers=6, tap_ids=[1, 3], seq=16, anchors=[0, 2, 7, 15], vocab=120),
    # Every layer sliding and causal (is_causal absent: the package's per-type default).
    "sliding_causal": dict(
        hidden=32, layers=2, heads=4, kv_heads=2, head_dim=8, inter=48, block=6,
        layer_types=["sliding_attention", "sliding_attention"], window=4,
        rope={"rope_type": "default", "rope_theta": 10000.0}, bias=False,
        target_layers=6, tap_ids=[1, 3], seq=16, anchors=[0, 2, 7, 15], vocab=120),
    # is_causal true makes the full layers causal too.
    "causal_full": dict(
        hidden=32, layers=2, heads=4, kv_heads=2, head_dim=8, inter=48, block=5,
        layer_types=["full_attention", "full_attention"], window=None,
        rope={"rope_type": "default", "rope_theta": 10000.0}, bias=False, is_causal=True,
        target_layers=6, tap_ids=[2, 4], seq=16, anchors=[0, 4, 11], vocab=120),
    # The scaled embedding (under dflash_config), the output multiplier (top level: the
    # package's fallback) and the logit soft cap.
    "scaled_softcap": dict(
        hidden=32, layers=2, heads=4, kv_heads=2, head_dim=8, inter=48, block=4,
        layer_types=["full_attention", "full_attention"], window=None,
        rope={"rope_type": "default", "rope_theta": 10000.0}, bias=False,
        dflash_config={"input_embedding_scale": 1.7, "final_logit_softcapping": 1.2},
        top_level={"output_multiplier": 0.6},
        target_layers=6, tap_ids=[1, 4], seq=16, anchors=[0, 5, 12], vocab=120),
    # DFlash2: grouped dynamic causal convolutions around attention and MLP, and the candidate
    # selector (its path is compared too); a sliding layer, so the convolutions meet both masks.
    "dflash2": dict(
        hidden=32, layers=2, heads=4, kv_heads=2, head_dim=8, inter=48, block=6,
        layer_types=["sliding_attention", "full_attention"], window=4,
        rope={"rope_type": "default", "rope_theta": 10000.0}, bias=False,
        dflash2={"conv_kernel_size": 3, "conv_group_size": 8, "selector_rank": 6, "selector_top_k": 5},
        target_layers=6, tap_ids=[1, 3], seq=16, anchors=[0, 3, 9, 15], vocab=120),
}


def drafter_config(cfg, extra=None):
    kwargs = dict(
        vocab_size=cfg["vocab"], hidden_size=cfg["hidden"], intermediate_size=cfg["inter"],
        num_hidden_layers=cfg["layers"], num_attention_heads=cfg["heads"],
        num_key_value_heads=cfg["kv_heads"], head_dim=cfg["head_dim"], hidden_act="silu",
        rms_norm_eps=EPS, attention_bias=cfg["bias"], max_position_embeddings=64,
        rope_parameters=cfg["rope"], layer_types=cfg["layer_types"], tie_word_embeddings=False,
        # Qwen3Config keeps sliding_window only with use_sliding_window (else None: the package
        # would run the sliding layers without a window).
        use_sliding_window=cfg["window"] is not None, sliding_window=cfg["window"],
        block_size=cfg["block"], num_target_layers=cfg["target_layers"],
        dflash_config={"mask_token_id": cfg["vocab"] - 1, "target_layer_ids": cfg["tap_ids"],
                       **(cfg.get("dflash_config") or {}), **(cfg.get("dflash2") or {})},
        architectures=["DFlash2DraftModel" if cfg.get("dflash2") else "DFlashDraftModel"])
    if "is_causal" in cfg:  # the package reads it from the config's top level only
        kwargs["is_causal"] = cfg["is_causal"]
    kwargs.update(cfg.get("top_level") or {})
    kwargs.update(extra or {})
    return Qwen3Config(**kwargs)


def randomize(module, gen, skip=()):
    """Unit-scale activations, norm weights away from 1 (a misplaced norm shows), biases; the
    parameters whose names start with one of `skip` keep their values."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if any(name.startswith(s) for s in skip):
                continue
            if p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=gen) / p.shape[1] ** 0.5)
            elif name.endswith("bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=gen))


def new_drafter(cfg, gen):
    config = drafter_config(cfg)
    model = (DFlash2DraftModel if cfg.get("dflash2") else DFlashDraftModel)(config).eval()
    randomize(model, gen)
    with torch.no_grad():  # static kernels of a few taps: unit-scale mixing, not x3 per layer
        for name, p in model.named_parameters():
            if name.endswith("base_kernel"):
                p.copy_(0.4 * torch.randn(p.shape, generator=gen))
    return model


def save_zlab_layout(model, directory):
    """save_pretrained, then the selector's codebooks renamed as z-lab's DFlash2 files store
    them (no ".weight"; the package's from_pretrained maps them back), read back by the package."""
    model.save_pretrained(directory, safe_serialization=True)
    if not isinstance(model, DFlash2DraftModel):
        return
    path = Path(directory) / "model.safetensors"
    tensors = load_file(str(path))
    for book in ("predecessor_codebook", "successor_codebook"):
        tensors[f"candidate_selector.{book}"] = tensors.pop(f"candidate_selector.{book}.weight")
    save_file(tensors, str(path), metadata={"format": "pt"})
    back = DFlash2DraftModel.from_pretrained(directory)
    assert torch.equal(back.candidate_selector.predecessor_codebook.weight,
                       model.candidate_selector.predecessor_codebook.weight)


class _Embedding(torch.nn.Module):
    """A stand-in target for the package's _raw_input_embeddings: its input embedding."""

    def __init__(self, weight):
        super().__init__()
        self.embed = torch.nn.Embedding.from_pretrained(weight)

    def get_input_embeddings(self):
        return self.embed


def package_forward(model, lm_head, embed, feats, tokens, anchor):
    """The package's drafter on one block without a cache: per-layer outputs and logits."""
    b = model.block_size
    ids = torch.tensor([[tokens[anchor].item()] + [model.mask_token_id] * (b - 1)])
    outputs = []
    hooks = [layer.register_forward_hook(lambda _m, _i, out: outputs.append(out[0].clone()))
             for layer in model.layers]
    scale = float(dflash.model._draft_value(model.config, "input_embedding_scale", 1.0))
    hidden = model(position_ids=torch.arange(anchor + b)[None],
                   noise_embedding=dflash.model._raw_input_embeddings(_Embedding(embed), ids, scale),
                   target_hidden=feats[None, :anchor])
    for h in hooks:
        h.remove()
    return outputs, model.compute_logits(hidden[:, 1:], lm_head)[0], hidden[:, 1:]


def generate_forward(name, cfg, out_dir):
    gen = torch.Generator().manual_seed(SEED + len(name))
    model = new_drafter(cfg, gen)
    h, v = cfg["hidden"], cfg["vocab"]
    embed = torch.randn(v, h, generator=gen)
    lm_head = torch.nn.Linear(h, v, bias=False)
    with torch.no_grad():
        lm_head.weight.copy_(torch.randn(v, h, generator=gen) / h ** 0.5)
    feats = torch.randn(cfg["seq"], len(cfg["tap_ids"]) * h, generator=gen)
    tokens = torch.randint(0, v - 1, (cfg["seq"],), generator=gen)
    reference = {"embed_tokens": embed, "lm_head": lm_head.weight.detach().clone(), "features": feats,
                 "tokens": tokens, "anchors": torch.tensor(cfg["anchors"])}
    overruled = 0
    with torch.no_grad():
        for j, anchor in enumerate(cfg["anchors"]):
            layers, logits, hidden = package_forward(model, lm_head, embed, feats, tokens, anchor)
            for l, out in enumerate(layers):
                reference[f"layer_output.{j}.{l}"] = out.contiguous()
            reference[f"logits.{j}"] = logits.contiguous()
            if isinstance(model, DFlash2DraftModel):  # the selector's greedy path and candidates
                path, candidates, _ = model.propose(hidden, tokens[anchor:anchor + 1], lm_head, 0.0)
                reference[f"selector_path.{j}"] = path[0].contiguous()
                reference[f"candidates.{j}"] = candidates[0].sort(-1).values.contiguous()
                overruled += int((path[0] != logits.argmax(-1)).sum())
    # Not vacuous: the selector changes drafts, and the fields under test change the output.
    assert not cfg.get("dflash2") or overruled > 0, f"{name}: the selector never overrules the argmax"
    plain_cfg = {k: v for k, v in cfg.items() if k not in ("is_causal", "dflash_config", "top_level", "dflash2")}
    if plain_cfg != cfg:
        plain = DFlashDraftModel(drafter_config(plain_cfg)).eval()
        plain.load_state_dict(model.state_dict(), strict=False)  # DFlash2's extras dropped
        with torch.no_grad():
            effect = max((package_forward(plain, lm_head, embed, feats, tokens, a)[1]
                          - reference[f"logits.{j}"]).abs().max().item() for j, a in enumerate(cfg["anchors"]))
        assert effect > 1e-2, f"{name}: the config fields change nothing ({effect})"
    case_dir = out_dir / "forward" / name
    save_zlab_layout(model, case_dir)
    save_file(reference, str(case_dir / "reference.safetensors"))
    print(f"forward/{name}: {len(cfg['anchors'])} anchors")


LIVE_VOCAB = 16  # small, so a random drafter agrees with a random target now and then
LIVE_DRAFTER = dict(
    hidden=32, layers=2, heads=4, kv_heads=2, head_dim=8, inter=64, block=16,
    layer_types=["sliding_attention", "full_attention"], window=8,
    rope={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 2.0, "original_max_position_embeddings": 32},
    bias=False, target_layers=4, tap_ids=[1, 2], vocab=LIVE_VOCAB)
LIVE_PROMPTS = [[3, 7, 1, 12, 5], [9, 9, 2, 4, 0, 11, 6, 8], [14, 2, 5], [1, 13, 10, 3, 7, 7]]
# (block size, max_new_tokens): budgets that end inside a block, so the final one is shortened.
LIVE_RUNS = [(16, 40), (8, 37)]


def live_target():
    torch.manual_seed(SEED)
    target = Qwen3ForCausalLM(Qwen3Config(
        vocab_size=LIVE_VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=128,
        rope_theta=10000.0, tie_word_embeddings=False))
    randomize(target, torch.Generator().manual_seed(SEED))  # clear argmax margins
    return target.eval()


def run_package(drafter, target, prompt, block, max_new, stops):
    # acceptance_lengths come only with return_stats, whose clock synchronises CUDA: on a
    # machine without a GPU the clock is the host's (timing only; the loop is untouched).
    if not torch.cuda.is_available():
        dflash.model._cuda_time = time.perf_counter
    out = dflash_generate(drafter, target, torch.tensor([prompt]), max_new, stops or None,
                          block_size=block, return_stats=True)
    return out.output_ids[0].tolist(), list(out.acceptance_lengths)


def live_case(prompt, block, max_new, stops, ids, lengths):
    return {"prompt": prompt, "block_size": block, "max_new_tokens": max_new, "stop_tokens": stops,
            "output_ids": ids, "acceptance_lengths": lengths}


def stop_inside_a_step(ids, lengths, prompt_length):
    """A token whose first generated occurrence is not the last token of its step."""
    start = prompt_length
    for length in lengths:
        for k in range(1, length):
            token = ids[start + k]
            if token not in ids[prompt_length:start + k]:
                return token
        start += length
    return ids[prompt_length + 3]


# DFlash2 in the live loop: the package's dflash_generate drafts with the selector's path. A
# kernel of 3 taps: the package's convolution mis-shapes a block shorter than a kernel's reach
# (F.pad past the block), and the budgets here end in blocks of 2.
LIVE_DFLASH2 = dict(LIVE_DRAFTER, dflash2={"conv_kernel_size": 3, "conv_group_size": 8,
                                           "selector_rank": 8, "selector_top_k": 4})


def package_conv_rejects_short_blocks():
    """dflash 0.1.0's _grouped_dynamic_convolve shifts with F.pad(blocks[:, :-offset], ...): for a
    block of L rows and an offset past L that is offset rows, not L, and the sum fails. The engine
    mixes such a block as the start of a longer one (tests/engine/test_dflash_drafter.cpp)."""
    hidden, dynamic, base = torch.randn(1, 2, 8), torch.randn(1, 2, 4, 2), torch.randn(4, 8)
    try:
        dflash.model._grouped_dynamic_convolve(hidden, dynamic, base, 4)
    except RuntimeError:
        return
    raise AssertionError("dflash's convolution now handles blocks shorter than its kernel: revisit the note")


def generate_live(out_dir, name="live", drafter_cfg=LIVE_DRAFTER):
    target = live_target()
    drafter = new_drafter(drafter_cfg, torch.Generator().manual_seed(SEED + 1))
    live_dir = out_dir / name
    target.save_pretrained(live_dir / "target", safe_serialization=True)
    save_zlab_layout(drafter, live_dir / "drafter")
    cases, fired = [], 0
    for block, max_new in LIVE_RUNS:
        for i, prompt in enumerate(LIVE_PROMPTS):
            free, free_lengths = run_package(drafter, target, prompt, block, max_new, [])
            cases.append(live_case(prompt, block, max_new, [], free, free_lengths))
            # The first generated token for prompt 2 (the package makes no step at all), else
            # a token first seen inside a step that commits several, so the count is cut.
            stop = free[len(prompt)] if i == 2 else stop_inside_a_step(free, free_lengths, len(prompt))
            ids, lengths = run_package(drafter, target, prompt, block, max_new, [stop, LIVE_VOCAB + 7])
            assert len(ids) < len(free), "the stop token must fire"
            fired += 1
            cases.append(live_case(prompt, block, max_new, [stop, LIVE_VOCAB + 7], ids, lengths))
    (live_dir / "cases.json").write_text(json.dumps(cases, indent=1))
    accepted = [x for c in cases for x in c["acceptance_lengths"]]
    print(f"{name}: {len(cases)} cases ({fired} with a stop token that fires), {len(accepted)} steps, "
          f"acceptance lengths seen {sorted(set(accepted))}")


HYBRID_RUNS = [(8, 30), (16, 33)]


def hybrid_target():
    torch.manual_seed(SEED + 2)
    config = Qwen3_5TextConfig(
        vocab_size=LIVE_VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, head_dim=8, linear_conv_kernel_dim=4,
        linear_key_head_dim=8, linear_value_head_dim=8, linear_num_key_heads=2, linear_num_value_heads=4,
        layer_types=["linear_attention", "linear_attention", "linear_attention", "full_attention"],
        max_position_embeddings=128, tie_word_embeddings=False, rms_norm_eps=1e-6,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5})
    target = Qwen3_5ForCausalLM(config)
    randomize(target, torch.Generator().manual_seed(SEED + 2))
    with torch.no_grad():  # the decay and gate parameters at their usual scale, not around 1
        for name, p in target.named_parameters():
            if name.endswith(("A_log", "dt_bias")):
                p.copy_(0.5 * torch.randn(p.shape, generator=torch.Generator().manual_seed(len(name))))
    return target.eval()


def crop_error(target, ids, keep):
    """Max |logits| difference of the tokens after `keep`, run on a cache cropped back to
    `keep` (as dflash_generate does), against one forward over the whole sequence."""
    cache = dflash.model._make_cache(target.config)
    target(torch.tensor([ids]), past_key_values=cache, use_cache=True)
    dflash.model._crop_to(cache, keep)
    after_crop = target(torch.tensor([ids[keep:]]), past_key_values=cache, use_cache=True).logits[0]
    full = target(torch.tensor([ids])).logits[0, keep:]
    return (after_crop - full).abs().max().item()


def recomputed_generate(model, target, prompt, max_new, stops, block):
    """dflash_generate (greedy) with the target recomputed over the whole sequence each step
    instead of cached and cropped; the drafter, its cache and every rule are the package's."""
    n = len(prompt)
    max_length = n + max_new
    ids = list(prompt) + [model.mask_token_id] * (max_new + 1)
    position_ids = torch.arange(max_length + 1)[None]
    draft_cache = dflash.model._make_cache(model.config)
    out = target(torch.tensor([prompt]), output_hidden_states=True)
    ids[n] = int(out.logits[0, -1].argmax())
    target_hidden = dflash.model.extract_context_feature(out.hidden_states, model.target_layer_ids)
    start, lengths = n, []
    stopped = ids[start] in stops
    while start + 1 < max_length and not stopped:
        verify = min(block, max_length - start)
        block_ids = torch.tensor([ids[start:start + verify]])
        noise = torch.nn.functional.embedding(block_ids, target.get_input_embeddings().weight)
        hidden = model(target_hidden=target_hidden, noise_embedding=noise,
                       position_ids=position_ids[:, start - target_hidden.shape[1]:start + verify],
                       past_key_values=draft_cache, use_cache=True)[:, 1 - verify:, :]
        dflash.model._crop_to(draft_cache, start)
        block_ids[:, 1:] = model.compute_logits(hidden, target.lm_head).argmax(-1)
        sequence = ids[:start] + block_ids[0].tolist()
        out = target(torch.tensor([sequence]), output_hidden_states=True)
        posterior = out.logits[0, start:].argmax(-1)
        accepted = int((block_ids[0, 1:] == posterior[:-1]).cumprod(0).sum())
        ids[start:start + accepted + 1] = block_ids[0, :accepted + 1].tolist()
        ids[start + accepted + 1] = int(posterior[accepted])
        produced = min(accepted + 1, max_length - start - 1)
        for i in range(1, produced + 1):
            if ids[start + i] in stops:
                produced, stopped = i, True
                break
        features = dflash.model.extract_context_feature(out.hidden_states, model.target_layer_ids)
        target_hidden = features[:, start:start + produced, :]
        start += produced
        lengths.append(produced)
    return ids[:min(start + 1, max_length)], lengths


def check_recomputed_generate():
    """recomputed_generate is our transcription of dflash_generate, and the hybrid targets'
    reference: on the dense live target, where the package's own cache crop is exact, it must
    return the package's output ids and acceptance lengths, with the live drafter (which the
    target accepts several tokens of at times), for every prompt at HYBRID_RUNS' block sizes and
    budgets, without a stop token, with one inside a step and with one on the first generated
    token (where neither makes a step)."""
    target = live_target()
    drafter = new_drafter(LIVE_DRAFTER, torch.Generator().manual_seed(SEED + 1))
    cases, lengths = 0, []
    for block, max_new in HYBRID_RUNS:
        for prompt in LIVE_PROMPTS:
            free, free_lengths = run_package(drafter, target, prompt, block, max_new, [])
            for stops in ([], [stop_inside_a_step(free, free_lengths, len(prompt))], [free[len(prompt)]]):
                theirs = run_package(drafter, target, prompt, block, max_new, stops)
                with torch.no_grad():
                    ours = recomputed_generate(drafter, target, prompt, max_new, stops, block)
                assert ours == theirs, (f"recomputed_generate {ours} differs from dflash_generate {theirs} "
                                        f"(prompt {prompt}, block {block}, stops {stops})")
                cases, lengths = cases + 1, lengths + theirs[1]
    assert max(lengths) > 2, f"no step commits more than two tokens {sorted(set(lengths))}: the check is weak"
    print(f"hybrid: recomputed_generate is dflash_generate on the dense target in {cases} cases, "
          f"acceptance lengths seen {sorted(set(lengths))}")


def generate_hybrid(out_dir):
    target = hybrid_target()
    drafter = new_drafter(dict(LIVE_DRAFTER, tap_ids=[0, 2]), torch.Generator().manual_seed(SEED + 3))
    hybrid_dir = out_dir / "hybrid"
    target.save_pretrained(hybrid_dir / "target", safe_serialization=True)
    drafter.save_pretrained(hybrid_dir / "drafter", safe_serialization=True)
    with torch.no_grad():
        error = max(crop_error(target, LIVE_PROMPTS[i] + [1, 2, 3, 4, 5, 6], len(LIVE_PROMPTS[i]) + 2)
                    for i in range(len(LIVE_PROMPTS)))
        assert error > 1e-2, f"transformers' crop restored the recurrent state ({error}): use dflash_generate"
        cases = []
        for block, max_new in HYBRID_RUNS:
            for i, prompt in enumerate(LIVE_PROMPTS):
                free, free_lengths = recomputed_generate(drafter, target, prompt, max_new, [], block)
                cases.append(live_case(prompt, block, max_new, [], free, free_lengths))
                stop = stop_inside_a_step(free, free_lengths, len(prompt))
                ids, lengths = recomputed_generate(drafter, target, prompt, max_new, [stop], block)
                assert len(ids) < len(free), "the stop token must fire"
                cases.append(live_case(prompt, block, max_new, [stop], ids, lengths))
    (hybrid_dir / "cases.json").write_text(json.dumps({"crop_max_abs_diff": error, "cases": cases}, indent=1))
    lengths = [x for c in cases for x in c["acceptance_lengths"]]
    print(f"hybrid: logits after transformers' crop differ from a full recompute by {error:.3f}; "
          f"{len(cases)} cases, {len(lengths)} steps, acceptance lengths seen {sorted(set(lengths))}")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    out_dir = Path(sys.argv[1])
    for name, cfg in FORWARD_CASES.items():
        generate_forward(name, cfg, out_dir)
    generate_live(out_dir)
    package_conv_rejects_short_blocks()
    generate_live(out_dir, "live_dflash2", LIVE_DFLASH2)
    check_recomputed_generate()
    generate_hybrid(out_dir)


if __name__ == "__main__":
    main()
