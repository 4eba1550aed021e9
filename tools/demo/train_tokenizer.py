#!/usr/bin/env python3
"""Step 1: a Qwen3.5-style byte-level BPE tokenizer trained on the standard library sources.

NFC normaliser, the Qwen3.5 split regex (combining marks join letters, digits one by one),
byte-level mapping without its own regex, BPE vocabulary of BPE_VOCAB ids (the 256 byte
symbols included), then the ChatML added tokens <|endoftext|> <|im_start|> <|im_end|> (special)
and <think> </think> (not special), as the Qwen tokenizers order them. Writes
OUT/target/tokenizer.json and tokenizer_config.json (with the chat template).
"""

import time

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from tokenizers import AddedToken

import common
from corpus import text_files

QWEN35_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
                r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
CORPUS_BYTES = 6_000_000


def main():
    t0 = time.time()
    tok = Tokenizer(models.BPE(dropout=None, unk_token=None, continuing_subword_prefix="",
                               end_of_word_suffix="", fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN35_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=common.BPE_VOCAB, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=[])
    tok.train_from_iterator(text_files(CORPUS_BYTES), trainer=trainer)
    assert tok.get_vocab_size() == common.BPE_VOCAB, tok.get_vocab_size()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t in (common.ENDOFTEXT, common.IM_START, common.IM_END)])
    tok.add_tokens([AddedToken(t, special=False, normalized=False)
                    for t in (common.THINK_OPEN, common.THINK_CLOSE)])
    out = common.OUT / "target"
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))

    ids = {t: tok.token_to_id(t) for t in (common.ENDOFTEXT, common.IM_START, common.IM_END,
                                           common.THINK_OPEN, common.THINK_CLOSE)}
    common.write_json(out / "tokenizer_config.json", {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {str(i): {"content": t, "lstrip": False, "normalized": False,
                                          "rstrip": False, "single_word": False,
                                          "special": t in (common.ENDOFTEXT, common.IM_START, common.IM_END)}
                                 for t, i in ids.items()},
        "bos_token": None,
        "chat_template": common.template_text(),
        "clean_up_tokenization_spaces": False,
        "eos_token": common.IM_END,
        "errors": "replace",
        "model_max_length": 4096,
        "pad_token": common.ENDOFTEXT,
        "split_special_tokens": False,
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": None,
    })
    sample = "def fizzbuzz(n):\n    for i in range(1, n + 1):\n        print('Fizz' * (i % 3 == 0))\n"
    enc = tok.encode(sample)
    assert tok.decode(enc.ids) == sample
    print(f"tokenizer: {tok.get_vocab_size()} ids, added {ids}; sample {len(sample)} chars -> "
          f"{len(enc.ids)} tokens; {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
