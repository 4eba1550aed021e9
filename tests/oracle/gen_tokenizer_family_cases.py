"""Reference cases for the C++ tokenizer (dfi_tokenizer) on the tokenizers the non-Qwen families
ship: tiktoken rank files (Llama 3, gpt-oss's o200k_harmony, Kimi's layout) and SentencePiece-style
BPE tokenizer.json files (Gemma, Llama 2), produced by the reference packages themselves.

tiktoken families: the reference is a `tiktoken.Encoding` built from the rank file with the family's
pattern and specials (o200k_harmony is tiktoken's own definition, read offline from a cache
directory holding the rank file), and the same ranks converted to tokenizer.json by transformers'
TikTokenConverter, as the Hub's files were made. The generator checks that the two agree on
every case; the C++ tokenizer must then match them in both forms (the rank-file directory and the
converted tokenizer.json).

SentencePiece-style: a small BPE trained here with `tokenizers`, with <0xNN> byte-fallback tokens,
an unk token and added tokens, written in the forms Gemma and Llama 2 files have (Replace
normalizer, Prepend + Strip, Metaspace pre-tokenizer with each prepend scheme, ignore_merges,
fuse_unk off).

Writes to --out:
  manifest.json               {name: {"forms": [{"dir"|"file": path}, ...], "specials": [...]}}
  <name>/...                  the generated tokenizers and rank-file directories
  cases_<name>.jsonl          {"text", "ids", "decoded"}
  decode_<name>.jsonl         {"ids", "text", "text_skip_special"} for random id sequences
"""

import argparse
import base64
import hashlib
import json
import os
import random
import shutil
import sys
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tokenizer_corpus  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "tokenizers"

