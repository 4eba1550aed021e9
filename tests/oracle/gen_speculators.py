#!/usr/bin/env python3
"""References from vLLM's `speculators` (0.9.0, scripts/requirements-nodeps.txt): DFlash drafters
built and saved by its own DFlashDraftModel (from_training_args, the training CLI's path, and
save_pretrained), so the engine's speculators reader is held to the package's files and forward,
not to our reading of them.

speculators' package __init__ imports its data pipeline (openai, datasets, hs_connectors), none
of which its models use and none installed here: those three modules are stood in by empty ones
before the import (after transformers' modeling code is loaded: transformers probes for datasets
and must not find a stand-in); everything the models run is the package's own code.

OUT/<case>/target/      a tiny random dense Qwen3 target (save_pretrained)
OUT/<case>/drafter/     the speculators checkpoint (config.json with speculators_config,
                        transformer_layer_config; model.safetensors, with lm_head, d2t and t2d
                        when the draft vocabulary is reduced)
OUT/<case>/reference.safetensors:
  input_ids [T] (I64)      the target's greedy continuation of a prompt
  anchors [N] (I64)        the anchors the package's forward drafts at (its select_anchors
                           replaced by these)
  logits [N*B, Vd] (F32)   the package's _backbone_forward logits, draft ids, every slot
  draft_to_target [Vd] (I64)  arange(Vd) + d2t: the target id of each draft id, as vLLM maps
                              drafts (absent for a full vocabulary)
  logits.rope_theta [N*B, V] (F32)  full_vocab only: the same drafter with RoPE base 500000, its
                           rotary embedding rebuilt as the package builds it (rope:theta=<x>)
  target_head_logits [N*B, V] (F32)  reduced vocabulary only: the package's final-normed block
                           rows through the target's LM head (diagnose's lm-head:target)
  selector.candidates [N*B, k] (I64), selector.scores [N*B, k] (F32), selector.predecessors [N*B]
                           DFlash2 only: the package's score_candidates of each row's top-k by
                           logit, after the sequence's previous token (its _predecessor_ids)
  metrics.<name>_sum, metrics.<name>_total [] (F32)  DFlash2 only: its training forward's metrics
                           dict (eal, accept_len, unary_candidate_recall, unary_oracle_accepted_length:
                           the top-k infixes dropped from the names)
  accept_len_per_block [N] (F32)  DFlash2 and DSpark: the package's analytic accept_len (1 + the
                           running products of 1 - TV over the draft slots) of each block alone, its
                           targets the verifier's logits over the draft vocabulary

DSpark cases (speculators' DSparkDraftModel: the DFlash backbone, a Markov head and a confidence
head) add, from the package's own forward (its compute_metrics stood in by a recorder that
passes through):
  markov_logits [N*B, Vd] (F32)  the logits after the Markov bias, each slot's previous token
                                 being the sequence's (the package's training convention)
  confidence [N*B] (F32)         the confidence head's logits (absent without the head)
  eal_per_block [N] (F32)        the package's compute_accepted_length_counts of each block alone
                                 (greedy acceptance plus the bonus, its argmaxes over draft ids)
  eal_sum, eal_total [] (F32)    the metrics dict's eal over all blocks
  accept_len_sum, accept_len_total [] (F32)  the metrics dict's accept_len over all blocks
  target_in_draft_vocab [N] (I64)  1 where every slot's true next token is a draft id (where the
                                 package's draft-id argmax can agree with the verifier's)

Every case adds layer.<i> [N*B, H] (F32): each decoder layer's output in the package's forward.

Cases: "reduced_vocab" (40 draft ids of 64, the LM head randomised away from the target's rows
so only the checkpoint's own head matches), "full_vocab" (draft_vocab_size = the target's: no
mapping, the target's LM head), "dflash2" (speculators' DFlash2: convolutions around attention
and MLP, the candidate selector; full vocabulary, as the package requires), "live" (a tiny target and a drafter with 12 draft ids of 16, in
test_dflash_live's layout: reference.safetensors holds per prompt the tokens and the steps
[anchor, accepted, bonus, drafts...] of a greedy loop whose drafts come from the package's
forward, mapped through d2t; that loop is our transcription, checked lossless here).

Usage: gen_speculators.py OUT_DIR
"""

