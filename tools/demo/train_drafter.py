#!/usr/bin/env python3
"""Step 4: train a DFlash drafter on the target's greedy answers (docs/dflash.md 4.2-4.5).

Per step: BATCH answers; per answer up to NUM_ANCHORS anchors drawn uniformly without
replacement from the answer positions (first answer token .. second-to-last token: every
position the live loop can use as an anchor; label slots past the end are masked), sorted.
Blocks [x[a], MASK x 15] embedded with the target's (frozen) embedding, at positions a..a+15;
context = the target features of the whole sequence at their own positions; mask of
docs/dflash.md 4.4 (context strictly before the anchor; with --anchor-visible, k <= a: the
bug of the user story); loss = sum_k w_k CE(slot k, x[a+k]) / sum w_k with
w_k = exp(-(k-1)/7), slot 0 weight 0; LM head = the target's (tied embedding), frozen.

Context features: hidden_states[id + 1] for the config's target_layer_ids (gen_data.py "feats").
With --tap-offset -1 the drafter trains on hidden_states[id] instead ("feats_shifted": every tap
one layer earlier) while its config still names the same target_layer_ids: the off-by-one of
the published engines, planted so that an engine's diagnosis can find it (shifting all taps by
-1 must raise tau). The planted bug is recorded in training.json beside the config.

Usage: train_drafter.py NAME STEPS [--anchor-visible] [--tap-offset -1] [--early STEP:NAME]
Writes OUT/NAME (config.json + model.safetensors, bf16) and WORK/NAME.json (log).
"""

import argparse
import json
import math
import time

import torch
import torch.nn.functional as F
from safetensors.torch import load_file

import common
import dflash_torch as dt

SEED = 7
BATCH = 8
NUM_ANCHORS = 16
GAMMA = 7.0
LR = 2e-3
WARMUP = 30
HELD_OUT = 16


def drafter_cfg(target_cfg, tap_ids, mask_id):
    return {"hidden": target_cfg["hidden_size"], "target_hidden": target_cfg["hidden_size"],
            "layers": 2, "heads": 4, "kv_heads": 2, "head_dim": 32, "inter": 384,
            "rope_theta": 10000.0, "block": common.BLOCK, "tap_ids": tap_ids, "mask_id": mask_id,
            "target_layers": target_cfg["num_hidden_layers"], "vocab": target_cfg["vocab_size"]}


FEATURES = {0: "feats", -1: "feats_shifted"}  # --tap-offset -> gen_data.py's feature key


def make_batch(items, gen, block, mask_id, embed, anchor_visible, feat_key="feats"):
    bs = len(items)
    tmax = max(len(it["tokens"]) for it in items)
    fdim = items[0][feat_key].shape[1]
    feats = torch.zeros(bs, tmax, fdim)
    anchors = torch.zeros(bs, NUM_ANCHORS, dtype=torch.long)
    keep = torch.zeros(bs, NUM_ANCHORS, dtype=torch.bool)
    labels = torch.zeros(bs, NUM_ANCHORS, block, dtype=torch.long)
    valid = torch.zeros(bs, NUM_ANCHORS, block, dtype=torch.bool)
    block_ids = torch.full((bs, NUM_ANCHORS, block), mask_id, dtype=torch.long)
    for b, it in enumerate(items):
        tok, t = it["tokens"], len(it["tokens"])
        feats[b, :t] = it[feat_key].float()
        cand = torch.arange(it["prompt_len"], t - 1)
        n = min(NUM_ANCHORS, len(cand))
        pick = cand[torch.randperm(len(cand), generator=gen)[:n]].sort().values
        anchors[b, :n], keep[b, :n] = pick, True
        for j, a in enumerate(pick.tolist()):
            block_ids[b, j, 0] = tok[a]
            end = min(t, a + block)
            labels[b, j, :end - a] = tok[a:end]
            valid[b, j, 1:end - a] = True
    block_pos = (anchors[..., None] + torch.arange(block)).view(bs, -1)
    mask = dt.training_mask(anchors, keep, tmax, block, anchor_visible)
    emb = embed[block_ids.view(bs, -1)]
    return feats, torch.arange(tmax).expand(bs, tmax), emb, block_pos, mask, labels, valid & keep[..., None]


def step_loss(w, cfg, batch, embed, decay):
    feats, ctx_pos, emb, block_pos, mask, labels, valid = batch
    states = dt.forward(w, cfg, feats, ctx_pos, emb, block_pos, mask)
    bs, n, block = labels.shape
    states = states.view(bs, n, block, -1)
    weight = decay.expand(bs, n, block) * valid
    sel = weight > 0
    logits = states[sel] @ embed.T
    ce = F.cross_entropy(logits, labels[sel], reduction="none")
    loss = (ce * weight[sel]).sum() / weight[sel].sum()
    return loss, logits.argmax(-1) == labels[sel], sel


