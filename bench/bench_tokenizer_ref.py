"""Reference figures for bench_tokenizer: Hugging Face `tokenizers`, single-threaded.

Writes the benchmark corpus (a JSON array of documents, built by tests/oracle/tokenizer_corpus.py)
to --corpus-out so that the C++ side encodes exactly the same text, then prints one JSON object:
load_s (best of --repeat loads of tokenizer.json), encode_s (best of --repeat passes, each on a
freshly loaded tokenizer, encoding the documents one by one), bytes and tokens."""

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ["TOKENIZERS_PARALLELISM"] = "false"  # before importing tokenizers
from tokenizers import Tokenizer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracle"))
import tokenizer_corpus  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--corpus-out", required=True)
    parser.add_argument("--target-bytes", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    docs = tokenizer_corpus.mixed_corpus(args.target_bytes)
    Path(args.corpus_out).write_text(json.dumps(docs, ensure_ascii=False), encoding="utf-8")

    load_s = encode_s = float("inf")
    tokens = 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        tok = Tokenizer.from_file(args.tokenizer)
        load_s = min(load_s, time.perf_counter() - start)
        start = time.perf_counter()
        tokens = sum(len(tok.encode(d, add_special_tokens=False).ids) for d in docs)
        encode_s = min(encode_s, time.perf_counter() - start)
    print(json.dumps({"load_s": load_s, "encode_s": encode_s, "bytes": sum(len(d.encode()) for d in docs),
                      "tokens": tokens}))


if __name__ == "__main__":
    main()
