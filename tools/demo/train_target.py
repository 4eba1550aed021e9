#!/usr/bin/env python3
"""Step 2: a tiny Qwen3.5-style hybrid target (Gated DeltaNet + gated full attention) trained
on "write this function" chats built from the standard library.

Each example is the chat template applied to [user: the def line, assistant: the whole
function] (thinking off, so the assistant turn opens with an empty think block, exactly the
prompt the engine renders for {"prompt": "def ..."}). Examples are tokenized, shuffled with a
fixed seed and packed into SEQ-token rows. transformers' torch fallback runs the Gated
DeltaNet (flash-linear-attention and causal-conv1d are not installed; checked below).
Writes OUT/target/config.json + model.safetensors (bf16) next to the tokenizer.
"""

import json
import math
import random
import sys
import time

import torch
from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig
from transformers.models.qwen3_5 import modeling_qwen3_5

import common
from corpus import functions

SEED = 1
SEQ = 128
BATCH = 16
STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
LR = 3e-3
WARMUP = 40
LAYER_TYPES = ["linear_attention", "linear_attention", "full_attention",
               "linear_attention", "linear_attention", "full_attention"]


def check_torch_fallback():
    try:
        import fla  # noqa: F401
        raise SystemExit("flash-linear-attention is installed; the demo is defined by the torch fallback")
    except ImportError:
        pass
    assert modeling_qwen3_5.torch_chunk_gated_delta_rule.__module__ == modeling_qwen3_5.__name__


def config(tok):
    return Qwen3_5TextConfig(
        vocab_size=common.TARGET_VOCAB, hidden_size=128, intermediate_size=384,
        num_hidden_layers=len(LAYER_TYPES), layer_types=LAYER_TYPES,
        num_attention_heads=4, num_key_value_heads=2, head_dim=32,
        linear_conv_kernel_dim=4, linear_key_head_dim=32, linear_value_head_dim=32,
        linear_num_key_heads=2, linear_num_value_heads=4,
        max_position_embeddings=4096, rms_norm_eps=1e-6, tie_word_embeddings=True,
        rope_parameters={"rope_type": "default", "rope_theta": 10000000.0,
                         "partial_rotary_factor": 0.25, "mrope_section": [1, 1, 2],
                         "mrope_interleaved": True},
        initializer_range=0.02, attention_dropout=0.0,
        bos_token_id=None, eos_token_id=tok.token_to_id(common.ENDOFTEXT),
        pad_token_id=tok.token_to_id(common.ENDOFTEXT))


def examples(tok, split):
    """(signature, source) pairs; every 10th function (by corpus order) is held out of the
    target's training and used for the drafter data (split 'draft')."""
    for i, (sig, src) in enumerate(functions()):
        if (i % 10 == 0) == (split == "draft"):
            yield sig, src


def packed_rows(tok):
    ids = []
    docs = []
    for sig, src in examples(tok, "train"):
        text = common.render_chat([{"role": "user", "content": sig},
                                   {"role": "assistant", "content": src}], False)
        docs.append(tok.encode(text).ids)
    random.Random(SEED).shuffle(docs)
    for d in docs:
        ids.extend(d)
    n = len(ids) // SEQ
    return torch.tensor(ids[:n * SEQ]).view(n, SEQ), len(docs)


def main():
    check_torch_fallback()
    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    tok = common.load_tokenizer()
    t0 = time.time()
    rows, ndocs = packed_rows(tok)
    print(f"target data: {ndocs} chats, {rows.numel()} tokens in {rows.shape[0]} rows "
          f"({time.time() - t0:.1f}s)", flush=True)
    model = Qwen3_5ForCausalLM(config(tok))
    print(f"target: {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / WARMUP) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, s / STEPS)))))
    g = torch.Generator().manual_seed(SEED)
    model.train()
    t0 = time.time()
    for step in range(STEPS):
        batch = rows[torch.randint(0, rows.shape[0], (BATCH,), generator=g)]
        loss = model(input_ids=batch, labels=batch).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 10 == 0 or step == STEPS - 1:
            print(f"step {step} loss {loss.item():.3f} ({time.time() - t0:.0f}s)", flush=True)
    train_s = time.time() - t0
    model.eval()
    out = common.OUT / "target"
    model.to(torch.bfloat16).save_pretrained(out, safe_serialization=True)
    cfg = json.loads((out / "config.json").read_text())
    common.write_json(common.WORK / "target_train.json",
                      {"steps": STEPS, "batch": BATCH, "seq": SEQ, "final_loss": loss.item(),
                       "train_seconds": round(train_s), "chats": ndocs, "tokens": rows.numel()})
    print(f"target saved ({cfg.get('model_type')}), {train_s:.0f}s training", flush=True)


if __name__ == "__main__":
    common.WORK.mkdir(parents=True, exist_ok=True)
    main()
