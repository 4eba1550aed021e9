#!/usr/bin/env python3
"""Reference draft logits for the engine's DFlash drafter (docs/dflash.md 1.3, 2.2-2.3, 4.3-4.4).

An independent plain-torch drafter written from docs/dflash.md (z-lab model.py semantics): context
features -> hidden_norm(fc(.)) feed every layer as extra keys/values through the layer's own
Wk/k_norm/Wv; the block [anchor, MASK x (B-1)] is embedded with the target's embedding; keys
and values are cat([context, block]); full layers are unmasked (bidirectional), sliding
layers causal with a left window (query at position p sees keys at (p-W, p], as vLLM and
SGLang serve them); RoPE (transformers' Qwen3RotaryEmbedding, so YaRN is the reference one)
runs over the positions of the context and the block; Qwen3 RMSNorm; logits through the
target's lm_head with slot 0 dropped.

For each case, OUT/<case>/ holds a z-lab style drafter (config.json with dflash_config,
model.safetensors) and reference.safetensors:
  embed_tokens [V, H], lm_head [V, H]  the "target's" embedding and LM head
  features [T, F*H], tokens [T] (I64), anchors [N] (I64)
  inference [N, B-1, V]               one block per anchor, context = features[:anchor]
  inference.bf16 [N, B-1, V]          z-lab's own DFlashDraftModel (the `dflash` package) run in
                                      bf16 on CPU: the saved drafter read by its from_pretrained,
                                      embedding, head and features in bf16 (its rounding points:
                                      transformers' norms and RoPE, torch's SDPA), on every case
  attention.<l> [heads, B, a+B]       layer l's attention probabilities in the live call at
                                      anchor a = attention_anchor
  training.reference [N, B-1, V]      all anchors in one forward, training mask
                                      (docs/dflash.md 4.4)
  training.anchor-visible [N, B-1, V] the same with context k <= anchor

The training masks are built here from the docs/dflash.md 4.4 formula, not from the engine's code.

OUT/live/ holds a tiny random Qwen3 target saved by transformers (target/) and a drafter that
taps it (drafter/), for the engine's own consistency tests (live against teacher-forced, the
evaluation). The live loop's reference is z-lab's dflash_generate (gen_dflash_package.py).

Both cases are ones the package's model expresses (sliding layers causal with a left window,
YaRN, attention bias; its from_pretrained strips the "model." prefix), so `inference.bf16` is the
package's, and the fixture checks that the package, reading the saved drafter, gives `inference`
to 1e-5 in fp32: the transcription's live forward is the package's. Still this file's own reading:
the training layout (all anchors in one forward under the training masks, docs/dflash.md 4.4),
which the package has no counterpart of, and the probes at the trace anchor (the attention
probabilities, which the package's SDPA does not return; the layer, fc and hidden_norm outputs),
taken from the transcription that the fp32 check ties to the package.

Usage: gen_drafter.py OUT_DIR
"""

import json
import sys
from pathlib import Path

import torch
from dflash.model import DFlashDraftModel
from safetensors.torch import save_file
from transformers import Qwen3Config, Qwen3ForCausalLM
from transformers.models.qwen3.modeling_qwen3 import Qwen3RotaryEmbedding

import gen_dflash_package as package

SEED = 2026
VOCAB = 300
MASK_ID = 297  # a row no sequence token uses, like Qwen3's padded 151669
LIVE_VOCAB = 16  # small, so a random drafter agrees with a random target now and then

CASES = {
    # GQA 2:1, YaRN (positions run past original_max_position_embeddings), two sliding layers
    # with a window shorter than the context, unprefixed names.
    "yarn_sliding": dict(
        hidden=64, layers=3, heads=4, kv_heads=2, head_dim=16, inter=96, block=4,
        layer_types=["sliding_attention", "full_attention", "sliding_attention"], window=6,
        rope_theta=10000.0,
        rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16},
        bias=False, prefix="", target_layers=8, tap_ids=[1, 3, 5], seq=24,
        anchors=[0, 3, 9, 15, 23]),
    # GQA 3:1, attention bias, plain RoPE with a large theta, all full layers, names under
    # "model." as vLLM-style exports store them.
    "bias_prefixed": dict(
        hidden=48, layers=2, heads=6, kv_heads=2, head_dim=8, inter=80, block=5,
        layer_types=["full_attention", "full_attention"], window=None,
        rope_theta=1e6, rope_scaling=None,
        bias=True, prefix="model.", target_layers=6, tap_ids=[2, 4], seq=20,
        anchors=[1, 5, 12, 19]),
}
EPS = 1e-6