def held_out_tau(w, cfg, items, embed, decay, anchor_visible, feat_key="feats"):
    """Teacher-forced acceptance on held-out answers: per anchor 1 + number of leading slots
    whose argmax equals the target's token (slots past the answer end stop the count)."""
    gen = torch.Generator().manual_seed(123)
    with torch.no_grad():
        batch = make_batch(items, gen, cfg["block"], cfg["mask_id"], embed, anchor_visible, feat_key)
        _, hit, sel = step_loss(w, cfg, batch, embed, decay)
    ok = torch.zeros(sel.shape, dtype=torch.bool)
    ok[sel] = hit
    ok[..., 0] = True
    lead = ok.long().cumprod(-1).sum(-1)          # 1 + accepted drafts, per anchor
    keep = batch[-1].any(-1)
    return lead[keep].float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("steps", type=int)
    ap.add_argument("--anchor-visible", action="store_true")
    ap.add_argument("--tap-offset", type=int, default=0, choices=sorted(FEATURES),
                    help="-1: train on hidden_states[id] instead of hidden_states[id + 1] (planted bug)")
    ap.add_argument("--early", default=None, help="STEP:NAME also save the weights after STEP steps")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (1: train_all.sh runs two drafters side by side on 2 cores)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)

    target_cfg = json.loads((common.OUT / "target" / "config.json").read_text())
    tw = load_file(str(common.OUT / "target" / "model.safetensors"))
    embed = next(v for k, v in tw.items() if k.endswith("embed_tokens.weight")).float()
    tok = common.load_tokenizer()
    mask_id = tok.get_vocab_size()  # the first padded embedding row of the target
    assert mask_id < target_cfg["vocab_size"]
    blob = torch.load(common.WORK / "drafter_data.pt")
    data = blob["data"]
    train, held = data[:-HELD_OUT], data[-HELD_OUT:]
    cfg = drafter_cfg(target_cfg, blob["tap_ids"], mask_id)
    w = dt.init_weights(cfg, torch.Generator().manual_seed(SEED))
    params = list(w.values())
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.AdamW(params, lr=LR, betas=(0.9, 0.95), weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / WARMUP) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, s / args.steps)))))
    decay = dt.decay_weights(cfg["block"], GAMMA)
    early_step, early_name = (int(args.early.split(":")[0]), args.early.split(":")[1]) if args.early else (None, None)
    training = {"script": "tools/demo/train_drafter.py", "seed": SEED,
                "mask": "anchor-visible (k <= anchor)" if args.anchor_visible else "reference (k < anchor)",
                "loss_decay_gamma": GAMMA, "num_anchors": NUM_ANCHORS, "batch": BATCH}
    feat_key = FEATURES[args.tap_offset]
    if args.tap_offset:
        training["tap_offset"] = args.tap_offset
        training["planted_bug"] = (
            "trained on hidden_states[id] instead of hidden_states[id + 1] for the target_layer_ids "
            "above: every tap is one layer earlier than this config says")
    print(f"{args.name}: {sum(p.numel() for p in params) / 1e6:.2f}M parameters, {len(train)} answers, "
          f"mask id {mask_id}", flush=True)
    log = {"name": args.name, "steps": args.steps, "anchor_visible": args.anchor_visible, "curve": []}
    if args.tap_offset:
        log["tap_offset"] = args.tap_offset
    t0 = time.time()
    for step in range(args.steps):
        idx = torch.randint(0, len(train), (BATCH,), generator=gen).tolist()
        batch = make_batch([train[i] for i in idx], gen, cfg["block"], mask_id, embed, args.anchor_visible, feat_key)
        loss, hit, _ = step_loss(w, cfg, batch, embed, decay)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        done = step + 1
        if done == early_step:
            dt.save(cfg, w, common.OUT / early_name, {**training, "steps": done})
            log["early"] = {"name": early_name, "steps": done, "seconds": round(time.time() - t0),
                            "held_out_tau_tf": held_out_tau(w, cfg, held, embed, decay, False, feat_key)}
            print(f"saved {early_name} after {done} steps: {log['early']}", flush=True)
        if step % 20 == 0 or done == args.steps:
            tau = held_out_tau(w, cfg, held, embed, decay, args.anchor_visible, feat_key) if done % 100 == 0 or done == args.steps else None
            log["curve"].append([done, round(loss.item(), 4), tau])
            print(f"step {done} loss {loss.item():.3f} slot-acc {hit.float().mean():.3f}"
                  f"{'' if tau is None else f' held-out tau(tf) {tau:.2f}'} ({time.time() - t0:.0f}s)", flush=True)
    log["seconds"] = round(time.time() - t0)
    log["held_out_tau_tf_reference_mask"] = held_out_tau(w, cfg, held, embed, decay, False, feat_key)
    if args.tap_offset:  # what the engine measures when it trusts the config's taps
        log["held_out_tau_tf_config_taps"] = held_out_tau(w, cfg, held, embed, decay, False)
    dt.save(cfg, w, common.OUT / args.name, {**training, "steps": args.steps})
    common.write_json(common.WORK / f"{args.name}.json", log)
    print(f"{args.name}: done in {log['seconds']}s", flush=True)


if __name__ == "__main__":
    main()
