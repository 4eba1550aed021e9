"""Chat prompts on Llama 3 and gpt-oss targets, end to end: `dflash-eval tokenize --chat` and
`dflash-eval run` with chat prompts (the prompt ids a run records) against transformers'
apply_chat_template(tokenize=True) on the same tokenizer and template.

Each family gets a model directory as its checkpoints ship it: a tiny random target of the
family with the real vocabulary size (LlamaForCausalLM, GptOssForCausalLM, saved by
transformers), the real tokenizer files (Llama 3's tiktoken `original/tokenizer.model` and
tokenizer_config.json with its chat template; gpt-oss's o200k ranks, tokenizer_config.json and
chat_template.jinja) and a random DFlash drafter over its last layers. The reference tokenizer is
the rank file as transformers' own TikTokenConverter turns it into a tokenizer.json (how the
Hub's files were made), wrapped in PreTrainedTokenizerFast with the same template and special
tokens. Llama 3's template reads the date (strftime_now) unless date_string is given, and
gpt-oss's reads reasoning_effort: both are passed as --chat-template-kwargs, so the check also
shows the keywords reach the template.

Usage: check_chat_families_cli.py DFLASH_EVAL SCRATCH_DIR
"""

import hashlib
import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_drafter import LIVE_DRAFTER, random_drafter, save_drafter  # noqa: E402
from gen_llama_gptoss_models import gpt_oss  # noqa: E402
from gen_tokenizer_family_cases import LLAMA3_PATTERN, O200K_URL, configured_specials  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TOKENIZERS = REPO / "tests" / "data" / "tokenizers"
TEMPLATES = REPO / "tests" / "data" / "chat_templates"

CONVERSATIONS = [
    [{"role": "user", "content": "Write fizzbuzz in Python."}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Summe von 2 und 3? 答えて 😀"}],
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello! How can I help?"},
     {"role": "user", "content": "def f(x):\n    return x  # why    so many spaces?"}],
]


def reference_tokenizer(rank_file, pattern, config_file, template):
    from transformers.convert_slow_tokenizer import TikTokenConverter
    specials = configured_specials(config_file)
    ordered = [t for t, _ in sorted(specials.items(), key=lambda kv: kv[1])]
    backend = TikTokenConverter(vocab_file=str(rank_file), pattern=pattern, extra_special_tokens=ordered).converted()
    config = json.loads(Path(config_file).read_text(encoding="utf-8"))
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=config.get("bos_token"),
                                  eos_token=config.get("eos_token"))
    tok.chat_template = template
    return tok


def reference_ids(tok, messages, kwargs):
    out = tok.apply_chat_template(messages, tokenize=True, add_generation_prompt=True, **kwargs)
    ids = out["input_ids"] if hasattr(out, "keys") else out
    return [int(i) for i in ids]


def llama3_dir(root):
    model_dir = root / "llama3"
    torch.manual_seed(1)
    target = LlamaForCausalLM(LlamaConfig(
        vocab_size=128256, hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, head_dim=8, max_position_embeddings=512, bos_token_id=128000, eos_token_id=128009,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 128}))
    target.save_pretrained(model_dir / "target", safe_serialization=True)
    (model_dir / "target" / "original").mkdir()
    shutil.copy(TOKENIZERS / "llama3" / "original" / "tokenizer.model", model_dir / "target" / "original")
    shutil.copy(TOKENIZERS / "llama3" / "tokenizer_config.json", model_dir / "target")
    template = json.loads((TOKENIZERS / "llama3" / "tokenizer_config.json").read_text())["chat_template"]
    reference = reference_tokenizer(TOKENIZERS / "llama3" / "original" / "tokenizer.model", LLAMA3_PATTERN,
                                    TOKENIZERS / "llama3" / "tokenizer_config.json", template)
    return model_dir, 128256, reference, {"date_string": "26 Jul 2024"}


def o200k_pattern(root):
    """o200k's split pattern as tiktoken defines it, read offline (the rank file in its cache)."""
    import tiktoken
    cache = root / "tiktoken_cache"
    cache.mkdir(exist_ok=True)
    shutil.copy(TOKENIZERS / "gpt-oss" / "o200k_base.tiktoken", cache / hashlib.sha1(O200K_URL.encode()).hexdigest())
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return tiktoken.get_encoding("o200k_harmony")._pat_str