def rms_norm(x, w):
    xf = x.float()
    return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], -1)


class RoPE:
    def __init__(self, cfg, max_pos):
        hf = Qwen3Config(hidden_size=cfg["hidden"], num_attention_heads=cfg["heads"],
                         num_key_value_heads=cfg["kv_heads"], head_dim=cfg["head_dim"],
                         max_position_embeddings=max_pos, rope_theta=cfg["rope_theta"],
                         rope_scaling=cfg["rope_scaling"])
        self.emb = Qwen3RotaryEmbedding(hf)

    def __call__(self, positions, dtype=torch.float32):
        dummy = torch.zeros(1, dtype=dtype)  # cos/sin come back in the activation dtype
        cos, sin = self.emb(dummy, positions[None])
        return cos[0], sin[0]  # [n, d]


def random_drafter(cfg, gen):
    h, d, i = cfg["hidden"], cfg["head_dim"], cfg["inter"]
    q, kv = cfg["heads"] * d, cfg["kv_heads"] * d
    fin = len(cfg["tap_ids"]) * h

    def mat(rows, cols):
        return torch.randn(rows, cols, generator=gen) / cols ** 0.5

    def norm(n):  # random, so a norm applied in the wrong place shows
        return 1.0 + 0.2 * torch.randn(n, generator=gen)

    w = {"fc.weight": mat(h, fin), "hidden_norm.weight": norm(h), "norm.weight": norm(h)}
    for l in range(cfg["layers"]):
        p = f"layers.{l}."
        w[p + "input_layernorm.weight"] = norm(h)
        w[p + "self_attn.q_proj.weight"] = mat(q, h)
        w[p + "self_attn.k_proj.weight"] = mat(kv, h)
        w[p + "self_attn.v_proj.weight"] = mat(kv, h)
        if cfg["bias"]:
            for name, n in (("q_proj", q), ("k_proj", kv), ("v_proj", kv)):
                w[p + f"self_attn.{name}.bias"] = 0.3 * torch.randn(n, generator=gen)
        w[p + "self_attn.o_proj.weight"] = mat(h, q)
        if cfg["bias"]:  # Qwen3's attention_bias covers o_proj too
            w[p + "self_attn.o_proj.bias"] = 0.3 * torch.randn(h, generator=gen)
        w[p + "self_attn.q_norm.weight"] = norm(d)
        w[p + "self_attn.k_norm.weight"] = norm(d)
        w[p + "post_attention_layernorm.weight"] = norm(h)
        w[p + "mlp.gate_proj.weight"] = mat(i, h)
        w[p + "mlp.up_proj.weight"] = mat(i, h)
        w[p + "mlp.down_proj.weight"] = mat(h, i)
    return w


