#!/usr/bin/env python3
"""Step 5: drafter-good in vLLM speculators' DFlash format, with a reduced draft vocabulary.

The engine reads speculators' checkpoints (docs/dflash.md 1.1b) besides z-lab's; this bundles one
made by the package itself (speculators 0.9.0, as a library) from drafter-good's weights:
- the draft vocabulary is the DRAFT_VOCAB target ids the package's
  build_vocab_mappings_from_distribution picks from the token counts of the drafter training
  data's answers (the target's greedy answers, WORK/drafter_data.pt; the package's training CLI
  counts the loss-mask tokens the same way). Where fewer distinct ids occur than DRAFT_VOCAB, the
  package fills up with the lowest ids not yet chosen;
- DFlashDraftModel.from_training_args builds the model: aux_hidden_state_layer_ids = z-lab's
  target_layer_ids + 1, the decoder layers' Qwen3 config with vocab_size = the target's, and the
  package's load_verifier_weights copies the target's LM head rows at the chosen ids into the
  draft lm_head (the target is tied: its embedding rows);
- drafter-good's tensors (same names in both layouts) are loaded, and the package's save_pretrained
  writes OUT/drafter-speculators-reduced (bf16, like the z-lab drafters; the verifier's embedding
  and LM head are not saved, the reduced lm_head, d2t and t2d are).

Check: the saved drafter, reloaded by the package, against drafter-good run by the package with
the full vocabulary (the same weights, from_training_args without a mapping) and by this
repository's trainer forward (dflash_torch); the package's aux hidden states must match the
features gen_data.py stored for z-lab's taps (bf16). On the held-out answers, at the package's own
anchors, the reduced logits must equal the full logits at the draft ids, and the full logits
dflash_torch's. Deterministic (SEED only fixes the anchors of the check).

Usage: convert_speculators.py
Writes OUT/drafter-speculators-reduced (config.json, model.safetensors, training.json) and
WORK/drafter-speculators-reduced.json.
"""

import time
from collections import Counter

import torch

import common
import dflash_torch as dt
import speculators_common as sc
from speculators.models.dflash import DFlashDraftModel
from speculators.train.vocab_mapping import build_vocab_mappings_from_distribution

NAME = "drafter-speculators-reduced"
DRAFT_VOCAB = 1024
SEED = 11
HELD_OUT = 64          # the last answers of the data, as train_dspark.py holds them out
MAX_ANCHORS = 16
TOLERANCE = 1e-3       # max |logit difference|: the paths share the weights (bf16 values) and compute in fp32


def answer_counts(data):
    counts = Counter()
    for item in data:
        counts.update(item["tokens"][item["prompt_len"]:].tolist())
    return counts


def package_logits(model, hidden, ids, loss_mask, last, seed):
    """The package's training forward up to the logits, its select_anchors seeded with `seed`."""
    torch.manual_seed(seed)
    with torch.no_grad():
        _, logits, _, mask, block_idx = model._backbone_forward(  # noqa: SLF001
            hidden, ids, loss_mask, last, torch.zeros_like(ids), max_anchors=MAX_ANCHORS)
    return logits[0], mask[0].bool(), block_idx


def reference_logits(w, cfg, feats, tokens, block_idx, embed):
    """drafter-good by this repository's trainer forward at the same anchors (reference mask)."""
    block = cfg["block"]
    anchors = block_idx.view(-1, block)[:, 0]
    ids = torch.full((len(anchors), block), cfg["mask_id"])
    ids[:, 0] = tokens[anchors]
    t = feats.shape[0]
    mask = dt.training_mask(anchors[None], torch.ones(1, len(anchors), dtype=torch.bool), t, block, False)
    states = dt.forward(w, cfg, feats[None], torch.arange(t)[None], embed[ids.view(1, -1)], block_idx[None], mask)
    return states[0] @ embed.T