def gpt_oss_dir(root):
    model_dir = root / "gpt-oss"
    torch.manual_seed(2)
    target = gpt_oss(vocab=201088, hidden=32, layers=4, window=8)
    target.save_pretrained(model_dir / "target", safe_serialization=True)
    for name in ("o200k_base.tiktoken", "tokenizer_config.json"):
        shutil.copy(TOKENIZERS / "gpt-oss" / name, model_dir / "target")
    template_file = TEMPLATES / "gpt-oss" / "chat_template_gpt-oss-20b.jinja"
    shutil.copy(template_file, model_dir / "target" / "chat_template.jinja")
    reference = reference_tokenizer(TOKENIZERS / "gpt-oss" / "o200k_base.tiktoken", o200k_pattern(root),
                                    TOKENIZERS / "gpt-oss" / "tokenizer_config.json", template_file.read_text())
    return model_dir, 201088, reference, {"reasoning_effort": "high"}


def drafter_for(model_dir, vocab):
    cfg = dict(LIVE_DRAFTER, vocab=vocab, mask_id=vocab - 1)
    save_drafter(cfg, random_drafter(cfg, torch.Generator().manual_seed(3)), model_dir / "drafter")


def check_tokenize(exe, model_dir, reference, kwargs, failures):
    lines = "".join(json.dumps({"messages": m}, ensure_ascii=False) + "\n" for m in CONVERSATIONS)
    out = subprocess.run([exe, "tokenize", "--tokenizer", str(model_dir / "target"), "--jsonl", "-", "--chat",
                          "--chat-template-kwargs", json.dumps(kwargs)],
                         input=lines, capture_output=True, text=True, encoding="utf-8")
    got = [json.loads(line)["ids"] for line in out.stdout.split("\n") if line]
    want = [reference_ids(reference, m, kwargs) for m in CONVERSATIONS]  # enable_thinking: tokenize's default, unset
    if out.returncode != 0 or got != want:
        failures.append(f"{model_dir.name}: tokenize --chat rc={out.returncode} {out.stderr.strip()[-400:]} "
                        f"(first ids {got[:1]!s:.200} vs {want[:1]!s:.200})")


def check_run(exe, model_dir, reference, kwargs, failures):
    prompts = model_dir / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"messages": m}, ensure_ascii=False) + "\n" for m in CONVERSATIONS))
    session = model_dir / "run.dfi"
    out = subprocess.run([exe, "run", "--target", str(model_dir / "target"), "--drafter", str(model_dir / "drafter"),
                          "--prompts", str(prompts), "--mode", "live", "--ddtree", "0", "--max-new-tokens", "4",
                          "--chat-template-kwargs", json.dumps(kwargs), "--progress", "none", "-o", str(session),
                          "--overwrite"], capture_output=True, text=True)
    if out.returncode != 0:
        failures.append(f"{model_dir.name}: run rc={out.returncode} {out.stderr.strip()[-600:]}")
        return
    rows = sqlite3.connect(session).execute("SELECT prompt_tokens FROM prompts ORDER BY prompt_id").fetchall()
    got = [list(struct.unpack(f"<{len(b) // 4}i", b)) for (b,) in rows]
    # run renders with thinking off by default: enable_thinking=False, as transformers passes it.
    want = [reference_ids(reference, m, dict(kwargs, enable_thinking=False)) for m in CONVERSATIONS]
    if got != want:
        failures.append(f"{model_dir.name}: run recorded other prompt ids ({len(got)} prompts; "
                        f"first {got[:1]!s:.200} vs {want[:1]!s:.200})")


def main():
    exe, scratch = sys.argv[1], Path(sys.argv[2])
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    torch.set_num_threads(1)
    failures = []
    for build in (llama3_dir, gpt_oss_dir):
        model_dir, vocab, reference, kwargs = build(scratch)
        drafter_for(model_dir, vocab)
        check_tokenize(exe, model_dir, reference, kwargs, failures)
        check_run(exe, model_dir, reference, kwargs, failures)
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"tokenize --chat and run match apply_chat_template on Llama 3 and gpt-oss ({len(CONVERSATIONS)} "
          "conversations each)")


if __name__ == "__main__":
    main()