def drafter_forward(w, cfg, rope, ctx_feats, ctx_pos, block_emb, block_pos, masks, trace=None):
    """Block rows attend over cat([context, block]); masks[layer_type] is a [Q, S+Q] bool or
    None (no mask). Returns final-normed block states [Q, H]; `trace` (a dict) collects each
    layer's attention probabilities [heads, Q, S+Q] and block outputs [Q, H], and the context's
    fc and hidden_norm outputs [S, H]."""
    nh, nkv, d = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    fc = ctx_feats @ w["fc.weight"].T
    ctx = rms_norm(fc, w["hidden_norm.weight"])
    if trace is not None:
        trace.update(fc=fc, hidden_norm=ctx, attention=[], layers=[])
    cos_c, sin_c = rope(ctx_pos, block_emb.dtype)
    cos_b, sin_b = rope(block_pos, block_emb.dtype)
    h = block_emb
    for l in range(cfg["layers"]):
        p = f"layers.{l}.self_attn."
        x = rms_norm(h, w[f"layers.{l}.input_layernorm.weight"])

        def proj(inp, name):  # nn.Linear's fused bias, as transformers computes it
            return torch.nn.functional.linear(inp, w[p + name + ".weight"],
                                              w[p + name + ".bias"] if cfg["bias"] else None)

        def heads(t, n):  # [rows, n*d] -> [n, rows, d]
            return t.view(t.shape[0], n, d).transpose(0, 1)

        q = rms_norm(heads(proj(x, "q_proj"), nh), w[p + "q_norm.weight"])
        q = q * cos_b + rotate_half(q) * sin_b
        kvin = torch.cat([ctx, x])
        k = rms_norm(heads(proj(kvin, "k_proj"), nkv), w[p + "k_norm.weight"])
        cos_k, sin_k = torch.cat([cos_c, cos_b]), torch.cat([sin_c, sin_b])
        k = k * cos_k + rotate_half(k) * sin_k
        v = heads(proj(kvin, "v_proj"), nkv)
        k = k.repeat_interleave(nh // nkv, 0)
        v = v.repeat_interleave(nh // nkv, 0)
        scores = q @ k.transpose(-1, -2) / d ** 0.5
        mask = masks[cfg["layer_types"][l]]
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        probs = torch.softmax(scores.float(), -1).to(q.dtype)
        if trace is not None:
            trace["attention"].append(probs.float())
        attn = probs @ v
        h = h + proj(attn.transpose(0, 1).reshape(h.shape[0], nh * d), "o_proj")
        m = f"layers.{l}.mlp."
        x = rms_norm(h, w[f"layers.{l}.post_attention_layernorm.weight"])
        gate = torch.nn.functional.silu(x @ w[m + "gate_proj.weight"].T)
        h = h + (gate * (x @ w[m + "up_proj.weight"].T)) @ w[m + "down_proj.weight"].T
        if trace is not None:
            trace["layers"].append(h)
    return rms_norm(h, w["norm.weight"])


def sliding_mask(q_pos, k_pos, window):
    """Causal with a left window in position terms: key at (q - W, q]."""
    return (k_pos[None, :] <= q_pos[:, None]) & (k_pos[None, :] > q_pos[:, None] - window)


def block_ids(anchor_token, b, mask_id=MASK_ID):
    return torch.tensor([anchor_token] + [mask_id] * (b - 1))


def live_block(w, cfg, rope, embed, feats, tokens, a, trace=None):
    """The drafter call of the live loop for the block anchored at `a`."""
    b = cfg["block"]
    ctx_pos = torch.arange(a)
    block_pos = torch.arange(a, a + b)
    masks = {"full_attention": None}
    if cfg["window"]:
        masks["sliding_attention"] = sliding_mask(block_pos, torch.cat([ctx_pos, block_pos]),
                                                  cfg["window"])
    return drafter_forward(w, cfg, rope, feats[:a], ctx_pos,
                           embed[block_ids(tokens[a].item(), b)], block_pos, masks, trace)


def inference_layout(w, cfg, rope, embed, lm_head, feats, tokens):
    """One forward per anchor, exactly as the live loop calls the drafter."""
    return torch.stack([live_block(w, cfg, rope, embed, feats, tokens, a)[1:] @ lm_head.T
                        for a in cfg["anchors"]])


def training_mask(anchors, t, b, anchor_visible, window=None):
    """docs/dflash.md 4.4: ctx_ok = k < T and k < a (k <= a when the anchor is visible);
    block_ok = k >= T and (k - T) // B == q // B. Sliding layers add the causal window."""
    n = len(anchors)
    rows, cols = n * b, t + n * b
    mask = torch.zeros(rows, cols, dtype=torch.bool)
    for q in range(rows):
        jq, slot = divmod(q, b)
        a = anchors[jq]
        q_pos = a + slot
        for k in range(cols):
            if k < t:
                ok = k <= a if anchor_visible else k < a
                k_pos = k
            else:
                ok = (k - t) // b == jq
                k_slot = (k - t) % b
                k_pos = a + k_slot
            if window is not None:
                ok = ok and k_pos <= q_pos and k_pos > q_pos - window
            mask[q, k] = ok
    return mask


def training_layout(w, cfg, rope, embed, lm_head, feats, tokens, anchor_visible):
    """All anchors in one forward: queries = N blocks, keys = [T context rows | N blocks]."""
    b, t, anchors = cfg["block"], feats.shape[0], cfg["anchors"]
    ids = torch.cat([block_ids(tokens[a].item(), b) for a in anchors])
    block_pos = torch.cat([torch.arange(a, a + b) for a in anchors])
    masks = {"full_attention": training_mask(anchors, t, b, anchor_visible)}
    if cfg["window"]:
        masks["sliding_attention"] = training_mask(anchors, t, b, anchor_visible, cfg["window"])
    states = drafter_forward(w, cfg, rope, feats, torch.arange(t), embed[ids], block_pos, masks)
    return (states.view(len(anchors), b, -1)[:, 1:] @ lm_head.T).contiguous()


LIVE_DRAFTER = dict(
    hidden=32, layers=2, heads=4, kv_heads=2, head_dim=8, inter=64, block=4,
    layer_types=["sliding_attention", "full_attention"], window=8, rope_theta=10000.0,
    rope_scaling={"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32},
    bias=False, prefix="", target_layers=4, tap_ids=[1, 2], vocab=LIVE_VOCAB,
    mask_id=LIVE_VOCAB - 1)


def config_json(cfg):
    c = {
        "architectures": ["DFlashDraftModel"],
        "auto_map": {"AutoModel": "dflash.DFlashDraftModel"},
        "model_type": "qwen3",
        "block_size": cfg["block"],
        "dflash_config": {"mask_token_id": cfg.get("mask_id", MASK_ID),
                          "target_layer_ids": cfg["tap_ids"]},
        "num_target_layers": cfg["target_layers"],
        "hidden_size": cfg["hidden"],
        "num_hidden_layers": cfg["layers"],
        "num_attention_heads": cfg["heads"],
        "num_key_value_heads": cfg["kv_heads"],
        "head_dim": cfg["head_dim"],
        "intermediate_size": cfg["inter"],
        "hidden_act": "silu",
        "rms_norm_eps": EPS,
        "attention_bias": cfg["bias"],
        "max_position_embeddings": 64,
        "rope_theta": cfg["rope_theta"],
        "rope_scaling": cfg["rope_scaling"],
        "layer_types": cfg["layer_types"],
        "vocab_size": cfg.get("vocab", VOCAB),
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
    }
    if cfg["window"]:
        c["sliding_window"] = cfg["window"]
        c["use_sliding_window"] = True
    return c


def generate(name, cfg, out_dir):
    gen = torch.Generator().manual_seed(SEED + len(name))
    w = random_drafter(cfg, gen)
    h = cfg["hidden"]
    embed = torch.randn(VOCAB, h, generator=gen)
    lm_head = torch.randn(VOCAB, h, generator=gen) / h ** 0.5
    t = cfg["seq"]
    feats = torch.randn(t, len(cfg["tap_ids"]) * h, generator=gen)
    tokens = torch.randint(0, MASK_ID, (t,), generator=gen)
    rope = RoPE(cfg, 64)

    case_dir = out_dir / name
    save_drafter(cfg, w, case_dir)
    with torch.no_grad():
        inference = inference_layout(w, cfg, rope, embed, lm_head, feats, tokens)
        inference_bf16 = package_inference_bf16(name, case_dir, embed, lm_head, feats, tokens,
                                                cfg["anchors"], inference)
        reference = training_layout(w, cfg, rope, embed, lm_head, feats, tokens, False)
        visible = training_layout(w, cfg, rope, embed, lm_head, feats, tokens, True)
        trace_anchor = cfg["anchors"][2]
        trace = {}
        live_block(w, cfg, rope, embed, feats, tokens, trace_anchor, trace)
    # The oracle's own consistency: the training layout is one batched copy of the live calls.
    gap = (inference - reference).abs().max().item()
    assert gap < 1e-5, f"{name}: training vs inference layout differ by {gap}"
    assert (visible - reference).abs().max().item() > 1e-3, f"{name}: anchor visibility has no effect"

    save_file({"embed_tokens": embed, "lm_head": lm_head, "features": feats, "tokens": tokens,
               "anchors": torch.tensor(cfg["anchors"]), "inference": inference,
               "inference.bf16": inference_bf16, "attention_anchor": torch.tensor([trace_anchor]),
               **{f"attention.{l}": p.contiguous() for l, p in enumerate(trace["attention"])},
               **{f"layer_output.{l}": h.contiguous() for l, h in enumerate(trace["layers"])},
               "fc_output": trace["fc"], "hidden_norm_output": trace["hidden_norm"],
               "training.reference": reference, "training.anchor-visible": visible},
              str(case_dir / "reference.safetensors"))
    print(f"{name}: layouts agree to {gap:.2e}; package bf16 vs fp32 "
          f"{(inference_bf16 - inference).abs().max().item():.2e}")


def package_logits(model, embed, lm_head, feats, tokens, anchors, dtype):
    """The package's drafter and compute_logits per anchor (no cache), everything in `dtype`."""
    model = model.to(dtype)
    head = torch.nn.Linear(lm_head.shape[1], lm_head.shape[0], bias=False, dtype=dtype)
    head.weight.copy_(lm_head)
    return torch.stack([package.package_forward(model, head, embed.to(dtype), feats.to(dtype), tokens, a)[1]
                        for a in anchors]).float()


def package_inference_bf16(name, case_dir, embed, lm_head, feats, tokens, anchors, inference):
    """The bf16 reference from z-lab's DFlashDraftModel reading the saved drafter, not from this
    file's transcription (whose bf16 rounding points would be our own reading). First the same
    model in fp32 must give the transcription's `inference`: the package reads config.json and
    the weights (names, prefix, YaRN, window, bias) as this file means them."""
    model, info = DFlashDraftModel.from_pretrained(case_dir, output_loading_info=True)
    unread = {k: v for k, v in info.items() if v}
    assert not unread, f"{name}: the package loads the drafter with {unread}"
    gap = (package_logits(model.eval(), embed, lm_head, feats, tokens, anchors, torch.float32)
           - inference).abs().max().item()
    assert gap < 1e-5, f"{name}: the package's fp32 drafts differ from the transcription's by {gap}"
    return package_logits(model, embed, lm_head, feats, tokens, anchors, torch.bfloat16)


def save_drafter(cfg, w, case_dir):
    case_dir.mkdir(parents=True, exist_ok=True)
    (case_dir / "config.json").write_text(json.dumps(config_json(cfg), indent=2))
    save_file({cfg["prefix"] + k: v.contiguous() for k, v in w.items()},
              str(case_dir / "model.safetensors"), metadata={"format": "pt"})


LIVE_PROMPTS = [[3, 7, 1, 12, 5], [9, 9, 2, 4, 0, 11, 6, 8], [14, 2, 5], [1, 13, 10, 3, 7, 7]]
LIVE_MAX_NEW = 40


def reference_loop(target, w, cfg, prompt):
    """docs/dflash.md 3, greedy, every block in full (StepCounting::FullBlocks): prefill, then per
    step draft -> verify -> accept + bonus, the target recomputed over the whole sequence. The
    reference of the target families the dflash package cannot run with its own caches (MoE,
    Llama, gpt-oss: gen_moe_models.py, gen_llama_gptoss_models.py); Qwen3 dense and hybrid
    targets are checked against the package itself (gen_dflash_package.py)."""
    b, taps, mask_id = cfg["block"], cfg["tap_ids"], cfg["mask_id"]
    embed, lm_head = target.model.embed_tokens.weight, target.lm_head.weight
    rope = RoPE(cfg, 64)  # the config.json value

    def run_target(ids):
        out = target(input_ids=torch.tensor([ids]), output_hidden_states=True, use_cache=False)
        return out.logits[0], torch.cat([out.hidden_states[i + 1][0] for i in taps], -1)

    logits, feats = run_target(prompt)
    tokens = list(prompt) + [int(logits[-1].argmax())]
    start, steps = len(prompt), []
    while start < len(prompt) + LIVE_MAX_NEW:
        ctx_pos, block_pos = torch.arange(start), torch.arange(start, start + b)
        masks = {"full_attention": None,
                 "sliding_attention": sliding_mask(block_pos, torch.cat([ctx_pos, block_pos]),
                                                   cfg["window"])}
        states = drafter_forward(w, cfg, rope, feats[:start], ctx_pos,
                                 embed[block_ids(tokens[start], b, mask_id)], block_pos, masks)
        drafts = (states[1:] @ lm_head.T).argmax(-1).tolist()
        logits, block_feats = run_target(tokens[:start] + [tokens[start]] + drafts)
        post = logits[start:start + b].argmax(-1).tolist()
        acc = 0
        while acc < b - 1 and drafts[acc] == post[acc]:
            acc += 1
        steps.append([start, acc, post[acc]] + drafts)
        tokens = tokens[:start + 1] + drafts[:acc] + [post[acc]]
        feats = block_feats[:start + acc + 1]  # causal: untouched by the rejected drafts
        start += acc + 1
    return tokens, steps


def generate_live(out_dir):
    torch.manual_seed(SEED)
    target = Qwen3ForCausalLM(Qwen3Config(
        vocab_size=LIVE_VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=128,
        rope_theta=10000.0, tie_word_embeddings=False))
    with torch.no_grad():  # unit-scale weights: clear argmax margins, unlike 0.02 init
        for name, p in target.named_parameters():
            if p.dim() == 2:
                p.copy_(torch.randn_like(p) / (1.0 if "embed" in name else p.shape[1] ** 0.5))
            else:
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
    target.save_pretrained(out_dir / "live" / "target", safe_serialization=True)
    gen = torch.Generator().manual_seed(SEED + 1)
    w = random_drafter(LIVE_DRAFTER, gen)
    save_drafter(LIVE_DRAFTER, w, out_dir / "live" / "drafter")
    print("live: target and drafter saved")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    out_dir = Path(sys.argv[1])
    torch.set_num_threads(1)  # tiny models: more threads than free cores only spin
    torch.manual_seed(SEED)
    for name, cfg in CASES.items():
        generate(name, cfg, out_dir)
    generate_live(out_dir)


if __name__ == "__main__":
    main()