# meta-llama/llama-models models/llama3/tokenizer.py pat_str.
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# Moonshot's tokenization_kimi.py pat_str.
KIMI_PATTERN = "|".join([
    r"""[\p{Han}]+""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def configured_specials(tokenizer_config):
    """added_tokens_decoder of a tokenizer_config.json as {content: id}."""
    decoder = json.loads(Path(tokenizer_config).read_text(encoding="utf-8"))["added_tokens_decoder"]
    return {entry["content"]: int(i) for i, entry in decoder.items()}


def converted(rank_file, pattern, specials, out_dir):
    """The rank file as transformers converts it to tokenizer.json, specials in id order."""
    from transformers.convert_slow_tokenizer import TikTokenConverter
    ordered = [t for t, _ in sorted(specials.items(), key=lambda kv: kv[1])]
    tok = TikTokenConverter(vocab_file=str(rank_file), pattern=pattern, extra_special_tokens=ordered).converted()
    for content, id_ in specials.items():
        assert tok.token_to_id(content) == id_, (content, id_, tok.token_to_id(content))
    out_dir.mkdir(parents=True, exist_ok=True)
    tok.save(str(out_dir / "tokenizer.json"))
    return Tokenizer.from_file(str(out_dir / "tokenizer.json"))


def tiktoken_cases(name, encoding, hf, texts, rng, out):
    """Cases from tiktoken; the converted tokenizer.json (if any) must agree on every one."""
    rows, disagreements = [], []
    for text in texts:
        ids = encoding.encode(text, allowed_special="all")
        if hf is not None:
            hf_ids = hf.encode(text, add_special_tokens=False).ids
            if hf_ids != ids:
                disagreements.append({"text": text, "tiktoken": ids, "hf": hf_ids})
        rows.append({"text": text, "ids": ids, "decoded": encoding.decode(ids)})
    if disagreements:
        write_jsonl(out / f"disagreements_{name}.jsonl", disagreements)
        raise SystemExit(f"{name}: tiktoken and the converted tokenizer.json disagree on {len(disagreements)} cases, "
                         f"see {out / f'disagreements_{name}.jsonl'}")
    write_jsonl(out / f"cases_{name}.jsonl", rows)

    specials = sorted(encoding._special_tokens.values())
    decode_rows = []
    for ids in random_id_sequences(rng, encoding.max_token_value + 1, specials, byte_ids=range(256)):
        text = encoding.decode(ids)
        if hf is not None:
            assert hf.decode(ids, skip_special_tokens=False) == text, ids
        skipped = [i for i in ids if i not in set(specials)]
        decode_rows.append({"ids": ids, "text": text, "text_skip_special": encoding.decode(skipped)})
    write_jsonl(out / f"decode_{name}.jsonl", decode_rows)
    return len(rows)


def random_id_sequences(rng, vocab, specials, byte_ids, count=400):
    """Random ids, specials, and runs of single-byte tokens (split and invalid UTF-8)."""
    byte_ids = list(byte_ids)
    out = []
    for _ in range(count):
        ids = []
        for _ in range(rng.randint(1, 12)):
            r = rng.random()
            if r < 0.6:
                ids.append(rng.randrange(vocab))
            elif r < 0.75:
                ids.append(rng.choice(specials))
            else:
                ids.extend(rng.choice(byte_ids) for _ in range(rng.randint(1, 4)))
        out.append(ids)
    return out


def family_texts(specials):
    return (tokenizer_corpus.all_cases(specials) + tokenizer_corpus.special_token_cases(specials)
            + [tokenizer_corpus.long_text()])


def llama3(out, rng, manifest):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    src = DATA / "llama3"
    rank_file = src / "original" / "tokenizer.model"
    specials = configured_specials(src / "tokenizer_config.json")
    encoding = tiktoken.Encoding("llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=load_tiktoken_bpe(str(rank_file)),
                                 special_tokens=specials)
    hf = converted(rank_file, LLAMA3_PATTERN, specials, out / "llama3_hf")
    n = tiktoken_cases("llama3", encoding, hf, family_texts(list(specials)), rng, out)
    manifest["llama3"] = {"forms": [{"dir": str(src)}, {"file": str(out / "llama3_hf" / "tokenizer.json")}],
                          "specials": sorted(specials, key=specials.get)}
    return n


def gpt_oss(out, rng, manifest):
    """gpt-oss as its directory ships it (the specials of tokenizer_config.json), and
    tiktoken's own o200k_harmony (every reserved special) for a directory without one."""
    import tiktoken
    src = DATA / "gpt-oss"
    cache = out / "tiktoken_cache"
    cache.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "o200k_base.tiktoken", cache / hashlib.sha1(O200K_URL.encode()).hexdigest())
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    harmony = tiktoken.get_encoding("o200k_harmony")  # offline: the rank file is in the cache

    specials = configured_specials(src / "tokenizer_config.json")
    assert all(harmony._special_tokens[t] == i for t, i in specials.items())
    encoding = tiktoken.Encoding("gpt-oss", pat_str=harmony._pat_str, mergeable_ranks=harmony._mergeable_ranks,
                                 special_tokens=specials)
    hf = converted(src / "o200k_base.tiktoken", harmony._pat_str, specials, out / "gpt_oss_hf")
    n = tiktoken_cases("gpt_oss", encoding, hf, family_texts(list(specials)), rng, out)
    manifest["gpt_oss"] = {"forms": [{"dir": str(src)}, {"file": str(out / "gpt_oss_hf" / "tokenizer.json")}],
                           "specials": sorted(specials, key=specials.get)}

    # No tokenizer_config.json: config.json's model_type picks o200k_harmony's specials. Its
    # id 200018 has two names, which a tokenizer.json cannot hold: only the tiktoken form.
    harmony_dir = out / "gpt_oss_harmony"
    harmony_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "o200k_base.tiktoken", harmony_dir / "o200k_base.tiktoken")
    (harmony_dir / "config.json").write_text(json.dumps({"model_type": "gpt_oss"}))
    all_specials = list(harmony._special_tokens)
    texts = (tokenizer_corpus.all_cases(list(specials)) + tokenizer_corpus.special_token_cases(all_specials))
    n += tiktoken_cases("gpt_oss_harmony", harmony, None, texts, rng, out)
    manifest["gpt_oss_harmony"] = {"forms": [{"dir": str(harmony_dir)}], "specials": all_specials}
    return n


