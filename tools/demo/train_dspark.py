#!/usr/bin/env python3
"""Step 6: a DSpark drafter (vLLM speculators' DSparkDraftModel): drafter-good's backbone, frozen,
plus the two heads DSpark adds, trained with the package's own loss.

The engine runs speculators' DSpark drafters (docs/dflash.md 1.1b): after the DFlash logits a
Markov head adds a bias from the previous token of the block (vanilla: W2 W1[prev], low rank)
and a confidence head predicts each slot's acceptance. This bundles one whose heads
learned something on the demo's data, so that the Markov bias and the confidence figures measure
more than noise:
- DSparkDraftModel.from_training_args (the package's training path) with drafter-good's geometry,
  aux_hidden_state_layer_ids = z-lab's target_layer_ids + 1, the full vocabulary (the target's LM
  head), sample_from_anchor false (drafter-good's convention: the anchor is the bonus token, slots
  1..15 draft), markov_head_type vanilla, markov_rank 64, confidence head on, fed the Markov
  embedding too; the heads start from the package's initialisation;
- drafter-good's tensors loaded and frozen: only markov_head.* and confidence_head.* train;
- data: gen_data.py's 640 target greedy answers (WORK/drafter_data.pt), the last HELD_OUT held out.
  Per answer the package's inputs come from the target in fp32 (speculators_common.verifier_inputs:
  hidden_states[2], [4], [5] concatenated, and the last layer's output before the final norm, from
  which the package makes its targets, the target's own distribution); loss_mask 1 on the answer
  tokens, document_ids 0, one answer per forward (BATCH forwards accumulated per step);
- the loss is DSparkDraftModel.forward's: the package's select_anchors (MAX_ANCHORS per answer),
  the package's --loss-fn term (default kl_div, its default for DSpark: KL to the target's
  distribution; --loss ce: cross-entropy to the target's argmax, its DFlash default and the
  objective drafter-good was trained with) with decay gamma GAMMA, plus the confidence BCE against
  the analytical acceptance (1 - TV); the eager loss implementations (the fused ones need Triton).
  On this data kl_div lowers the KL and raises the sampled acceptance (accept_len) while the greedy
  eal falls a little; ce raises the greedy eal (resources/demo/README.md has both runs' figures).
Metrics are the package's (eal: greedy accepted length per block, the bonus token included, with
the Markov bias conditioned on the text's tokens, which equals serving's up to the first rejection).
Held-out figures at every anchor of the held-out answers: before (the Markov head zeroed:
drafter-good's own drafts), at the package's initialisation, after training, and after the bf16
save (the reloaded checkpoint).

Usage: train_dspark.py [STEPS] [--loss kl_div|ce]
Writes OUT/drafter-dspark (config.json, model.safetensors, training.json) and
WORK/drafter-dspark.json (log).
"""

import argparse
import math
import time

import torch
from safetensors.torch import load_file

import common
import speculators_common as sc
from speculators.models.dspark import DSparkDraftModel

NAME = "drafter-dspark"
SEED = 13
BATCH = 8              # answers per step, one per forward (gradients accumulated)
MAX_ANCHORS = 16
GAMMA = 7.0            # drafter-good's decay (train_drafter.py)
LR = 2e-2              # of 5e-3 and 2e-2 (200 steps, kl_div), the lower held-out loss
WARMUP = 30
HELD_OUT = 64
LOG_EVERY = 50
EVAL_ANCHORS = 96      # held out: every anchor (answers are at most gen_data.py's 96 tokens)
HEADS = ("markov_head.", "confidence_head.")
DSPARK = {"sample_from_anchor": False, "markov_head_type": "vanilla", "markov_rank": 64,
          "enable_confidence_head": True, "confidence_head_with_markov": True}
METRICS = ("loss", "eal", "confidence_abs_error", "accept_len")


def build_inputs(target, data, aux_ids):
    """Per answer: the package forward's tensors (fp32, computed once)."""
    items = []
    for item in data:
        hidden, last, _ = sc.verifier_inputs(target, item["tokens"], aux_ids)
        ids = item["tokens"][None]
        loss_mask = torch.zeros_like(ids)
        loss_mask[:, item["prompt_len"]:] = 1
        items.append({"hidden_states": hidden, "input_ids": ids, "loss_mask": loss_mask,
                      "verifier_last_hidden_states": last, "document_ids": torch.zeros_like(ids)})
    return items


def has_anchor(item):
    """select_anchors excludes the last block_size positions; an answer needs one before them."""
    mask = item["loss_mask"][0].clone()
    mask[-common.BLOCK:] = 0
    return bool(mask.any())


def forward(model, item, loss, max_anchors=MAX_ANCHORS):
    return model(**item, max_anchors=max_anchors, gamma=GAMMA, **sc.eager_losses(loss))


def add(acc, metrics):
    for m in METRICS:
        acc[m][0] += float(metrics[f"{m}_sum"])
        acc[m][1] += float(metrics[f"{m}_total"])


def means(acc):
    return {m: acc[m][0] / max(acc[m][1], 1e-9) for m in METRICS}


def new_acc():
    return {m: [0.0, 0.0] for m in METRICS}


def evaluate(model, items, loss):
    """The package's metrics over the held-out answers at every anchor: EVAL_ANCHORS is above any
    answer's number of positions, so the package's select_anchors takes them all (no draw; the
    training generator is left untouched all the same)."""
    acc = new_acc()
    with torch.random.fork_rng(), torch.no_grad():
        for item in items:
            assert int(item["loss_mask"].sum()) <= EVAL_ANCHORS
            add(acc, forward(model, item, loss, EVAL_ANCHORS)[2])
    return {k: round(v, 4) for k, v in means(acc).items()}


