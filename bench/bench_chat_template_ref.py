"""Reference figures for bench_chat_template: transformers' apply_chat_template (jinja2) and
Hugging Face `tokenizers` on a long conversation, single-threaded.

Builds the conversation (alternating user and assistant turns of code, prose, CJK and emoji
from tests/oracle/tokenizer_corpus.py, about --target-tokens tokens under the template), writes
it to --conversation-out so that the C++ side renders exactly the same messages, then prints one
JSON object: render_s (best of --repeat renders to text), total_s (best of --repeat renders and
tokenisations, apply_chat_template(tokenize=True)), chars and the ids."""

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ["TOKENIZERS_PARALLELISM"] = "false"  # before importing tokenizers
from transformers import AutoTokenizer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracle"))
import tokenizer_corpus  # noqa: E402


def conversation(tok, target_tokens):
    """Turns from the corpus until the rendered conversation reaches target_tokens."""
    docs = tokenizer_corpus.mixed_corpus(target_tokens * 6)
    # Many turns of a few hundred tokens, as a long chat has.
    pieces = [doc[i:i + 2000] for doc in docs for i in range(0, len(doc), 2000)]
    messages, tokens = [{"role": "system", "content": "You are a careful assistant."}], 0
    for i, doc in enumerate(pieces):
        if tokens >= target_tokens:
            break
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": doc})
        tokens += len(tok.encode(doc, add_special_tokens=False))
    if messages[-1]["role"] != "user":
        messages.append({"role": "user", "content": "Go on."})
    return messages


def ids_of(out):
    return out["input_ids"] if hasattr(out, "keys") else out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer-dir", required=True)
    parser.add_argument("--conversation-out", required=True)
    parser.add_argument("--target-tokens", type=int, default=32768)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    tok = AutoTokenizer.from_pretrained(args.tokenizer_dir)
    messages = conversation(tok, args.target_tokens)
    Path(args.conversation_out).write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    kwargs = dict(add_generation_prompt=True, enable_thinking=False)

    render_s = total_s = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        text = tok.apply_chat_template(messages, tokenize=False, **kwargs)
        render_s = min(render_s, time.perf_counter() - start)
        start = time.perf_counter()
        ids = [int(i) for i in ids_of(tok.apply_chat_template(messages, tokenize=True, **kwargs))]
        total_s = min(total_s, time.perf_counter() - start)
    print(json.dumps({"render_s": render_s, "total_s": total_s, "chars": len(text), "ids": ids}))


if __name__ == "__main__":
    main()
