"""A plain-torch DFlash drafter for training (docs/dflash.md 1.3, 2.2, 4.3-4.5).

Weights are a dict of tensors named as in the z-lab checkpoints (fc, hidden_norm, layers.i.*,
norm); the token embedding and LM head are the target's and stay frozen. forward() takes the
context features of T positions and N blocks at once (the training layout): keys/values are
[context (T rows) | blocks (N*B rows)], queries are the blocks, and the boolean mask says
which keys each block row sees (training_mask: context strictly before the anchor, or up to
and including it for the anchor-visible bug; own block bidirectional).
"""

import json
import math

import torch
import torch.nn.functional as F

EPS = 1e-6


def rms_norm(x, w):
    xf = x.float()
    return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], -1)


def rope_tables(positions, head_dim, theta):
    """Rotate-half RoPE over the full head dim: cos/sin [..., n, d] for integer positions."""
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    ang = positions.float()[..., None] * inv
    emb = torch.cat([ang, ang], -1)
    return emb.cos(), emb.sin()


def init_weights(cfg, gen):
    h, d, i = cfg["hidden"], cfg["head_dim"], cfg["inter"]
    q, kv = cfg["heads"] * d, cfg["kv_heads"] * d
    fin = len(cfg["tap_ids"]) * cfg["target_hidden"]

    def mat(rows, cols):
        return torch.randn(rows, cols, generator=gen) * 0.02

    w = {"fc.weight": torch.randn(h, fin, generator=gen) / math.sqrt(fin),
         "hidden_norm.weight": torch.ones(h), "norm.weight": torch.ones(h)}
    for l in range(cfg["layers"]):
        p = f"layers.{l}."
        w[p + "input_layernorm.weight"] = torch.ones(h)
        w[p + "self_attn.q_proj.weight"] = mat(q, h)
        w[p + "self_attn.k_proj.weight"] = mat(kv, h)
        w[p + "self_attn.v_proj.weight"] = mat(kv, h)
        w[p + "self_attn.o_proj.weight"] = mat(h, q) / math.sqrt(2 * cfg["layers"])
        w[p + "self_attn.q_norm.weight"] = torch.ones(d)
        w[p + "self_attn.k_norm.weight"] = torch.ones(d)
        w[p + "post_attention_layernorm.weight"] = torch.ones(h)
        w[p + "mlp.gate_proj.weight"] = mat(i, h)
        w[p + "mlp.up_proj.weight"] = mat(i, h)
        w[p + "mlp.down_proj.weight"] = mat(h, i) / math.sqrt(2 * cfg["layers"])
    return w