def evaluate_markov_zeroed(model, items, loss):
    w2 = model.markov_head.markov_w2.weight
    saved = w2.detach().clone()
    with torch.no_grad():
        w2.zero_()
    result = evaluate(model, items, loss)
    with torch.no_grad():
        w2.copy_(saved)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("steps", type=int, nargs="?", default=600)
    ap.add_argument("--loss", default="kl_div", choices=["kl_div", "ce"],
                    help="the package's --loss-fn term (kl_div: its DSpark default)")
    args = ap.parse_args()
    loss_fn, steps = args.loss, args.steps
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    t0 = time.time()
    good = sc.good_config()
    model = DSparkDraftModel.from_training_args(sc.layer_config(good), draft_vocab_size=common.TARGET_VOCAB,
                                                **sc.drafter_args(good), **DSPARK)
    sc.load_good_weights(model)
    for name, p in model.named_parameters():
        p.requires_grad_(name.startswith(HEADS))
    params = [p for p in model.parameters() if p.requires_grad]
    trained = {n: list(p.shape) for n, p in model.named_parameters() if p.requires_grad}
    model.train()

    target = sc.load_target()
    data = torch.load(common.WORK / "drafter_data.pt")["data"]
    items = build_inputs(target, data, model.target_layer_ids)
    # The package's targets (verifier_norm, then the LM head, of the pre-norm state) are the target's logits.
    probe = data[0]["tokens"]
    hidden, last, logits = sc.verifier_inputs(target, probe, model.target_layer_ids)
    with torch.no_grad():
        target_diff = (model.verifier_lm_head(model.verifier_norm(last)) - logits).abs().max().item()
    assert target_diff < 1e-3, f"the package's verifier logits differ from the target's by {target_diff}"
    train = [it for it in items[:-HELD_OUT] if has_anchor(it)]
    held = [it for it in items[-HELD_OUT:] if has_anchor(it)]
    print(f"{NAME}: {sum(p.numel() for p in params) / 1e6:.3f}M trained parameters {trained}, "
          f"{len(train)} training answers, {len(held)} held out; inputs {time.time() - t0:.0f}s", flush=True)

    before = evaluate_markov_zeroed(model, held, loss_fn)
    at_init = evaluate(model, held, loss_fn)
    print(f"held-out before (Markov head zeroed): {before}\nheld-out at the package's init: {at_init}", flush=True)

    opt = torch.optim.AdamW(params, lr=LR, betas=(0.9, 0.95), weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / WARMUP) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps)))))
    log = {"name": NAME, "steps": steps, "batch": BATCH, "loss_fn": loss_fn,
           "curve_columns": ["step"] + list(METRICS), "curve": []}
    acc, t_train = new_acc(), time.time()
    for step in range(steps):
        opt.zero_grad()
        for i in torch.randint(0, len(train), (BATCH,), generator=gen).tolist():
            _, loss, metrics = forward(model, train[i], loss_fn)
            (loss / BATCH).backward()
            add(acc, metrics)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        done = step + 1
        if done % LOG_EVERY == 0 or done == steps:
            m = means(acc)
            log["curve"].append([done] + [round(m[k], 4) for k in METRICS])
            print(f"step {done} loss {m['loss']:.4f} eal {m['eal']:.3f} confidence_abs_error "
                  f"{m['confidence_abs_error']:.4f} accept_len {m['accept_len']:.3f} "
                  f"({time.time() - t_train:.0f}s)", flush=True)
            acc = new_acc()
    log["train_seconds"] = round(time.time() - t_train)
    after = evaluate(model, held, loss_fn)
    print(f"held-out after training: {after}", flush=True)

    model.eval()
    out_dir = common.OUT / NAME
    sc.save_bf16(model, out_dir)
    sc.check_config(out_dir, "dspark")
    saved = sc.load_saved(DSparkDraftModel, out_dir)
    good_w = load_file(str(sc.GOOD_DIR / "model.safetensors"))
    saved_sd = saved.state_dict()
    assert all(torch.equal(saved_sd[k].bfloat16(), v) for k, v in good_w.items()), "the backbone changed"
    after_bf16 = evaluate(saved, held, loss_fn)
    print(f"held-out after the bf16 save (reloaded): {after_bf16}", flush=True)

    held_out = {"answers": len(held), "anchors": "every answer position with a whole block after it",
                "before_markov_zeroed": before, "at_init": at_init, "after": after, "after_bf16_saved": after_bf16}
    log.update(held_out=held_out, verifier_logits_max_abs_diff=target_diff, seconds=round(time.time() - t0))
    common.write_json(out_dir / "training.json", {
        "script": "tools/demo/train_dspark.py", "seed": SEED, "steps": steps, "batch": BATCH,
        "max_anchors": MAX_ANCHORS, "lr": LR,
        "loss": f"speculators 0.9.0 DSparkDraftModel.forward (eager): loss_fn {loss_fn}, decay gamma {GAMMA}, "
                "+ confidence BCE (alpha 1)",
        "frozen": "drafter-good's weights (fc, hidden_norm, layers, norm) and the target's embedding, "
                  "final norm and LM head",
        "trained": trained,
        "data": f"gen_data.py's {len(data)} answers; the first {len(data) - HELD_OUT} ({len(train)} with an "
                f"anchor) for training, the last {HELD_OUT} held out (drafter-good trained on all but the "
                "last 16, so its backbone saw 48 of them)",
        "held_out": held_out})
    common.write_json(common.WORK / f"{NAME}.json", log)
    print(f"{NAME}: done in {log['seconds']}s", flush=True)


if __name__ == "__main__":
    main()
