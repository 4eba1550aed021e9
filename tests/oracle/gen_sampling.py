#!/usr/bin/env python3
"""References of sampled speculative decoding from z-lab's published `dflash` package (0.1.0):
its _sampling_probs (temperature, top-k, top-p) and its _rejection_sample (accept slot i while
u_i * q_i < p_i; resample the first rejected slot from max(0, p - q) renormalised, or from p
when that is all zero; after a fully accepted block, the bonus from the target's last row).

The package draws the uniforms with torch.rand_like; here they are drawn first and handed to it
through that call, so the engine, given the same uniforms and drafts, must reproduce every
acceptance decision and every residual distribution exactly.

OUT/cases.safetensors, per case c:
  c.target_logits [g+1, V], c.draft_logits [g, V]   random logits (F32)
  c.drafts [g] (I64)                                 drafts sampled from the draft distribution
  c.uniforms [g]                                     the acceptance uniforms
  c.target_probs [g+1, V], c.draft_probs [g, V]      the package's _sampling_probs
  c.accepted [1] (I64), c.next [V]                   _rejection_sample's count, and the
                                                     distribution its last token is drawn from
OUT/cases.json: the cases' sampling settings.

Usage: gen_sampling.py OUT_DIR
"""

import json
import sys
from pathlib import Path

import torch
import dflash.model as package
from safetensors.torch import save_file

SEED = 4242
VOCAB = 96
SETTINGS = [
    dict(temperature=1.0, top_p=1.0, top_k=0),
    dict(temperature=0.6, top_p=1.0, top_k=0),
    dict(temperature=1.0, top_p=0.9, top_k=0),
    dict(temperature=0.7, top_p=0.8, top_k=20),
    dict(temperature=1.3, top_p=1.0, top_k=5),
]


def package_rejection(drafts, target_probs, draft_probs, uniforms):
    """_rejection_sample with torch.rand_like returning the given uniforms; returns its accepted
    count and the distribution its final _sample_probs draws the step's last token from."""
    drawn = {}

    def recorded_rand_like(q, *args, **kwargs):
        assert q.shape == uniforms[None].shape
        return uniforms[None].clone()

    def capture(probs):
        drawn["next"] = probs[0].clone()
        return torch.zeros(probs.shape[:-1], dtype=torch.long)

    real_rand_like, real_sample = torch.rand_like, package._sample_probs
    torch.rand_like, package._sample_probs = recorded_rand_like, capture
    try:
        accepted, _ = package._rejection_sample(drafts[None], target_probs[None], draft_probs[None])
    finally:
        torch.rand_like, package._sample_probs = real_rand_like, real_sample
    return accepted, drawn["next"]


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    gen = torch.Generator().manual_seed(SEED)
    tensors, cases, outcomes = {}, [], []
    for s, setting in enumerate(SETTINGS):
        for k in range(12):
            g = [1, 3, 7, 15][k % 4]
            # Draft logits near the target's, so blocks are accepted far enough to matter.
            target_logits = torch.randn(g + 1, VOCAB, generator=gen) * 2.5
            draft_logits = target_logits[:g] + torch.randn(g, VOCAB, generator=gen) * (0.3 + 0.4 * (k % 3))
            target_probs = package._sampling_probs(target_logits, **setting)
            draft_probs = package._sampling_probs(draft_logits, **setting)
            drafts = torch.multinomial(draft_probs, 1, generator=gen)[:, 0]
            uniforms = torch.rand(g, generator=gen)
            accepted, nxt = package_rejection(drafts, target_probs, draft_probs, uniforms)
            name = f"s{s}k{k}"
            tensors.update({
                f"{name}.target_logits": target_logits, f"{name}.draft_logits": draft_logits,
                f"{name}.drafts": drafts, f"{name}.uniforms": uniforms,
                f"{name}.target_probs": target_probs, f"{name}.draft_probs": draft_probs,
                f"{name}.accepted": torch.tensor([accepted]), f"{name}.next": nxt,
            })
            cases.append({"name": name, **setting})
            outcomes.append((g, accepted))
    save_file({k: v.contiguous() for k, v in tensors.items()}, out / "cases.safetensors")
    (out / "cases.json").write_text(json.dumps(cases, indent=1))
    full = sum(1 for g, a in outcomes if a == g)
    print(f"{len(cases)} cases: {full} fully accepted, {len(cases) - full} with a rejected slot, "
          f"accepted counts {sorted(set(a for _, a in outcomes))}")


if __name__ == "__main__":
    main()
