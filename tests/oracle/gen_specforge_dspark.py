#!/usr/bin/env python3
"""SpecForge's DSpark drafters (`specforge` 0.2.0, scripts/requirements-nodeps.txt): its own
DSparkDraftModel (z-lab's layout, dflash_config.projector_type "dspark" with its Markov and
confidence heads), random weights, saved with save_pretrained, and its own spec_generate loop
on a tiny target: greedy, every block of B drafted whole (the engine's StepCounting::FullBlocks).
Each block's drafts come from its _sample_draft_tokens (the Markov head's sample_block_tokens
from the anchor); they are recorded as it returns them, with the confidence head's output for
those drafts (its predict_confidence on the proposal rows, each after the token before it; the
engine records its sigmoid, the head being trained with binary_cross_entropy_with_logits).

Target: gen_dflash_package.py's live_target (vocab 16, so a random drafter agrees now and then).

spec_generate calls DynamicCache.crop(start) meaning "keep the first `start` positions", as
transformers did before 5.x; the pinned 5.24 takes the count to remove (negative) and refuses a
positive one. Only for spec_generate's calls, a positive argument is turned into that count
(legacy_crop below); the loop itself is untouched.

OUT/<case>/: target/, drafter/, reference.safetensors:
  prompt.<i> [P] (I64), output.<i> [P + generated] (I64)   spec_generate's output ids, cut at
                                                           the last step's end
  acceptance.<i> [S] (I64)       its acceptance_lengths (accepted drafts + 1)
  drafts.<i> [S, B-1] (I64)      each step's drafts
  confidence.<i> [S, B-1] (F32)  sigmoid of predict_confidence for them (cases with the head)

Cases: "rnn" (rnn Markov head, confidence head fed the Markov embedding; SpecForge starts the
rnn state at the first drafted slot, speculators over the anchor's row too), "gated" (no
confidence head).

Usage: gen_specforge_dspark.py OUT_DIR
"""

import sys
from pathlib import Path

import torch
from safetensors.torch import save_file
from transformers import DynamicCache, Qwen3Config

from specforge.modeling.draft.dspark import DSparkDraftModel

from gen_dflash_package import LIVE_VOCAB, live_target, randomize

SEED = 2029
BLOCK = 8
MAX_NEW = 40
PROMPTS = [[1, 13, 10, 3, 7, 7], [9, 9, 2, 4, 0, 11, 6, 8], [14, 2, 5]]
# spec_generate drops the mask token id from its whole output: one neither these prompts nor the
# target's continuations of them hold (asserted in generate).
MASK_TOKEN_ID = 12
CASES = {
    "rnn": dict(markov_rank=6, markov_head_type="rnn", enable_confidence_head=True, confidence_head_with_markov=True),
    "gated": dict(markov_rank=6, markov_head_type="gated", enable_confidence_head=False),
}


def drafter_config(heads, target_config):
    return Qwen3Config(
        vocab_size=LIVE_VOCAB, hidden_size=target_config.hidden_size, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=8, hidden_act="silu", rms_norm_eps=1e-6,
        attention_bias=False, max_position_embeddings=128,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        layer_types=["full_attention", "full_attention"], tie_word_embeddings=False, block_size=BLOCK,
        num_target_layers=target_config.num_hidden_layers,
        dflash_config={"mask_token_id": MASK_TOKEN_ID, "target_layer_ids": [1, 2], "projector_type": "dspark",
                       **heads},
        architectures=["DSparkDraftModel"], attn_implementation="eager")


def legacy_crop(crop):
    """DynamicCache.crop taking the length to keep, as spec_generate passes it."""
    def keep_first(cache, length):
        return crop(cache, -(cache.get_seq_length() - length) if length > 0 else length)
    return keep_first


def generate(drafter, target, prompt):
    """spec_generate's output, and each block's anchor, drafts and their confidence as recorded."""
    steps = []
    sample = drafter._sample_draft_tokens

    def recording(target_model, draft_hidden, block_output_ids):
        drafts = sample(target_model, draft_hidden, block_output_ids)
        previous = torch.cat([block_output_ids[:, :1], drafts[:, :-1]], dim=1)
        proposal = draft_hidden[:, -drafter.block_size + 1:, :]
        confidence = drafter.predict_confidence(proposal, prev_token_ids=previous)
        steps.append((int(block_output_ids[0, 0]), drafts[0].clone(),
                      None if confidence is None else torch.sigmoid(confidence[0])))
        return drafts

    drafter._sample_draft_tokens = recording
    crop = DynamicCache.crop
    DynamicCache.crop = legacy_crop(crop)
    try:
        output = drafter.spec_generate(target, torch.tensor([prompt]), MAX_NEW, None, 0.0)[0]
    finally:
        del drafter._sample_draft_tokens
        DynamicCache.crop = crop
    # spec_generate drops every mask token id from its output: none may be a real token here.
    assert len(output) == len(prompt) + MAX_NEW, "spec_generate dropped a mask token id from its output"
    return output, steps


def accepted_runs(output, steps, prompt_length):
    """Each step's acceptance length from the output (spec_generate keeps its own), for the steps
    whose tokens all lie within the output (it cuts at prompt + max_new_tokens)."""
    tokens, lengths, start = output.tolist(), [], prompt_length
    for anchor, drafts, _ in steps:
        assert tokens[start] == anchor, "the recorded anchors follow the output"
        accepted = 0
        while accepted < len(drafts) and start + 1 + accepted < len(tokens) and \
                int(drafts[accepted]) == tokens[start + 1 + accepted]:
            accepted += 1
        if start + accepted + 1 >= len(tokens):
            break
        lengths.append(accepted + 1)
        start += accepted + 1
    return lengths


def main():
    out_dir = Path(sys.argv[1])
    target = live_target()
    for name, heads in CASES.items():
        torch.manual_seed(SEED)
        drafter = DSparkDraftModel(drafter_config(heads, target.config)).eval()
        randomize(drafter, torch.Generator().manual_seed(SEED))
        case_dir = out_dir / name
        drafter.save_pretrained(case_dir / "drafter", safe_serialization=True)
        target.save_pretrained(case_dir / "target", safe_serialization=True)
        reference, seen = {}, []
        for i, prompt in enumerate(PROMPTS):
            with torch.no_grad():
                output, steps = generate(drafter, target, prompt)
            lengths = accepted_runs(output, steps, len(prompt))
            steps = steps[:len(lengths)]
            reference[f"prompt.{i}"] = torch.tensor(prompt)
            reference[f"output.{i}"] = output[:len(prompt) + sum(lengths)].clone()
            reference[f"acceptance.{i}"] = torch.tensor(lengths)
            reference[f"drafts.{i}"] = torch.stack([d for _, d, _ in steps])
            if steps[0][2] is not None:
                reference[f"confidence.{i}"] = torch.stack([c for _, _, c in steps]).float()
            seen += lengths
        save_file({k: v.contiguous() for k, v in reference.items()}, str(case_dir / "reference.safetensors"))
        print(f"{name}: {len(seen)} steps, acceptance lengths seen {sorted(set(seen))}, "
              f"tau {sum(seen) / len(seen):.3f}")


if __name__ == "__main__":
    main()