import copy
import shutil
import sys
import types
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from transformers import Qwen3Config, Qwen3ForCausalLM
from transformers.models.qwen3.modeling_qwen3 import Qwen3RotaryEmbedding

from gen_dflash_package import randomize


def stand_in(name):
    module = types.ModuleType(name)
    module.__path__ = []  # a package, so its submodules can be stood in too
    module.__getattr__ = lambda attr: type(attr, (), {"__init__": lambda self, *a, **k: None})
    sys.modules[name] = module


for _name in ("openai", "openai.types", "openai.types.chat", "openai.types.completion", "datasets", "hs_connectors"):
    stand_in(_name)

import speculators.models.dflash.core as dflash_core  # noqa: E402
from speculators.models.dflash import DFlashDraftModel  # noqa: E402
from speculators.models.dflash2 import DFlash2DraftModel  # noqa: E402
import speculators.models.dflash2.core as dflash2_core  # noqa: E402
import speculators.models.dspark.core as dspark_core  # noqa: E402
import speculators.models.dspark.metrics as dspark_metrics  # noqa: E402
from speculators.models.dspark import DSparkDraftModel  # noqa: E402
from speculators.losses import resolve_loss_config  # noqa: E402
from speculators.models.metrics import compute_accepted_length_counts  # noqa: E402
from speculators.models.utils import flatten_rope_parameters  # noqa: E402
from speculators.train.vocab_mapping import build_vocab_mappings_from_distribution  # noqa: E402

SEED = 2031
EPS = 1e-6

CASES = {
    "reduced_vocab": dict(vocab=64, draft_vocab=40, block=6, aux=[1, 3], prompt=[5, 17, 2, 40, 33, 9, 61],
                          continuation=34, anchors=[0, 3, 7, 12, 19, 26, 34]),
    "full_vocab": dict(vocab=64, draft_vocab=64, block=6, aux=[2, 3], prompt=[8, 1, 50, 22, 3],
                       continuation=30, anchors=[1, 4, 11, 20, 28], rope_theta_variant=500000.0),
    # DFlash2 (the package requires the full vocabulary): convolutions of 3 taps in groups of 8,
    # a selector over the top 5 of rank 6.
    "dflash2": dict(vocab=64, draft_vocab=64, block=6, aux=[1, 2], prompt=[4, 30, 12, 7, 51, 2],
                    continuation=32, anchors=[0, 2, 9, 17, 25, 31],
                    dflash2=dict(conv_kernel_size=3, conv_group_size=8, selector_rank=6, selector_top_k=5)),
}
# DSpark: each Markov head type, the confidence head on (with and without the Markov input)
# and off, sample_from_anchor both ways, reduced and full vocabularies.
DSPARK = dict(vocab=64, block=6, prompt=[6, 21, 3, 44, 17, 9], continuation=36, anchors=[0, 4, 9, 15, 22, 29])
CASES.update({
    # A Markov head of full rank holding the sequence's bigrams (markov_table), so drafts are
    # accepted and the blocks' acceptance lengths differ.
    "dspark_vanilla": dict(DSPARK, draft_vocab=40, aux=[1, 3], markov_table=True,
                           dspark=dict(markov_rank=64, markov_head_type="vanilla", sample_from_anchor=True)),
    "dspark_gated": dict(DSPARK, draft_vocab=64, aux=[2, 3],
                         dspark=dict(markov_rank=8, markov_head_type="gated", sample_from_anchor=False,
                                     confidence_head_with_markov=False)),
    "dspark_rnn": dict(DSPARK, draft_vocab=40, aux=[1, 2],
                       dspark=dict(markov_rank=6, markov_head_type="rnn", sample_from_anchor=False)),
    "dspark_rnn_anchor": dict(DSPARK, draft_vocab=64, aux=[1, 3],
                              dspark=dict(markov_rank=6, markov_head_type="rnn", sample_from_anchor=True,
                                          enable_confidence_head=False)),
    # A sliding layer of window 4 before a full one, non-causal: speculators counts the window from
    # the anchor (the 4 positions before it, every slot alike).
    "dspark_sliding": dict(DSPARK, draft_vocab=64, aux=[1, 2],
                           layers=dict(layer_types=["sliding_attention", "full_attention"], sliding_window=4,
                                       use_sliding_window=True),
                           window=dict(sliding_window_non_causal=True),
                           dspark=dict(markov_rank=8, markov_head_type="vanilla", sample_from_anchor=False)),
})
# DFlash with a causal sliding layer (speculators' default causality for DFlash).
CASES["sliding_causal"] = dict(vocab=64, draft_vocab=64, block=6, aux=[1, 3], prompt=[9, 30, 4, 51, 12, 7],
                               continuation=30, anchors=[2, 6, 13, 21, 29],
                               layers=dict(layer_types=["sliding_attention", "full_attention"], sliding_window=5,
                                           use_sliding_window=True))