def kimi(out, rng, manifest):
    """Kimi's layout (tiktoken.model + tokenizer_config.json) on ranks trained here with Kimi's
    pattern: no Kimi rank file may be redistributed."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    trained = Tokenizer(models.BPE())
    trained.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(KIMI_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=3000, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    trained.train_from_iterator(tokenizer_corpus.stdlib_sources(600_000) + tokenizer_corpus.cjk_texts() * 3
                                + tokenizer_corpus.MULTILINGUAL * 20, trainer=trainer)
    byte_decoder = {c: b for b, c in bytes_to_unicode().items()}
    vocab = trained.get_vocab()
    kimi_dir = out / "kimi"
    kimi_dir.mkdir(parents=True, exist_ok=True)
    with open(kimi_dir / "tiktoken.model", "w") as f:
        for token, rank in sorted(vocab.items(), key=lambda kv: kv[1]):
            f.write(base64.b64encode(bytes(byte_decoder[c] for c in token)).decode() + f" {rank}\n")
    n_base = len(vocab)
    # A few named specials with gaps, as Kimi's tokenizer_config.json has them; the other
    # reserved slots take tokenization_kimi.py's <|reserved_token_ID|> names.
    named = {0: "[BOS]", 1: "[EOS]", 2: "<|im_end|>", 3: "<|im_user|>", 4: "<|im_assistant|>", 6: "<|start_header_id|>",
             7: "<|end_header_id|>", 9: "[EOT]", 10: "<|im_system|>", 15: "<|im_middle|>", 255: "[PAD]"}
    config = {"added_tokens_decoder": {str(n_base + i): {"content": c, "lstrip": False, "normalized": False, "rstrip": False,
                                                         "single_word": False, "special": True} for i, c in named.items()}}
    (kimi_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2))
    specials = {named.get(i, f"<|reserved_token_{n_base + i}|>"): n_base + i for i in range(256)}
    encoding = tiktoken.Encoding("kimi", pat_str=KIMI_PATTERN, mergeable_ranks=load_tiktoken_bpe(str(kimi_dir / "tiktoken.model")),
                                 special_tokens=specials)
    hf = converted(kimi_dir / "tiktoken.model", KIMI_PATTERN, specials, out / "kimi_hf")
    n = tiktoken_cases("kimi", encoding, hf, family_texts(list(specials)), rng, out)
    manifest["kimi"] = {"forms": [{"dir": str(kimi_dir)}, {"file": str(out / "kimi_hf" / "tokenizer.json")}],
                        "specials": list(specials)}
    return n


def bytes_to_unicode():
    """GPT-2's byte -> printable character table (as in transformers)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


SP_SPECIAL = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"]
SP_ADDED = ["<think>", "</think>", "[IMG]", "[IMG][/IMG]", "▁▁▁▁"]  # the last is normalized text


