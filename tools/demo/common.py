"""Shared settings and helpers of the demo scripts (tools/demo)."""

import json
import os
from pathlib import Path

import jinja2

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("DEMO_OUT", ROOT / "resources" / "demo"))
WORK = Path(os.environ.get("DEMO_WORK", "/tmp/dflash-demo-work"))  # intermediate data, not committed
TEMPLATE_FILE = Path(__file__).with_name("chat_template.jinja")

ENDOFTEXT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
BPE_VOCAB = 4096           # byte-level BPE ids 0..4095, then the added tokens
TARGET_VOCAB = 4160        # padded embedding rows (like Qwen's 151936 > 151669)
BLOCK = 16


def template_text():
    return TEMPLATE_FILE.read_text()


_compiled = None


def render_chat(messages, add_generation_prompt, enable_thinking=False):
    """The chat template rendered as transformers renders it (trim_blocks, lstrip_blocks)."""
    global _compiled
    if _compiled is None:
        env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)

        def raise_exception(msg):
            raise jinja2.TemplateError(msg)

        env.globals["raise_exception"] = raise_exception
        _compiled = env.from_string(template_text())
    return _compiled.render(
        messages=messages, add_generation_prompt=add_generation_prompt,
        enable_thinking=enable_thinking)


def load_tokenizer():
    from tokenizers import Tokenizer
    return Tokenizer.from_file(str(OUT / "target" / "tokenizer.json"))


def write_json(path, obj):
    Path(path).write_text(json.dumps(obj, indent=2) + "\n")