LIVE = dict(vocab=16, draft_vocab=12, block=8, aux=[2, 3])
# test_dflash_live's prompts and budget (it runs on this fixture through DFI_LIVE_DIR).
LIVE_PROMPTS = [[3, 7, 1, 12, 5], [9, 9, 2, 4, 0, 11, 6, 8], [14, 2, 5], [1, 13, 10, 3, 7, 7]]
LIVE_NEW_TOKENS = 40


def make_target(vocab, seed):
    torch.manual_seed(seed)
    target = Qwen3ForCausalLM(Qwen3Config(
        vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, max_position_embeddings=128, rope_theta=10000.0,
        tie_word_embeddings=False))
    randomize(target, torch.Generator().manual_seed(seed))
    return target.eval()


def greedy(target, prompt, new_tokens):
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(new_tokens):
            ids.append(int(target(torch.tensor([ids])).logits[0, -1].argmax()))
    return ids


def vocab_mapping(case, gen):
    """The training CLI's mapping: the most frequent target ids of a (here random) token count."""
    counts = torch.randint(1, 1000, (case["vocab"],), generator=gen)
    return build_vocab_mappings_from_distribution({i: int(c) for i, c in enumerate(counts)}, case["draft_vocab"],
                                                  case["vocab"])


def build_drafter(case, target_dir, seed):
    """The package's training path: from_training_args with the verifier's config (the draft's
    layer count in num_hidden_layers, as train.py's create_transformer_layer_config makes it),
    then random weights for everything the checkpoint stores."""
    gen = torch.Generator().manual_seed(seed)
    layer_config = Qwen3Config(
        vocab_size=case["vocab"], hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, max_position_embeddings=128, rope_theta=10000.0, rms_norm_eps=EPS,
        tie_word_embeddings=False, **case.get("layers", {}))
    reduced = case["draft_vocab"] < case["vocab"]
    d2t, t2d = vocab_mapping(case, gen) if reduced else (None, None)
    model_class = DFlash2DraftModel if "dflash2" in case else DSparkDraftModel if "dspark" in case else DFlashDraftModel
    model = model_class.from_training_args(
        layer_config, t2d=t2d, d2t=d2t, draft_vocab_size=case["draft_vocab"], block_size=case["block"],
        verifier_name_or_path=str(target_dir), target_layer_ids=case["aux"], mask_token_id=case["vocab"] - 1,
        draft_attn_impl="eager", **case.get("dflash2", {}), **case.get("dspark", {}), **case.get("window", {}))
    # The embedding is the verifier's (not saved); a full vocabulary's LM head is the verifier's too.
    skip = ("embed_tokens", "verifier_lm_head", "verifier_norm") + (() if reduced else ("lm_head",))
    randomize(model, gen, skip)
    with torch.no_grad():  # static kernels of a few taps: unit-scale mixing (gen_dflash_package's)
        for name, p in model.named_parameters():
            if name.endswith("base_kernel"):
                p.copy_(0.4 * torch.randn(p.shape, generator=gen))
    return model.eval()


