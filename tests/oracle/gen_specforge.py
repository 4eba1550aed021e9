#!/usr/bin/env python3
"""The training layout from SpecForge (`specforge` 0.2.0, scripts/requirements-nodeps.txt): its
OnlineDFlashModel.forward is run as a training step runs it (sdpa-backend dense masks, its own
anchor sampler under a fixed seed), and what it builds on the way is captured, not rebuilt:

  _sample_anchor_positions  -> anchors, block_keep_mask
  create_dflash_sdpa_mask   -> the full mask and, for sliding layers, the sliding one
  _create_position_ids      -> (with the context positions) the position ids the drafter gets
  _create_noise_embed       -> the block embeddings ([anchor token, MASK x (B-1)] per anchor)
  _dflash_objective_chunk_terms -> the draft states, the labels and the loss weights

The per-block acceptance is SpecForge's compute_accept_len over argmax(lm_head(states)), the
labels and weight_mask > 0: the accepted run that OnlineDominoModel logs as base_accept_len
(mean of accept_len + 1 over the valid blocks) for the same DFlash logits. In 0.2.0 the plain
DFlash loop logs only the accuracy; this is the acceptance its training forward implies.

Target: the tiny dense Qwen3 of gen_dflash_package.py's live loop (live_target, vocab 16, so a
random drafter agrees with it now and then). Sequence: a prompt and the target's greedy
continuation, loss_mask 1 on the continuation (what SpecForge trains on, and what the engine's
teacher-forced pass measures against). Drafter: SpecForge's own DFlashDraftModel, random
unit-scale weights, saved with save_pretrained (z-lab layout, which the engine loads).

OUT/<case>/: target/, drafter/, reference.safetensors (I64 unless said):
  input_ids [T], loss_mask [T], anchors [N], block_keep [N]
  mask.full_attention [N*B, T+N*B]     1 = allowed (create_dflash_sdpa_mask, sliding_window None)
  mask.sliding_attention [N*B, T+N*B]  the same with the drafter's sliding window (if any layer
                                       is sliding)
  position_ids [T+N*B]                 context 0..T-1 then the draft rows
  noise_ids [N*B]                      the token each block row was embedded from
  logits [N, B, V] (F32)               lm_head(draft states), every slot (slot 0 untrained)
  accept_len [N]                       compute_accept_len per block

And from speculators 0.9.0 (vLLM's DFlash training; only module files that need nothing but
torch, loaded by path, see below), on the anchors its select_anchors picks (seeded):
  speculators.anchors [M], speculators.position_ids [T+M*B] (get_base_indices_for_anchored_blocks)
  speculators.mask.full_attention, .sliding_attention, .sliding_attention_non_causal [M*B, T+M*B]
                                       create_anchor_block_mask_mod as a dense mask, with the
                                       window speculators.window [1]
  speculators.accepted_length [M]      compute_accepted_length_counts per block (run + bonus)
                                       for SpecForge's drafts on those anchors against the
                                       verifier's greedy tokens (its training targets)

Cases: "full" (every layer full, non-causal), "sliding" (causal sliding + full, window >= B:
SpecForge and the serving reference agree), "sliding_short_window" (window < B: SpecForge's
sliding mask does not apply the window inside the block, dflash 0.1.0 and the engine do).

Usage: gen_specforge.py OUT_DIR
"""

import importlib.util
import sys
from pathlib import Path

import torch
from torch.nn.attention.flex_attention import create_mask
from safetensors.torch import save_file
from transformers import Qwen3Config

import specforge.algorithms.common.dflash_family_model as sf_model
from specforge.algorithms.common.dflash_family_model import OnlineDFlashModel, compute_accept_len
from specforge.modeling.draft.dflash import DFlashDraftModel, extract_context_feature

from gen_dflash_package import LIVE_VOCAB, live_target, randomize


