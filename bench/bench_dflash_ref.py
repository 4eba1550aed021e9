#!/usr/bin/env python3
"""Python reference of bench_dflash: the greedy DFlash live loop (docs/dflash.md 3) and the
teacher-forced pass (docs/dflash.md 4) with transformers (target) and a plain-PyTorch drafter,
on the bundled demo models, the same work the engine does.

Live loop, as the reference benchmark runs it, with caches:
- target prefill over the prompt (transformers, DynamicCache), taps = hidden_states[l + 1];
- per step: the drafter drafts B-1 tokens from [anchor, MASK x (B-1)] with a context K/V
  cache (per layer, RoPE'd K and V of the committed context; the block's K/V are dropped
  after the call, docs/dflash.md 2.4); the target verifies the block in one cached forward
  with taps;
  accepted = leading drafts equal to the target's argmax; commit those and the bonus;
- rollback: attention layers' KV cropped to the committed length; the Gated DeltaNet layers
  (recurrent, not croppable) are restored to their state before the verify and rerun on the
  first acc+1 of their verify inputs (captured by a hook), as z-lab's MLX loop and the engine
  recompute the recurrent state over the accepted prefix; nothing to do when all are accepted.
- stop after a step that commits a stop token, or when max_new_tokens are reached.

Teacher-forced: one target forward over the whole sequence (prompt + the live loop's
tokens); drafter blocks at every anchor of the generated part, 32 anchors per batched
drafter forward with the training anchor-block mask (tools/demo/dflash_torch.forward and
training_mask, docs/dflash.md 4.4), acceptance per anchor against the target's greedy
predictions. The best pass's time is also split into its two stages (target forward,
drafter).

The drafter math is tools/demo/dflash_torch.py's (rms_norm, rotate_half, rope_tables; its
batched forward for teacher forcing), imported, not copied. Prints one JSON object.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "demo"))
import dflash_torch as dt  # noqa: E402

ANCHORS_PER_FORWARD = 32  # as the engine's teacher-forced pass


class Drafter:
    def __init__(self, directory, target):
        self.cfg_json = json.loads((Path(directory) / "config.json").read_text())
        c = self.cfg_json
        self.cfg = dict(hidden=c["hidden_size"], heads=c["num_attention_heads"],
                        kv_heads=c["num_key_value_heads"], head_dim=c["head_dim"],
                        layers=c["num_hidden_layers"], rope_theta=c["rope_theta"])
        assert all(t == "full_attention" for t in c.get("layer_types", ["full_attention"])), \
            "this reference drafts with full (bidirectional) layers only"
        assert not c.get("rope_scaling"), "no RoPE scaling in this reference"
        self.block = c["dflash_config"].get("block_size", c["block_size"])
        self.mask_id = c["dflash_config"]["mask_token_id"]
        self.taps = c["dflash_config"]["target_layer_ids"]
        self.w = {k.removeprefix("model."): v.float()
                  for k, v in load_file(str(Path(directory) / "model.safetensors")).items()}
        self.embed = target.get_input_embeddings().weight
        self.lm_head = target.get_output_embeddings().weight

    def new_cache(self):
        return [[None, None] for _ in range(self.cfg["layers"])]

    def draft(self, cache, new_ctx, anchor_token, start):
        """Live call (docs/dflash.md 2.2): new_ctx [S, F*Ht] = features of the S committed
        tokens the drafter has not seen (positions start-S .. start-1); cache holds the earlier
        context's K/V per layer. Returns logits [B-1, V]; the cache keeps the context only."""
        cfg, w, b = self.cfg, self.w, self.block
        nh, nkv, d = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
        s = new_ctx.shape[0]
        ctx = dt.rms_norm(new_ctx @ w["fc.weight"].T, w["hidden_norm.weight"])
        cos, sin = dt.rope_tables(torch.arange(start - s, start + b), d, cfg["rope_theta"])
        cos_c, sin_c, cos_b, sin_b = cos[:s], sin[:s], cos[s:], sin[s:]
        ids = torch.full((b,), self.mask_id, dtype=torch.long)
        ids[0] = anchor_token
        h = self.embed[ids]
        for l in range(cfg["layers"]):
            p = f"layers.{l}.self_attn."
            x = dt.rms_norm(h, w[f"layers.{l}.input_layernorm.weight"])
            q = dt.rms_norm((x @ w[p + "q_proj.weight"].T).view(b, nh, d).transpose(0, 1),
                            w[p + "q_norm.weight"])
            q = q * cos_b + dt.rotate_half(q) * sin_b
            kvin = torch.cat([ctx, x])
            k = dt.rms_norm((kvin @ w[p + "k_proj.weight"].T).view(s + b, nkv, d).transpose(0, 1),
                            w[p + "k_norm.weight"])
            k = k * torch.cat([cos_c, cos_b]) + dt.rotate_half(k) * torch.cat([sin_c, sin_b])
            v = (kvin @ w[p + "v_proj.weight"].T).view(s + b, nkv, d).transpose(0, 1)
            past_k, past_v = cache[l]
            ctx_k = k[:, :s] if past_k is None else torch.cat([past_k, k[:, :s]], 1)
            ctx_v = v[:, :s] if past_v is None else torch.cat([past_v, v[:, :s]], 1)
            cache[l] = [ctx_k, ctx_v]  # context only: the block's K/V are dropped (crop to start)
            keys = torch.cat([ctx_k, k[:, s:]], 1).repeat_interleave(nh // nkv, 0)
            values = torch.cat([ctx_v, v[:, s:]], 1).repeat_interleave(nh // nkv, 0)
            a = F.scaled_dot_product_attention(q, keys, values)  # no mask: bidirectional
            h = h + a.transpose(0, 1).reshape(b, nh * d) @ w[p + "o_proj.weight"].T
            m = f"layers.{l}.mlp."
            x = dt.rms_norm(h, w[f"layers.{l}.post_attention_layernorm.weight"])
            h = h + (F.silu(x @ w[m + "gate_proj.weight"].T) * (x @ w[m + "up_proj.weight"].T)) \
                @ w[m + "down_proj.weight"].T
        out = dt.rms_norm(h, w["norm.weight"])
        return out[1:] @ self.lm_head.T

    def teacher_forced(self, feats, tokens, anchors):
        """Training layout (docs/dflash.md 4.3-4.4) through dflash_torch.forward:
        logits [N, B-1, V]."""
        cfg = dict(self.cfg, tap_ids=self.taps)
        b, t = self.block, feats.shape[0]
        a = torch.tensor(anchors, dtype=torch.long)[None]
        ids = torch.full((len(anchors), b), self.mask_id, dtype=torch.long)
        ids[:, 0] = tokens[a[0]]
        block_pos = (a[0][:, None] + torch.arange(b)[None]).reshape(1, -1)
        mask = dt.training_mask(a, torch.ones_like(a, dtype=torch.bool), t, b, anchor_visible=False)
        out = dt.forward(self.w, cfg, feats[None], torch.arange(t)[None],
                         self.embed[ids.reshape(1, -1)], block_pos, mask)
        return (out.view(len(anchors), b, -1)[:, 1:] @ self.lm_head.T)


def taps_of(hidden_states, taps):
    return torch.cat([hidden_states[l + 1][0] for l in taps], -1)


class GdnRollback:
    """Captures each Gated DeltaNet layer's verify input and its state before the verify, and
    recomputes the state over the accepted prefix."""

    def __init__(self, target):
        self.layers = [(i, layer.linear_attn) for i, layer in enumerate(target.model.layers)
                       if getattr(layer, "linear_attn", None) is not None]
        self.inputs = {}
        self.saved = {}
        for i, module in self.layers:
            module.register_forward_pre_hook(self._hook(i), with_kwargs=True)

    def _hook(self, i):
        def hook(module, args, kwargs):
            self.inputs[i] = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
        return hook

    def save(self, cache):
        for i, _ in self.layers:
            layer = cache.layers[i]
            self.saved[i] = (layer.conv_states[0].clone(), layer.recurrent_states[0].clone())

    def rewind(self, cache, keep):
        for i, module in self.layers:
            layer = cache.layers[i]
            conv, recurrent = self.saved[i]
            layer.conv_states[0].copy_(conv)
            layer.recurrent_states[0].copy_(recurrent)
            module(hidden_states=self.inputs[i][:, :keep], cache=cache)


def live(target, drafter, rollback, prompt, max_new, stops):
    from transformers import DynamicCache
    b = drafter.block
    p = len(prompt)
    cache = DynamicCache(config=target.config)
    out = target(torch.tensor([prompt]), position_ids=torch.arange(p)[None], cache=cache,
                 use_cache=True, output_hidden_states=True, logits_to_keep=1)
    tokens = list(prompt) + [int(out.logits[0, -1].argmax())]
    new_ctx = taps_of(out.hidden_states, drafter.taps)
    dcache = drafter.new_cache()
    attention = [i for i, t in enumerate(target.config.layer_types) if t == "full_attention"]
    start, steps = p, []
    while start < p + max_new:
        anchor = tokens[start]
        drafts = drafter.draft(dcache, new_ctx, anchor, start).argmax(-1).tolist()
        rollback.save(cache)
        out = target(torch.tensor([[anchor] + drafts]), position_ids=torch.arange(start, start + b)[None],
                     cache=cache, use_cache=True, output_hidden_states=True)
        posterior = out.logits[0].argmax(-1).tolist()
        acc = 0
        while acc < b - 1 and drafts[acc] == posterior[acc]:
            acc += 1
        tokens += drafts[:acc] + [posterior[acc]]
        steps.append(dict(anchor=start, accepted=acc, bonus=posterior[acc], drafts=drafts))
        start += acc + 1
        if acc < b - 1:
            for i in attention:
                cache.layers[i].crop(-(b - acc - 1))
            rollback.rewind(cache, acc + 1)
        new_ctx = taps_of(out.hidden_states, drafter.taps)[:acc + 1]
        if any(t in stops for t in tokens[p:]):
            break
    return tokens, steps


def teacher_forced(target, drafter, sequence, anchors, clock):
    """clock["target"] and clock["drafter"] add up the seconds of the two stages."""
    t0 = time.perf_counter()
    ids = torch.tensor([sequence])
    out = target(ids, position_ids=torch.arange(len(sequence))[None], output_hidden_states=True)
    predictions = out.logits[0].argmax(-1).tolist()
    feats = taps_of(out.hidden_states, drafter.taps)
    t1 = time.perf_counter()
    clock["target"] += t1 - t0
    accepted = []
    for c in range(0, len(anchors), ANCHORS_PER_FORWARD):
        chunk = anchors[c:c + ANCHORS_PER_FORWARD]
        drafts = drafter.teacher_forced(feats, ids[0], chunk).argmax(-1).tolist()
        for a, d in zip(chunk, drafts):
            acc = 0
            while acc < drafter.block - 1 and a + acc < len(sequence) and d[acc] == predictions[a + acc]:
                acc += 1
            accepted.append(acc)
    clock["drafter"] += time.perf_counter() - t1
    return accepted


def prompt_ids(target_dir, prompts_file, limit):
    import common  # tools/demo: the chat template as transformers renders it
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(str(Path(target_dir) / "tokenizer.json"))
    out = []
    for line in Path(prompts_file).read_text().splitlines():
        if line.strip():
            text = common.render_chat([{"role": "user", "content": json.loads(line)["prompt"]}],
                                      add_generation_prompt=True, enable_thinking=False)
            out.append(tok.encode(text, add_special_tokens=False).ids)
    return out[:limit] if limit else out, tok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default=str(ROOT / "resources/demo/target"))
    ap.add_argument("--drafter", default=str(ROOT / "resources/demo/drafter-good"))
    ap.add_argument("--prompts", default=str(ROOT / "resources/demo/prompts.jsonl"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    from transformers import AutoModelForCausalLM
    target = AutoModelForCausalLM.from_pretrained(args.target, dtype=torch.float32).eval()
    drafter = Drafter(args.drafter, target)
    rollback = GdnRollback(target)
    prompts, tok = prompt_ids(args.target, args.prompts, args.limit)
    eos = target.config.eos_token_id
    stops = sorted({*(eos if isinstance(eos, list) else [eos]),
                    *(tok.token_to_id(s) for s in ("<|im_end|>", "<|endoftext|>") if tok.token_to_id(s) is not None)})

    result = dict(threads=args.threads, block_size=drafter.block, max_new_tokens=args.max_new_tokens,
                  stop_tokens=stops, prompts=[])
    with torch.inference_mode():
        live_s = float("inf")
        for _ in range(args.repeat):
            runs, t0 = [], time.perf_counter()
            for ids in prompts:
                runs.append(live(target, drafter, rollback, ids, args.max_new_tokens, stops))
            live_s = min(live_s, time.perf_counter() - t0)
        tf_s, tf, tf_stages = float("inf"), None, None
        sequences = [(ids, tokens) for ids, (tokens, _) in zip(prompts, runs)]
        for _ in range(args.repeat):
            clock = dict(target=0.0, drafter=0.0)
            t0 = time.perf_counter()
            tf = [teacher_forced(target, drafter, tokens, list(range(len(ids), len(tokens) - 1)), clock)
                  for ids, tokens in sequences]
            elapsed = time.perf_counter() - t0
            if elapsed < tf_s:
                tf_s, tf_stages = elapsed, clock
    for ids, (tokens, steps), accepted in zip(prompts, runs, tf):
        result["prompts"].append(dict(ids=ids, tokens=tokens, accept_lengths=[s["accepted"] + 1 for s in steps],
                                      anchors=[s["anchor"] for s in steps],
                                      tf_anchors=list(range(len(ids), len(tokens) - 1)), tf_accepted=accepted))
    result["live_s"] = live_s
    result["tf_s"] = tf_s
    result["tf_target_s"], result["tf_drafter_s"] = tf_stages["target"], tf_stages["drafter"]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