def verifier_pass(target, seq):
    """The verifier's forward as speculators' data pipeline records it: its hidden states, and its
    last decoder layer's output before the final norm (the package's verifier_norm applies that;
    transformers' hidden_states[-1] is already normed, and normed twice its logits are not the
    verifier's)."""
    last = []
    hook = target.model.layers[-1].register_forward_hook(
        lambda _m, _i, o: last.append(o[0] if isinstance(o, tuple) else o))
    try:
        with torch.no_grad():
            out = target(seq, output_hidden_states=True)
    finally:
        hook.remove()
    return out, last[0]


def package_forward(model, target, ids, anchors, layer_outputs=None):
    """The package's own training forward at `anchors` (its select_anchors stood in by them):
    the final-normed block rows, their logits and the rows' sequence positions; each decoder
    layer's output [N*B, H] appended to `layer_outputs` when given."""
    seq = torch.tensor([ids])
    out, last = verifier_pass(target, seq)
    hidden = torch.cat([out.hidden_states[i] for i in model.target_layer_ids], dim=-1)
    anchor_tensor = torch.tensor(anchors)
    original = dflash_core.select_anchors
    dflash_core.select_anchors = lambda loss_mask, n, block: (anchor_tensor, torch.ones(n, dtype=torch.bool))
    hooks = [] if layer_outputs is None else [
        layer.register_forward_hook(lambda _m, _i, o: layer_outputs.append((o[0] if isinstance(o, tuple) else o)[0]))
        for layer in model.layers]
    try:
        with torch.no_grad():
            states, logits, _, _, block_indices = model._backbone_forward(
                hidden, seq, torch.ones_like(seq), last, torch.zeros_like(seq), max_anchors=len(anchors))
    finally:
        dflash_core.select_anchors = original
        for hook in hooks:
            hook.remove()
    return states, logits, block_indices


def package_logits(model, target, ids, anchors):
    return package_forward(model, target, ids, anchors)[1][0]


def run_package_metrics(model, target, ids, anchors, core):
    """The package's training forward at `anchors` with `core`'s compute_metrics stood in by a
    recorder that passes through: what the forward handed it (args and kwargs) and the metrics."""
    seq = torch.tensor([ids])
    out, last = verifier_pass(target, seq)
    hidden = torch.cat([out.hidden_states[i] for i in model.target_layer_ids], dim=-1)
    seen = {}
    original_metrics, original_anchors = core.compute_metrics, dflash_core.select_anchors

    def recorder(*args, **kwargs):
        seen.update(args=args, kwargs=kwargs)
        return original_metrics(*args, **kwargs)

    core.compute_metrics = recorder
    dflash_core.select_anchors = lambda loss_mask, n, block: (torch.tensor(anchors), torch.ones(n, dtype=torch.bool))
    try:
        with torch.no_grad():
            # The package's eager losses (its fused ones need Triton on a GPU).
            _, _, metrics = model(hidden_states=hidden, input_ids=seq, loss_mask=torch.ones_like(seq),
                                  verifier_last_hidden_states=last,
                                  document_ids=torch.zeros_like(seq), max_anchors=len(anchors),
                                  loss_config=resolve_loss_config("kl_div", "eager"),
                                  tv_loss_fn=resolve_loss_config("tv", "eager")["tv"][0])
    finally:
        core.compute_metrics, dflash_core.select_anchors = original_metrics, original_anchors
    return seen, metrics