def load_module_file(package, relative_path):
    """A module file of an installed package, run without importing the package itself."""
    root = Path(importlib.util.find_spec(package).origin).parent
    spec = importlib.util.spec_from_file_location(f"{package}_{Path(relative_path).stem}", root / relative_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# speculators' __init__ imports its whole training stack (openai, loguru, pydantic-settings,
# hs-connectors, ...), none of which is installed here. These three files import only torch,
# so they are loaded by path: the anchored-block mask, anchor selection and block positions,
# and the accepted-length metric. Its DFlash model and checkpoint converter import the package
# (and loguru), so they are not used; its losses are not part of the layout under test.
speculators_dflash_attention = load_module_file("speculators", "models/dflash/attention.py")
speculators_dflash_utils = load_module_file("speculators", "models/dflash/utils.py")
speculators_metrics = load_module_file("speculators", "models/metrics.py")

SEED = 2028
PROMPT = [3, 7, 1, 12, 5, 9]
CONTINUATION = 42
BLOCK = 8
NUM_ANCHORS = 30  # of the 41 candidates, so the sampler's choice matters
SPECULATORS_ANCHORS = 20  # of the 34 it allows (it leaves out the last block's positions)
WINDOW_FOR_FULL_CASE = 11  # speculators' sliding masks are built for the full-layer drafter too

CASES = {
    "full": dict(layer_types=["full_attention", "full_attention"], window=None),
    "sliding": dict(layer_types=["sliding_attention", "full_attention"], window=11),
    "sliding_short_window": dict(layer_types=["sliding_attention", "sliding_attention"], window=5,
                                 speculators=False),
}


def drafter_config(case, target_config):
    return Qwen3Config(
        vocab_size=LIVE_VOCAB, hidden_size=target_config.hidden_size, intermediate_size=64,
        num_hidden_layers=len(case["layer_types"]), num_attention_heads=4, num_key_value_heads=2,
        head_dim=8, hidden_act="silu", rms_norm_eps=1e-6, attention_bias=False, max_position_embeddings=128,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, layer_types=case["layer_types"],
        use_sliding_window=case["window"] is not None, sliding_window=case["window"],
        tie_word_embeddings=False, block_size=BLOCK, num_target_layers=target_config.num_hidden_layers,
        dflash_config={"mask_token_id": LIVE_VOCAB - 1, "target_layer_ids": [1, 2]},
        architectures=["DFlashDraftModel"], attn_implementation="eager")


def greedy_sequence(target):
    ids = list(PROMPT)
    with torch.no_grad():
        for _ in range(CONTINUATION):
            ids.append(int(target(torch.tensor([ids])).logits[0, -1].argmax()))
    return torch.tensor([ids])


class Capture:
    """Wraps callables on SpecForge's objects, for one `with` block, to keep what they are
    called with and return."""

    def __init__(self):
        self.seen = {}
        self._restore = []

    def wrap(self, owner, name, keep):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            result = original(*args, **kwargs)
            keep(self.seen, args, kwargs, result)
            return result

        self._restore.append((owner, name, owner.__dict__.get(name)))
        setattr(owner, name, wrapper)

    def __enter__(self):
        return self

    def __exit__(self, *_):
        for owner, name, before in reversed(self._restore):
            if before is None:
                delattr(owner, name)  # an instance attribute hiding the class's method
            else:
                setattr(owner, name, before)


def run_training_forward(online, input_ids, hidden_states, loss_mask, seed, anchors=None):
    """OnlineDFlashModel.forward with its intermediate products captured. With `anchors`, its
    anchor sampler is bypassed and those anchors are used (all kept)."""
    with Capture() as capture:
        def keep_anchors(seen, args, kwargs, result):
            seen["anchors"], seen["keep"] = result

        def keep_mask(seen, args, kwargs, result):
            seen["mask." + ("sliding_attention" if kwargs.get("sliding_window") else "full_attention")] = result

        def keep_draft_inputs(seen, args, kwargs, result):
            seen["position_ids"] = kwargs["position_ids"]
            seen["noise_embedding"] = kwargs["noise_embedding"]

        def keep_objective(seen, args, kwargs, result):
            hidden, target_ids, weight_mask = args
            seen.setdefault("objective", []).append((hidden, target_ids, weight_mask))

        if anchors is not None:
            online._sample_anchor_positions = lambda *_: (anchors[None], torch.ones_like(anchors[None], dtype=torch.bool))
        capture.wrap(online, "_sample_anchor_positions", keep_anchors)
        capture.wrap(sf_model, "create_dflash_sdpa_mask", keep_mask)
        capture.wrap(online.draft_model, "forward", keep_draft_inputs)
        capture.wrap(online, "_dflash_objective_chunk_terms", keep_objective)
        torch.manual_seed(seed)  # the anchor sampler draws from torch's global generator
        with torch.no_grad():
            online(input_ids=input_ids, hidden_states=hidden_states, loss_mask=loss_mask)
    return capture.seen


def noise_ids(noise_embedding, embed):
    """The token each row was embedded from (rows must equal an embedding row exactly)."""
    rows = noise_embedding[0]
    match = (rows[:, None, :] == embed[None, :, :]).all(-1)
    assert bool((match.sum(-1) >= 1).all()), "a block row is no token's embedding"
    return match.float().argmax(-1)


class TrainingCase:
    """A drafter with random weights drawn from `seed`, in SpecForge's training wrapper, over
    the target's greedy sequence."""

    def __init__(self, case, seed, target, input_ids):
        self.target, self.input_ids, self.seed = target, input_ids, seed
        self.drafter = DFlashDraftModel(drafter_config(case, target.config)).eval()
        randomize(self.drafter, torch.Generator().manual_seed(seed))
        self.online = OnlineDFlashModel(self.drafter, target.lm_head, target.model.embed_tokens,
                                        mask_token_id=LIVE_VOCAB - 1, block_size=BLOCK, attention_backend="sdpa",
                                        num_anchors=NUM_ANCHORS, objective_chunk_blocks=0)
        with torch.no_grad():
            out = target(input_ids, output_hidden_states=True)
        self.hidden_states = extract_context_feature(out.hidden_states, self.drafter.target_layer_ids)
        self.target_predictions = out.logits[0].argmax(-1)  # the verifier's greedy token after each position
        self.loss_mask = torch.zeros_like(input_ids, dtype=torch.float32)
        self.loss_mask[:, len(PROMPT):] = 1.0

    def specforge(self, anchors=None):
        """SpecForge's training forward (on its own sampled anchors unless given)."""
        seen = run_training_forward(self.online, self.input_ids, self.hidden_states, self.loss_mask, self.seed,
                                    anchors)
        assert bool(seen["keep"].all()), "every sampled anchor must be kept"
        (hidden, target_ids, weight_mask), = seen["objective"]  # objective_chunk_blocks=0: one call
        with torch.no_grad():
            logits = self.target.lm_head(hidden)  # [1, N, B, V]: what the objective scores
        accept_len = compute_accept_len(logits.argmax(-1), target_ids, weight_mask > 0)[0]
        reference = {
            "input_ids": self.input_ids[0], "loss_mask": self.loss_mask[0].long(),
            "anchors": seen["anchors"][0], "block_keep": seen["keep"][0].long(),
            "position_ids": seen["position_ids"][0],
            "noise_ids": noise_ids(seen["noise_embedding"], self.target.model.embed_tokens.weight),
            "logits": logits[0].contiguous(), "accept_len": accept_len.long(),
        }
        for kind in ("full_attention", "sliding_attention"):
            if "mask." + kind in seen:
                reference["mask." + kind] = seen["mask." + kind][0, 0].long().contiguous()
        if "mask.sliding_attention" in reference:  # the window cuts the context of later anchors
            assert not torch.equal(reference["mask.sliding_attention"], reference["mask.full_attention"])
        return reference

    def speculators(self):
        """speculators' layout on anchors its select_anchors picks, and its accepted length per
        block for the drafts SpecForge's forward makes there (the same drafter and mask rule
        for full layers)."""
        t = self.input_ids.shape[1]
        torch.manual_seed(self.seed)  # select_anchors permutes with torch's global generator
        anchors, valid = speculators_dflash_utils.select_anchors(self.loss_mask, SPECULATORS_ANCHORS, BLOCK)
        assert bool(valid.all())
        rows = speculators_dflash_utils.get_base_indices_for_anchored_blocks(torch.arange(t)[anchors], BLOCK)
        out = {"speculators.anchors": anchors, "speculators.position_ids": torch.cat([torch.arange(t), rows])}
        window = self.drafter.sliding_window or WINDOW_FOR_FULL_CASE
        for name, sliding, non_causal in (("full_attention", None, False), ("sliding_attention", window, False),
                                          ("sliding_attention_non_causal", window, True)):
            mask_mod, q_len, kv_len = speculators_dflash_attention.create_anchor_block_mask_mod(
                document_ids=torch.zeros(t, dtype=torch.long), total_seq_len=t, anchor_positions=anchors,
                block_size=BLOCK, sliding_window=sliding, sliding_window_non_causal=non_causal)
            out["speculators.mask." + name] = create_mask(mask_mod, None, None, q_len, kv_len, device="cpu")[0, 0].long()
        out["speculators.window"] = torch.tensor([window])
        # Its accepted-length metric (eal): per block, the leading run of draft slots 1..B-1 equal
        # to the verifier's greedy token for their position, plus the bonus token.
        drafts = self.specforge(anchors)["logits"].argmax(-1)[:, 1:]  # [M, B-1]
        offsets = torch.arange(1, BLOCK)
        targets = self.target_predictions[anchors[:, None] + offsets - 1]
        valid = self.loss_mask[0, anchors[:, None] + offsets] > 0
        out["speculators.accepted_length"] = torch.stack([
            speculators_metrics.compute_accepted_length_counts(
                (drafts[j] == targets[j])[None], valid[j][None])[0] for j in range(len(anchors))]).long()
        return out


def usable(reference):
    """Not vacuous: no draft argmax is a near tie the engine's 1e-4 could flip, and the
    accepted runs take at least three lengths."""
    top2 = reference["logits"].topk(2, dim=-1).values
    margin = (top2[..., 0] - top2[..., 1])[:, 1:].min().item()
    return margin > 1e-3 and len(set(reference["accept_len"].tolist())) >= 3, margin


def generate(name, case, target, input_ids, out_dir):
    # Random drafters rarely agree with the target: the first seed from SEED whose drafter is usable.
    for seed in range(SEED, SEED + 100):
        training = TrainingCase(case, seed, target, input_ids)
        reference = training.specforge()
        ok, margin = usable(reference)
        if ok:
            break
    else:
        raise SystemExit(f"{name}: no usable drafter in 100 seeds")
    speculators = training.speculators() if case.get("speculators", True) else {}
    case_dir = out_dir / name
    training.drafter.save_pretrained(case_dir / "drafter", safe_serialization=True)
    target.save_pretrained(case_dir / "target", safe_serialization=True)
    save_file({k: v.contiguous() for k, v in {**reference, **speculators}.items()},
              str(case_dir / "reference.safetensors"))
    anchors, accept_len = reference["anchors"].tolist(), reference["accept_len"]
    t = input_ids.shape[1]
    tail = sum(a + BLOCK > t for a in anchors)
    print(f"{name}: seed {seed}, T={t}, anchors {anchors} ({tail} with a block past the sequence), "
          f"accept_len {accept_len.tolist()}, logged accept_len (mean of +1) "
          f"{(accept_len.float() + 1).mean().item():.4f}, min draft argmax margin {margin:.4f}")
    if speculators:
        print(f"  speculators: anchors {speculators['speculators.anchors'].tolist()}, accepted length "
              f"{speculators['speculators.accepted_length'].tolist()}")


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    out_dir = Path(sys.argv[1])
    target = live_target()
    input_ids = greedy_sequence(target)
    for name, case in CASES.items():
        generate(name, case, target, input_ids, out_dir)


if __name__ == "__main__":
    main()