def main():
    torch.set_num_threads(1)
    t0 = time.time()
    good = sc.good_config()
    data = torch.load(common.WORK / "drafter_data.pt")["data"]
    counts = answer_counts(data)
    d2t, t2d = build_vocab_mappings_from_distribution(dict(counts), DRAFT_VOCAB, common.TARGET_VOCAB)
    draft_ids = torch.arange(DRAFT_VOCAB) + d2t
    print(f"{len(counts)} distinct ids in {sum(counts.values())} answer tokens; draft vocabulary "
          f"{DRAFT_VOCAB} of {common.TARGET_VOCAB} ({DRAFT_VOCAB - min(len(counts), DRAFT_VOCAB)} "
          f"filled by the package with the lowest unused ids)", flush=True)

    layer = sc.layer_config(good)
    model = DFlashDraftModel.from_training_args(layer, t2d=t2d, d2t=d2t, draft_vocab_size=DRAFT_VOCAB,
                                                **sc.drafter_args(good))
    sc.load_good_weights(model)
    target = sc.load_target()
    embed = target.model.embed_tokens.weight.detach()
    assert torch.equal(model.lm_head.weight, embed[draft_ids]), "lm_head is not the target's rows at d2t"
    out_dir = common.OUT / NAME
    sc.save_bf16(model, out_dir)
    cfg = sc.check_config(out_dir, "dflash")

    # The check: reloaded reduced drafter vs the full-vocabulary package model vs dflash_torch.
    reduced = sc.load_saved(DFlashDraftModel, out_dir)
    assert torch.equal(reduced.d2t, d2t) and torch.equal(reduced.t2d, t2d)
    full = DFlashDraftModel.from_training_args(sc.layer_config(good), draft_vocab_size=common.TARGET_VOCAB,
                                               **sc.drafter_args(good))
    sc.load_good_weights(full)  # drafter-good's bf16 values, exactly (computed in fp32)
    full.eval()
    w = {k: v.float() for k, v in full.state_dict().items()}
    ref_cfg = {"heads": layer.num_attention_heads, "kv_heads": layer.num_key_value_heads,
               "head_dim": layer.head_dim, "layers": layer.num_hidden_layers, "rope_theta": good["rope_theta"],
               "block": good["dflash_config"]["block_size"], "mask_id": good["dflash_config"]["mask_token_id"]}
    diff_full = diff_ref = 0.0
    rows = agree = in_vocab = scored = 0
    for n, item in enumerate(data[-HELD_OUT:]):
        ids = item["tokens"][None]
        loss_mask = torch.zeros_like(ids)
        loss_mask[:, item["prompt_len"]:] = 1
        hidden, last, _ = sc.verifier_inputs(target, item["tokens"], reduced.target_layer_ids)
        r_logits, r_mask, block_idx = package_logits(reduced, hidden, ids, loss_mask, last, SEED + n)
        f_logits, f_mask, f_idx = package_logits(full, hidden, ids, loss_mask, last, SEED + n)
        assert torch.equal(block_idx, f_idx) and torch.equal(r_mask, f_mask)
        if not r_mask.any():
            continue
        # The package's aux ids tap what gen_data.py stored for z-lab's target_layer_ids (there in bf16).
        feats = item["feats"].float()
        assert ((hidden[0] - feats).abs() <= feats.abs() / 128 + 1e-6).all(), "aux ids tap other layers"
        ref = reference_logits(w, ref_cfg, hidden[0], item["tokens"], block_idx, embed.float())
        sel = r_mask  # the rows the package scores (answer positions, slots 1..15 of valid anchors)
        diff_full = max(diff_full, (r_logits[sel] - f_logits[sel][:, draft_ids]).abs().max().item())
        diff_ref = max(diff_ref, (f_logits[sel] - ref[sel]).abs().max().item())
        r_top = draft_ids[r_logits[sel].argmax(-1)]
        f_top = f_logits[sel].argmax(-1)
        in_vocab += int(t2d[f_top].sum())
        agree += int((r_top == f_top).sum())
        rows += int(sel.sum())
        scored += 1
    result = {"draft_vocab_size": DRAFT_VOCAB, "distinct_answer_ids": len(counts),
              "answer_tokens_counted": sum(counts.values()), "held_out_answers": scored, "rows_checked": rows,
              "max_abs_diff_reduced_vs_full_at_draft_ids": diff_full,
              "max_abs_diff_full_package_vs_dflash_torch": diff_ref,
              "argmax_agreement_reduced_vs_full": agree / rows,
              "full_argmax_in_draft_vocab": in_vocab / rows,
              "seconds": round(time.time() - t0)}
    print(result, flush=True)
    assert diff_full < TOLERANCE and diff_ref < TOLERANCE, "the converted drafter's logits differ"
    common.write_json(out_dir / "training.json", {
        "script": "tools/demo/convert_speculators.py", "seed": SEED, "source": "drafter-good (weights unchanged)",
        "format": "speculators 0.9.0 DFlashDraftModel.save_pretrained",
        "draft_vocab": f"{DRAFT_VOCAB} ids: the package's build_vocab_mappings_from_distribution over the "
                       f"answer-token counts of gen_data.py's {len(data)} answers ({len(counts)} distinct ids; "
                       "the rest the lowest unused ids)",
        "lm_head": "the target's LM head (tied embedding) rows at the draft ids, by the package's load_verifier_weights",
        "check": {k: v for k, v in result.items() if k != "seconds"}})
    common.write_json(common.WORK / f"{NAME}.json", result)
    print(f"{NAME}: done in {result['seconds']}s; aux_hidden_state_layer_ids {cfg['aux_hidden_state_layer_ids']}",
          flush=True)


if __name__ == "__main__":
    main()
