"""Reference cases for the C++ tokenizer (dfi_tokenizer), produced by Hugging Face `tokenizers`
and `transformers`.

Writes to --out:
  small/tokenizer.json         a byte-level BPE trained here with the Qwen3.5 split regex
                               (\\p{M} joins letters), ChatML added tokens, merges as pairs
  small_legacy/tokenizer.json  the same with merges in the legacy "a b" spelling
  small_ignore_merges/...      the same with model.ignore_merges = true
  small_no_nfc/...             the same without a normalizer
  cases_<name>.jsonl           {"text", "ids", "decoded"} per string, for qwen3 (the real
                               tokenizer) and each small variant
  decode_<name>.jsonl          {"ids", "text", "text_skip_special"} for random id sequences
                               (split characters, so U+FFFD replacement is exercised)
  chat_qwen3.jsonl             {"messages", "add_generation_prompt", "enable_thinking", "text"}
                               rendered by transformers' apply_chat_template with the real
                               Qwen3 chat template
"""

import argparse
import json
import random
import sys
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tokenizer_corpus  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
QWEN3_DIR = REPO / "tests" / "data" / "tokenizers" / "qwen3"

QWEN35_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Non-special added tokens: ChatML thinking tags, a pair where one is a prefix of the other
# (longest match must win) and one whose content is not plain byte-level symbols.
NON_SPECIAL = ["<think>", "</think>", "[IMG]", "[IMG][/IMG]", "<|café|>"]


def train_small(out_dir):
    tok = Tokenizer(models.BPE(dropout=None, unk_token=None, fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN35_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=4000, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=SPECIAL)
    corpus = (tokenizer_corpus.stdlib_sources(1_500_000) + tokenizer_corpus.cjk_texts()
              + tokenizer_corpus.MULTILINGUAL * 20 + tokenizer_corpus.script_words(random.Random(5), 3000))
    tok.train_from_iterator(corpus, trainer=trainer)
    tok.add_tokens([AddedToken(t, normalized=False, special=False) for t in NON_SPECIAL])
    small = out_dir / "small"
    small.mkdir(parents=True, exist_ok=True)
    tok.save(str(small / "tokenizer.json"))

    data = json.loads((small / "tokenizer.json").read_text(encoding="utf-8"))
    assert all(isinstance(m, list) for m in data["model"]["merges"]), "expected the pair spelling"
    variants = {
        "small_legacy": lambda d: d["model"].update(merges=[" ".join(m) for m in d["model"]["merges"]]),
        "small_ignore_merges": with_whole_words,
        "small_no_nfc": lambda d: d.update(normalizer=None),
    }
    for name, change in variants.items():
        variant = json.loads(json.dumps(data))
        change(variant)
        (out_dir / name).mkdir(parents=True, exist_ok=True)
        (out_dir / name / "tokenizer.json").write_text(json.dumps(variant, ensure_ascii=False), encoding="utf-8")


def with_whole_words(data):
    """ignore_merges=true, plus vocabulary entries for whole pieces that merges cannot reach, so
    that looking a piece up before merging changes results. The new entries take ids the added
    tokens have in the file; HF then gives those added tokens new ids past the vocabulary,
    which the C++ loader must do the same way."""
    data["model"]["ignore_merges"] = True
    vocab = data["model"]["vocab"]
    next_id = max(list(vocab.values()) + [t["id"] for t in data["added_tokens"]]) + 1
    for word in ["\u0120quick", "\u0120brown", "\u0120jumps", "\u0120lazy", "CamelCaseIdentifierWithNumbers", "\u0120doesn",
                 "snake", "\u0120return", "\u0120self"]:
        if word not in vocab:
            vocab[word] = next_id
            next_id += 1


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def encode_cases(tok, texts):
    rows = []
    for text in texts:
        ids = tok.encode(text, add_special_tokens=False).ids
        rows.append({"text": text, "ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)})
    return rows


def decode_cases(tok, rng, count):
    vocab = tok.get_vocab_size(with_added_tokens=True)
    special = [tok.token_to_id(t) for t in SPECIAL if tok.token_to_id(t) is not None]
    rows = []
    for _ in range(count):
        ids = [rng.randrange(vocab) if rng.random() < 0.9 else rng.choice(special) for _ in range(rng.randint(1, 12))]
        rows.append({"ids": ids, "text": tok.decode(ids, skip_special_tokens=False),
                     "text_skip_special": tok.decode(ids, skip_special_tokens=True)})
    return rows


def chat_cases():
    from transformers import AutoTokenizer
    hf = AutoTokenizer.from_pretrained(str(QWEN3_DIR))
    conversations = [
        [{"role": "user", "content": "Hello!"}],
        [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "2+2?"}],
        [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nHello."},
         {"role": "user", "content": "Again"}],
        [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "<think>\nplan\n</think>\n\nA"}],
        [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "plain answer"}],
        [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "Let me check."},
         {"role": "tool", "content": "{\"temp\": 21}"}, {"role": "tool", "content": "{\"rain\": false}"},
         {"role": "assistant", "content": "<think>ok</think>It is 21 degrees."}],
        [{"role": "user", "content": "a"}, {"role": "system", "content": "late system"},
         {"role": "user", "content": "<tool_response>\nx\n</tool_response>"}],
        [{"role": "tool", "content": "first"}, {"role": "user", "content": "  spaced  \n"}],
        [{"role": "user", "content": "多语言 😀 e\u0301"}, {"role": "assistant", "content": "\n\n<think>\n\n</think>\n\nok\n"}],
        [{"role": "system", "content": "s"}, {"role": "developer", "content": "ignored role"},
         {"role": "user", "content": "u"}],
    ]
    rows = []
    for messages in conversations:
        for add_generation_prompt in (True, False):
            for enable_thinking in (True, False):
                text = hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=add_generation_prompt,
                                              enable_thinking=enable_thinking)
                rows.append({"messages": messages, "add_generation_prompt": add_generation_prompt,
                             "enable_thinking": enable_thinking, "text": text})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    train_small(args.out)
    tokenizers = {
        "qwen3": Tokenizer.from_file(str(QWEN3_DIR / "tokenizer.json")),
        "small": Tokenizer.from_file(str(args.out / "small" / "tokenizer.json")),
    }
    for name in ("small_legacy", "small_ignore_merges", "small_no_nfc"):
        tokenizers[name] = Tokenizer.from_file(str(args.out / name / "tokenizer.json"))
    texts = tokenizer_corpus.all_cases(SPECIAL + NON_SPECIAL)
    for name, tok in tokenizers.items():
        write_jsonl(args.out / f"cases_{name}.jsonl", encode_cases(tok, texts))
        write_jsonl(args.out / f"decode_{name}.jsonl", decode_cases(tok, random.Random(99), 400))
    write_jsonl(args.out / "chat_qwen3.jsonl", chat_cases())
    print(f"{len(texts)} strings, {len(tokenizers)} tokenizers, written to {args.out}")


if __name__ == "__main__":
    main()