def accept_len_per_block(logits, targets, loss_mask, block, sample_from_anchor):
    """The package's analytic accept_len (dspark's compute_metrics, which DFlash2's unary metrics
    are too) of each block alone: 1 + the running products of 1 - TV over its draft slots."""
    lengths = []
    with torch.no_grad():
        for b in range(logits.shape[1] // block):
            rows = slice(b * block, (b + 1) * block)
            _, metrics = dspark_metrics.compute_metrics(
                logits[:, rows], targets[:, rows], None, loss_mask[:, rows], block,
                loss_config=resolve_loss_config("kl_div", "eager"),
                tv_loss_fn=resolve_loss_config("tv", "eager")["tv"][0], sample_from_anchor=sample_from_anchor)
            lengths.append(metrics["accept_len_sum"] / metrics["accept_len_total"])
    return torch.stack(lengths).float()


def dspark_reference(model, target, ids, anchors, draft_to_target):
    """The package's DSpark forward at `anchors`: what it hands its compute_metrics (the biased
    logits, the verifier's targets, the confidence logits) and the metrics it returns."""
    seen, metrics = run_package_metrics(model, target, ids, anchors, dspark_core)
    logits, targets, confidence, loss_mask = seen["args"][:4]
    block, start = model.block_size, 0 if model.config.sample_from_anchor else 1
    correct = (logits[0].argmax(-1) == targets[0].argmax(-1)).view(len(anchors), block)[:, start:]
    per_block = [compute_accepted_length_counts(row[None], torch.ones_like(row[None]))[0] for row in correct]
    vocab = set(draft_to_target.tolist())
    # Slot k of a block drafts position anchor + k + 1 - start.
    in_vocab = [all(ids[a + k + 1 - start] in vocab for k in range(start, block) if a + k + 1 - start < len(ids))
                for a in anchors]
    reference = {"markov_logits": logits[0].float().contiguous(),
                 "eal_per_block": torch.stack(per_block).float(),
                 "eal_sum": metrics["eal_sum"].float().reshape(()), "eal_total": metrics["eal_total"].float().reshape(()),
                 "accept_len_per_block": accept_len_per_block(logits, targets, loss_mask, block,
                                                              model.config.sample_from_anchor),
                 "accept_len_sum": metrics["accept_len_sum"].float().reshape(()),
                 "accept_len_total": metrics["accept_len_total"].float().reshape(()),
                 "target_in_draft_vocab": torch.tensor(in_vocab, dtype=torch.long)}
    if confidence is not None:
        reference["confidence"] = confidence[0].float().contiguous()
    return reference


def dflash2_metrics_reference(model, target, ids, anchors):
    """DFlash2: the package's own training metrics at `anchors` (dflash2/metrics.py): the analytic
    accept_len of its unary logits per block, its candidate recall and its top-k oracle path."""
    seen, metrics = run_package_metrics(model, target, ids, anchors, dflash2_core)
    k, block = model.candidate_selector.top_k, model.block_size
    kw = seen["kwargs"]
    reference = {"accept_len_per_block": accept_len_per_block(kw["unary_logits"], kw["targets"], kw["loss_mask"],
                                                              block, model.config.sample_from_anchor)}
    for name in ("eal", "accept_len", f"unary_candidate_recall_at_{k}", f"unary_top_{k}_oracle_accepted_length"):
        short = name.replace(f"_at_{k}", "").replace(f"_top_{k}", "")
        reference[f"metrics.{short}_sum"] = metrics[f"{name}_sum"].float().reshape(())
        reference[f"metrics.{short}_total"] = metrics[f"{name}_total"].float().reshape(())
    return reference


def with_rope_theta(model, theta):
    """The same drafter with another RoPE base, built as the package builds its rotary embedding
    (diagnose's rope:theta=<x>)."""
    variant = copy.deepcopy(model)
    layer_config = copy.deepcopy(model.config.transformer_layer_config)
    layer_config.rope_parameters = {**layer_config.rope_parameters, "rope_theta": theta}
    variant.rotary_emb = Qwen3RotaryEmbedding(flatten_rope_parameters(layer_config))
    return variant


def selector_reference(model, target, ids, anchors):
    """DFlash2: the package's selector scores (score_candidates) of each slot's top-k candidates
    by unary logit, the predecessor being the sequence's previous token (its _predecessor_ids)."""
    states, logits, block_indices = package_forward(model, target, ids, anchors)
    with torch.no_grad():
        predecessors = model._predecessor_ids(torch.tensor([ids]), block_indices).reshape(1, -1)
        candidates = logits.topk(model.candidate_selector.top_k, dim=-1).indices
        scores = model.candidate_selector.score_candidates(logits, states, predecessors, candidates)
    return {"selector.candidates": candidates[0], "selector.scores": scores[0].float().contiguous(),
            "selector.predecessors": predecessors[0]}


def learn_bigrams(model, ids, scale=8.0):
    """A vanilla Markov head whose bias after token a is `scale` at the draft id of the token
    that follows a in `ids` (W1 = scale * I over the verifier's ids, W2 the bigram table)."""
    head = model.markov_head
    target_to_draft = {int(t): d for d, t in enumerate(torch.arange(model.draft_vocab_size) +
                                                        (model.d2t if model.d2t is not None else 0))}
    with torch.no_grad():
        head.markov_w1.weight.copy_(scale * torch.eye(head.markov_rank))
        head.markov_w2.weight.zero_()
        for a, b in zip(ids, ids[1:]):
            if b in target_to_draft:
                head.markov_w2.weight[target_to_draft[b], a] = 1.0


def generate_case(name, case, out_dir, seed):
    case_dir = out_dir / name
    target = make_target(case["vocab"], seed)
    target.save_pretrained(case_dir / "target", safe_serialization=True)
    model = build_drafter(case, case_dir / "target", seed + 1)
    ids = greedy(target, case["prompt"], case["continuation"])
    if case.get("markov_table"):
        learn_bigrams(model, ids)
    model.save_pretrained(case_dir / "drafter", safe_serialization=True)
    assert max(case["anchors"]) + case["block"] <= len(ids)
    layers = []
    logits = package_forward(model, target, ids, case["anchors"], layers)[1][0]
    reference = {"input_ids": torch.tensor(ids), "anchors": torch.tensor(case["anchors"]),
                 "logits": logits.float().contiguous()}
    reference.update({f"layer.{i}": output.float().contiguous() for i, output in enumerate(layers)})
    if model.d2t is not None:
        reference["draft_to_target"] = torch.arange(case["draft_vocab"]) + model.d2t
        # diagnose's lm-head:target: the package's final-normed block rows through the target's head.
        with torch.no_grad():
            states = package_forward(model, target, ids, case["anchors"])[0][0]
            reference["target_head_logits"] = (states @ target.lm_head.weight.T).float().contiguous()
    if "dflash2" in case:
        reference.update(selector_reference(model, target, ids, case["anchors"]))
        reference.update(dflash2_metrics_reference(model, target, ids, case["anchors"]))
    if "dspark" in case:
        draft_to_target = reference.get("draft_to_target", torch.arange(case["draft_vocab"]))
        reference.update(dspark_reference(model, target, ids, case["anchors"], draft_to_target))
    if "rope_theta_variant" in case:
        reference["logits.rope_theta"] = package_logits(
            with_rope_theta(model, case["rope_theta_variant"]), target, ids, case["anchors"]).float().contiguous()
    save_file(reference, str(case_dir / "reference.safetensors"))
    print(f"{name}: {len(ids)} tokens, {len(case['anchors'])} anchors, draft vocabulary {case['draft_vocab']} "
          f"of {case['vocab']}")


def live_loop(model, target, prompt, block):
    """Greedy speculative decoding, every block in full (StepCounting::FullBlocks), as
    gen_drafter.reference_loop runs it, with the package's forward drafting each block: its
    training forward at the one anchor `start` over the sequence so far (padded to the block's
    end: the block attends to context before the anchor only), draft ids mapped to target ids
    through d2t as vLLM's proposer maps them. The target is recomputed over the whole sequence."""
    d2t = model.d2t if model.d2t is not None else torch.zeros(model.draft_vocab_size, dtype=torch.long)
    with torch.no_grad():
        tokens = list(prompt) + [int(target(torch.tensor([prompt])).logits[0, -1].argmax())]
    start, steps = len(prompt), []
    while start < len(prompt) + LIVE_NEW_TOKENS:
        padded = tokens[:start + 1] + [0] * (block - 1)
        draft_ids = package_logits(model, target, padded, [start])[1:].argmax(-1)
        drafts = (draft_ids + d2t[draft_ids]).tolist()
        with torch.no_grad():
            post = target(torch.tensor([tokens[:start + 1] + drafts])).logits[0, start:].argmax(-1).tolist()
        accepted = 0
        while accepted < block - 1 and drafts[accepted] == post[accepted]:
            accepted += 1
        steps.append([start, accepted, post[accepted]] + drafts)
        tokens = tokens[:start + 1] + drafts[:accepted] + [post[accepted]]
        start += accepted + 1
    return tokens, steps


def generate_live(out_dir, seed):
    """OUT/live in the layout test_dflash_live reads (its prompts, reference.safetensors)."""
    live_dir = out_dir / "live"
    target = make_target(LIVE["vocab"], seed)
    target.save_pretrained(live_dir / "target", safe_serialization=True)
    model = build_drafter(LIVE, live_dir / "target", seed + 1)
    model.save_pretrained(live_dir / "drafter", safe_serialization=True)
    allowed = set((torch.arange(LIVE["draft_vocab"]) + model.d2t).tolist())
    reference, accepted = {}, []
    for i, prompt in enumerate(LIVE_PROMPTS):
        tokens, steps = live_loop(model, target, prompt, LIVE["block"])
        expected = greedy(target, prompt, len(tokens) - len(prompt))
        assert tokens == expected, f"live: the loop is not lossless for prompt {i}"
        assert all(set(s[3:]) <= allowed for s in steps), "a draft outside the draft vocabulary"
        reference.update({f"prompt.{i}": torch.tensor(prompt), f"tokens.{i}": torch.tensor(tokens),
                          f"steps.{i}": torch.tensor(steps), f"greedy.{i}": torch.tensor(expected)})
        accepted += [s[1] for s in steps]
    save_file(reference, str(live_dir / "reference.safetensors"))
    print(f"live: {len(accepted)} steps, tau {1 + sum(accepted) / len(accepted):.3f}, draft vocabulary "
          f"{LIVE['draft_vocab']} of {LIVE['vocab']}, accepted counts seen {sorted(set(accepted))}")


def generate_bad_mappings(out_dir):
    """Copies of reduced_vocab/drafter whose mapping is broken one way each, or whose LM head rows
    are another's (OUT/bad/<name>)."""
    source = out_dir / "reduced_vocab" / "drafter"
    tensors = load_file(str(source / "model.safetensors"))
    d2t, t2d = tensors["d2t"], tensors["t2d"]
    first_unmarked = int((~t2d).nonzero()[0])
    broken = {
        "d2t_length": {"d2t": d2t[:-1].clone()},
        "d2t_outside_vocabulary": {"d2t": torch.cat([d2t[:-1], (t2d.numel() - (d2t.numel() - 1)) + d2t[-1:] * 0])},
        "t2d_disagrees": {"t2d": t2d.clone().index_fill_(0, torch.tensor([first_unmarked]), True)},
    }
    # Heads a lint tells apart: the package's own copy of the target's rows at t2d (nothing to
    # say), and the target's first Vd rows under the same d2t (a mapping that is not the head's).
    target_head = load_file(str(out_dir / "reduced_vocab" / "target" / "model.safetensors"))["lm_head.weight"]
    broken["rows_of_the_mapping"] = {"lm_head.weight": target_head[t2d].clone()}
    broken["rows_of_the_first_ids"] = {"lm_head.weight": target_head[:d2t.numel()].clone()}
    for name, replaced in broken.items():
        target_dir = out_dir / "bad" / name
        target_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(source / "config.json", target_dir / "config.json")
        save_file({**tensors, **replaced}, str(target_dir / "model.safetensors"), metadata={"format": "pt"})
    print(f"bad: {', '.join(broken)}")


def main():
    out_dir = Path(sys.argv[1])
    for i, (name, case) in enumerate(CASES.items()):
        generate_case(name, case, out_dir, SEED + 10 * i)
    generate_bad_mappings(out_dir)
    generate_live(out_dir, SEED + 100)


if __name__ == "__main__":
    main()