def sentencepiece_base(out):
    """A SentencePiece-style BPE: trained on ▁-words with a limited alphabet, so that rare
    characters go to byte fallback, then given the 256 <0xNN> tokens as vocabulary entries."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    trainer = trainers.BpeTrainer(vocab_size=3000, min_frequency=2, show_progress=False, special_tokens=SP_SPECIAL,
                                  limit_alphabet=300)
    texts = [line for text in tokenizer_corpus.stdlib_sources(600_000) for line in text.splitlines()]
    tok.train_from_iterator(texts + tokenizer_corpus.cjk_texts() + tokenizer_corpus.MULTILINGUAL * 20, trainer=trainer)
    data = json.loads(tok.to_str())
    vocab = data["model"]["vocab"]
    next_id = max(vocab.values()) + 1
    for b in range(256):
        token = f"<0x{b:02X}>"
        if token not in vocab:
            vocab[token] = next_id
            next_id += 1
    return data


SP_VARIANTS = {
    # Gemma as transformers' GemmaConverter writes it: spaces become ▁ in the normalizer, so its
    # Split on " " finds nothing and BPE sees whole stretches of text; no prefix space.
    "gemma_replace": dict(
        normalizer={"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        pre_tokenizer={"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious", "invert": False},
        decoder=[{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}]),
    # Llama 2 (legacy): a ▁ prepended to each stretch of text, stripped again when decoding.
    "llama2_prepend": dict(
        normalizer={"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
                                                        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        pre_tokenizer=None,
        decoder=[{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
                 {"type": "Strip", "content": " ", "start": 1, "stop": 0}]),
    # transformers' LlamaConverter today: Metaspace with prepend_scheme "first", no split.
    "metaspace_first": dict(
        normalizer=None,
        pre_tokenizer={"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False},
        decoder=[{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
                 {"type": "Strip", "content": " ", "start": 1, "stop": 0}]),
    "metaspace_always_split": dict(
        normalizer=None,
        pre_tokenizer={"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
        decoder=[{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
                 {"type": "ByteFallback"}, {"type": "Fuse"}]),
    "metaspace_never_ignore_merges": dict(
        normalizer=None,
        pre_tokenizer={"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": True},
        decoder=[{"type": "ByteFallback"}, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": True},
                 {"type": "Fuse"}],
        model=dict(ignore_merges=True)),
    # Split behaviours other than Isolated, and invert, ahead of Metaspace.
    "split_behaviors": dict(
        normalizer=None,
        pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "[0-9]+"}, "behavior": "MergedWithNext", "invert": False},
            {"type": "Split", "pattern": {"Regex": "[,;:]"}, "behavior": "Contiguous", "invert": False},
            {"type": "Split", "pattern": {"String": "\t"}, "behavior": "Removed", "invert": False},
            {"type": "Split", "pattern": {"Regex": "[a-z]+"}, "behavior": "MergedWithPrevious", "invert": True},
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True}]},
        decoder=[{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
                 {"type": "Strip", "content": " ", "start": 1, "stop": 0}]),
    # No byte fallback: characters outside the vocabulary become <unk>, one per character.
    "replace_unk_unfused": dict(
        normalizer={"type": "Replace", "pattern": {"String": " "}, "content": "▁"}, pre_tokenizer=None,
        decoder=[{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "Fuse"}],
        model=dict(byte_fallback=False, fuse_unk=False)),
}


def sentencepiece(out, rng, manifest):
    base = sentencepiece_base(out)
    texts = (tokenizer_corpus.all_cases(SP_SPECIAL + SP_ADDED) + tokenizer_corpus.special_token_cases(SP_SPECIAL + SP_ADDED)
             + [tokenizer_corpus.long_text()])
    total = 0
    for name, variant in SP_VARIANTS.items():
        data = json.loads(json.dumps(base))
        data["normalizer"] = variant["normalizer"]
        data["pre_tokenizer"] = variant["pre_tokenizer"]
        data["decoder"] = {"type": "Sequence", "decoders": variant["decoder"]}
        data["model"].update(variant.get("model", {}))
        tok = Tokenizer.from_str(json.dumps(data))
        tok.add_tokens([AddedToken(t, normalized=False, special=False) for t in SP_ADDED])
        (out / name).mkdir(parents=True, exist_ok=True)
        tok.save(str(out / name / "tokenizer.json"))
        tok = Tokenizer.from_file(str(out / name / "tokenizer.json"))
        rows = []
        for text in texts:
            ids = tok.encode(text, add_special_tokens=False).ids
            rows.append({"text": text, "ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)})
        write_jsonl(out / f"cases_{name}.jsonl", rows)
        vocab = tok.get_vocab_size(with_added_tokens=True)
        specials = [tok.token_to_id(t) for t in SP_SPECIAL]
        byte_ids = [tok.token_to_id(f"<0x{b:02X}>") for b in range(256)]
        decode_rows = []
        sequences = random_id_sequences(rng, vocab, specials, byte_ids) + utf8_byte_runs(rng, byte_ids, tok)
        for ids in sequences:
            decode_rows.append({"ids": ids, "text": tok.decode(ids, skip_special_tokens=False),
                                "text_skip_special": tok.decode(ids, skip_special_tokens=True)})
        write_jsonl(out / f"decode_{name}.jsonl", decode_rows)
        manifest[name] = {"forms": [{"file": str(out / name / "tokenizer.json")}], "specials": SP_SPECIAL + SP_ADDED}
        total += len(rows)
    return total


def utf8_byte_runs(rng, byte_ids, tok, count=200):
    """Byte-fallback runs that are whole characters, cut characters, and stray bytes, between
    ordinary tokens: ByteFallback decides on each run as a whole."""
    words = [tok.token_to_id(w) for w in ("▁the", "▁def", "▁", "e") if tok.token_to_id(w) is not None]
    out = []
    for _ in range(count):
        ids = []
        for _ in range(rng.randint(1, 5)):
            ch = rng.choice(["é", "世", "😀", "a", "\u0301"]).encode()
            run = list(ch)
            r = rng.random()
            if r < 0.3:
                run = run[:rng.randint(0, len(run) - 1)] or [0xff]
            elif r < 0.4:
                run.append(rng.randrange(0x80, 0x100))
            ids += [byte_ids[b] for b in run]
            if rng.random() < 0.6 and words:
                ids.append(rng.choice(words))
        out.append(ids)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--only", nargs="*", help="generate only these groups (llama3 gpt_oss kimi sentencepiece)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if args.only and manifest_path.exists() else {}
    groups = {"llama3": llama3, "gpt_oss": gpt_oss, "kimi": kimi, "sentencepiece": sentencepiece}
    for name, generate in groups.items():
        if args.only and name not in args.only:
            continue
        n = generate(args.out, random.Random(99), manifest)
        print(f"{name}: {n} cases")
    manifest_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