def forward(w, cfg, ctx_feats, ctx_pos, block_emb, block_pos, mask):
    """Batched training layout.
    ctx_feats [Bs, T, F*Ht], ctx_pos [Bs, T], block_emb [Bs, Q, H], block_pos [Bs, Q],
    mask [Bs, Q, T+Q] bool (True = may attend). Returns final-normed block states [Bs, Q, H]."""
    nh, nkv, d = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    bs, t, q_len = ctx_feats.shape[0], ctx_feats.shape[1], block_emb.shape[1]
    ctx = rms_norm(ctx_feats @ w["fc.weight"].T, w["hidden_norm.weight"])
    cos_c, sin_c = rope_tables(ctx_pos, d, cfg["rope_theta"])
    cos_b, sin_b = rope_tables(block_pos, d, cfg["rope_theta"])
    cos_k, sin_k = torch.cat([cos_c, cos_b], 1)[:, None], torch.cat([sin_c, sin_b], 1)[:, None]
    cos_b, sin_b = cos_b[:, None], sin_b[:, None]
    h = block_emb
    for l in range(cfg["layers"]):
        p = f"layers.{l}.self_attn."
        x = rms_norm(h, w[f"layers.{l}.input_layernorm.weight"])
        q = rms_norm((x @ w[p + "q_proj.weight"].T).view(bs, q_len, nh, d).transpose(1, 2),
                     w[p + "q_norm.weight"])
        q = q * cos_b + rotate_half(q) * sin_b
        kvin = torch.cat([ctx, x], 1)
        k = rms_norm((kvin @ w[p + "k_proj.weight"].T).view(bs, t + q_len, nkv, d).transpose(1, 2),
                     w[p + "k_norm.weight"])
        k = k * cos_k + rotate_half(k) * sin_k
        v = (kvin @ w[p + "v_proj.weight"].T).view(bs, t + q_len, nkv, d).transpose(1, 2)
        k = k.repeat_interleave(nh // nkv, 1)
        v = v.repeat_interleave(nh // nkv, 1)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None])
        h = h + a.transpose(1, 2).reshape(bs, q_len, nh * d) @ w[p + "o_proj.weight"].T
        m = f"layers.{l}.mlp."
        x = rms_norm(h, w[f"layers.{l}.post_attention_layernorm.weight"])
        h = h + (F.silu(x @ w[m + "gate_proj.weight"].T) * (x @ w[m + "up_proj.weight"].T)) \
            @ w[m + "down_proj.weight"].T
    return rms_norm(h, w["norm.weight"])


def training_mask(anchors, keep, t_len, block, anchor_visible):
    """docs/dflash.md 4.4 for one batch: anchors [Bs, N] (long), keep [Bs, N] bool, t_len = padded
    context length. ctx_ok = k < a (k <= a with the anchor-visible bug); block_ok = own block.
    Blocks that are not kept see only their own block (their loss weight is zero)."""
    bs, n = anchors.shape
    q_len = n * block
    qa = anchors.repeat_interleave(block, 1)                        # [Bs, Q] anchor of each row
    kpos = torch.arange(t_len)
    ctx_ok = (kpos[None, None, :] <= qa[..., None]) if anchor_visible else (kpos[None, None, :] < qa[..., None])
    ctx_ok = ctx_ok & keep.repeat_interleave(block, 1)[..., None]
    qb = torch.arange(q_len) // block
    block_ok = (qb[:, None] == qb[None, :]).expand(bs, q_len, q_len)
    return torch.cat([ctx_ok, block_ok], 2)


def decay_weights(block, gamma):
    """w_k = exp(-(k-1)/gamma) for slots k = 1..B-1 (slot 0, the anchor, gets 0)."""
    k = torch.arange(block, dtype=torch.float32)
    w = torch.exp(-(k - 1) / gamma)
    w[0] = 0.0
    return w


def config_json(cfg):
    return {
        "architectures": ["DFlashDraftModel"],
        "auto_map": {"AutoModel": "dflash.DFlashDraftModel"},
        "model_type": "qwen3",
        "block_size": cfg["block"],
        "dflash_config": {"mask_token_id": cfg["mask_id"], "target_layer_ids": cfg["tap_ids"],
                          "block_size": cfg["block"]},
        "num_target_layers": cfg["target_layers"],
        "hidden_size": cfg["hidden"],
        "num_hidden_layers": cfg["layers"],
        "num_attention_heads": cfg["heads"],
        "num_key_value_heads": cfg["kv_heads"],
        "head_dim": cfg["head_dim"],
        "intermediate_size": cfg["inter"],
        "hidden_act": "silu",
        "rms_norm_eps": EPS,
        "attention_bias": False,
        "attention_dropout": 0.0,
        "max_position_embeddings": 4096,
        "rope_theta": cfg["rope_theta"],
        "rope_scaling": None,
        "layer_types": ["full_attention"] * cfg["layers"],
        "use_sliding_window": False,
        "vocab_size": cfg["vocab"],
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
    }


def save(cfg, w, out_dir, training=None):
    """config.json and model.safetensors as a published drafter has them; how the demo trained it
    goes to training.json beside them (config.json carries only what a model config holds)."""
    from safetensors.torch import save_file
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.json").write_text(json.dumps(config_json(cfg), indent=2) + "\n")
    if training:
        (out_dir / "training.json").write_text(json.dumps(training, indent=2) + "\n")
    save_file({k: v.detach().to(torch.bfloat16).contiguous() for k, v in w.items()},
              str(out_dir / "model.safetensors"), metadata={"format": "pt"})
