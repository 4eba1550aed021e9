"""Text for the tokenizer oracle and benchmark, assembled from files on the machine (Python
standard library sources, the CJK sample texts of its test suite) plus multilingual sentences
and deliberately awkward strings. Deterministic for a given Python installation and seed."""

import random
import sysconfig
import unicodedata
from pathlib import Path

STDLIB = Path(sysconfig.get_paths()["stdlib"])

# Everyday sentences in many scripts (written for this file).
MULTILINGUAL = [
    "The quick brown fox jumps over the lazy dog, doesn't it? I'll say it's 42.",
    "Le cœur a ses raisons que la raison ne connaît point; voilà l'été à Noël.",
    "Über den Wolken muss die Freiheit wohl grenzenlos sein. Straße, Maß, Größe.",
    "¿Dónde está la biblioteca? ¡Mañana será otro día, señor Núñez!",
    "Não há nada como a saudade; ação, coração, pão e limão.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Καλημέρα κόσμε· η γλώσσα μου έδωσαν ελληνική.",
    "שלום עולם, מה שלומך היום? אני לומד עברית.",
    "مرحبا بالعالم، كيف حالك اليوم؟ أنا أتعلم اللغة العربية.",
    "سلام دنیا! امروز هوا خیلی خوب است.",
    "नमस्ते दुनिया, आप कैसे हैं? मैं हिंदी सीख रहा हूँ।",
    "আমি বাংলায় গান গাই, আমার সোনার বাংলা।",
    "வணக்கம் உலகம், நீங்கள் எப்படி இருக்கிறீர்கள்?",
    "สวัสดีชาวโลก วันนี้อากาศดีมาก ขอบคุณครับ",
    "你好，世界！今天天气很好，我们去公园散步吧。",
    "日本語のテキストです。ひらがな、カタカナ、漢字が混ざっています。",
    "안녕하세요 세계! 오늘 날씨가 정말 좋네요.",
    "Xin chào thế giới! Tiếng Việt có nhiều dấu thanh: ả, ã, ạ, ầ, ẩ.",
    "გამარჯობა მსოფლიო, როგორ ხარ?",
    "Բարև աշխարհ, ինչպես ես։",
    "ሰላም ልዑል፣ እንዴት ነህ?",
    "Merhaba dünya! İstanbul'da ılık bir gün; ğ, ş, ç, ö, ü.",
    "Witaj świecie! Zażółć gęślą jaźń.",
    "Příliš žluťoučký kůň úpěl ďábelské ódy.",
    "Árvíztűrő tükörfúrógép és öt szép szűz.",
    "Hyvää huomenta! Äiti ja isä ovat kotona.",
    "ཀུན་ལ་བཀྲ་ཤིས་བདེ་ལེགས།",
    "ᐊᐃᓐᖓᐃ ᓄᓇᕗᑦ",
    "Ꭳ Ꮟ ᏍᏓ ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ",
    "ⴰⵣⵓⵍ ⴰⵎⴰⴹⴰⵍ",
    "Math: ∀x∈ℝ, x² ≥ 0; ∑ᵢ aᵢ = ½ π r² ≈ 3.14159 ≠ ∞.",
    "Money: $1,234.56 €99,99 £7 ¥500 ₹100 ₿0.001, 50% off!",
]

EMOJI = [
    "👍", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇩🇪🇯🇵🇺🇸", "1️⃣#️⃣", "❤️‍🔥", "🧑🏿‍💻", "👩‍❤️‍💋‍👨", "🫠🫶🪿",
    "😀😃😄😁😆😅😂🤣", "🐈‍⬛", "⚽️", "🏴󠁧󠁢󠁳󠁣󠁴󠁿",
]

WHITESPACE = [" ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u2003", "\u3000", "\u0085", "\u1680", "\u180e",
              "\u200b", "\ufeff", "\u2028", "\u2029", "\u202f", "\u205f", "\x0b", "\x0c", "\x1c", "\x1f"]

CONTROL = ["\x00", "\x01", "\x07", "\x1b", "\x7f", "\x80", "\x9f", "\u00ad", "\u200d", "\u200e", "\u2066"]


def stdlib_sources(max_bytes):
    """Python sources of the standard library, whole files, sorted by path."""
    texts, total = [], 0
    for path in sorted(STDLIB.glob("*.py")) + sorted(STDLIB.glob("*/*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        texts.append(text)
        total += len(text.encode())
        if total >= max_bytes:
            break
    return texts


def cjk_texts():
    """Chinese, Japanese and Korean sample texts from CPython's test suite."""
    texts = []
    for path in sorted((STDLIB / "test" / "cjkencodings").glob("*-utf8.txt")):
        texts.append(path.read_bytes().decode("utf-8", errors="replace"))
    return texts


def _letters_of(prefix, limit=400):
    return [chr(c) for c in range(0x20, 0x30000)
            if unicodedata.category(chr(c)).startswith("L") and unicodedata.name(chr(c), "").startswith(prefix)][:limit]


SCRIPTS = ["LATIN", "GREEK", "CYRILLIC", "ARMENIAN", "HEBREW", "ARABIC", "DEVANAGARI", "BENGALI", "TAMIL", "THAI",
           "GEORGIAN", "HANGUL", "HIRAGANA", "KATAKANA", "CJK UNIFIED", "ETHIOPIC", "CHEROKEE", "MONGOLIAN", "TIBETAN",
           "GUJARATI", "KANNADA", "MALAYALAM", "SINHALA", "KHMER", "MYANMAR"]


def script_words(rng, count):
    """Random words of letters from one script each, with spaces and punctuation between them."""
    alphabets = {s: _letters_of(s) for s in SCRIPTS}
    out = []
    for _ in range(count):
        letters = alphabets[rng.choice(SCRIPTS)]
        words = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 9))) for _ in range(rng.randint(1, 6))]
        out.append(rng.choice([" ", "  ", ", ", "\n", ". "]).join(words))
    return out


def combining_cases(rng, count):
    """Decomposed (NFD) accented text and stacks of combining marks, which NFC must recompose."""
    marks = [chr(c) for c in range(0x300, 0x370)] + ["\u0e31", "\u093f", "\u094d", "\u20dd", "\u0651"]
    out = [unicodedata.normalize("NFD", s) for s in MULTILINGUAL]
    out += [unicodedata.normalize("NFD", "한국어 텍스트"), "e\u0301\u0302 a\u0308\u0304 o\u0328\u0301", "\u0301start"]
    for _ in range(count):
        word = "".join(rng.choice("aeiouxyzAEIOUṡ") + "".join(rng.choice(marks) for _ in range(rng.randint(0, 3)))
                       for _ in range(rng.randint(1, 6)))
        out.append(word + rng.choice(["", " ", "!", "\n"]))
    return out


def random_unicode(rng, count):
    """Strings of code points drawn from the whole range (no surrogates), mixed with ASCII."""
    out = []
    for _ in range(count):
        chars = []
        for _ in range(rng.randint(1, 24)):
            r = rng.random()
            if r < 0.4:
                chars.append(chr(rng.randint(0x20, 0x7e)))
            elif r < 0.6:
                chars.append(rng.choice(WHITESPACE + CONTROL))
            else:
                c = rng.randint(0x80, 0x10ffff)
                chars.append(chr(c) if not 0xd800 <= c <= 0xdfff else "x")
        out.append("".join(chars))
    return out


def edge_cases():
    """Hand-picked strings for the pre-tokenizer regex and BPE."""
    cases = [
        "", " ", "a", "\n", "\n\n\n", "   leading", "trailing   ", "a  b   c    d", "line\r\nbreak\r\n\r\nend",
        "tab\there\t\tand\tthere", "x" * 500, " " * 300 + "y", "\n" * 40, "ab" * 200, "😀" * 60,
        "It's, I'M, we'Re, they've, he'd, she'LL, 's 'S 'ſ", "don't'll've'd", "'''quoted'''",
        "12345678901234567890", "3.14159e-10", "0x1F600", "١٢٣٤٥ ٦٧٨٩٠", "１２３ＡＢＣ", "²³¹ ½ ⅓ Ⅻ ⅷ", "৩ ๓ 〇",
        "CamelCaseIdentifierWithNumbers123And456", "snake_case_name = value__dunder__",
        "if (a && b) { return c->d[e]; } // comment", "<html><body class=\"x\">text</body></html>",
        "https://example.com/path?query=1&b=%20#frag", "user@example.com", "C:\\Windows\\path", "$$$ ### @@@ !!!",
        "\x00\x01\x02", "a\x00b", "\u200bzero\u200bwidth", "soft\u00adhyphen", "RTL \u202eevil\u202c text",
        " \n \n  \n", "\r\r\n\n\r", "word\n\n  next", "  \t\n  x", "x \u00a0 y", "…—–‘’“”«»‹›",
    ]
    for ws in WHITESPACE:
        cases += [ws, "a" + ws + "b", ws * 3 + "z", "z" + ws * 2]
    return cases


def whitespace_runs(rng, count):
    """Long and mixed runs of whitespace, where split patterns' \\s+(?!\\S), \\s*[\\r\\n]+ and \\s+
    alternatives compete, and deep indentation as code has it."""
    out = [" " * 64 + "x", "\t" * 33 + "y", "\n" * 17 + "   z", " \n" * 40, "x" + " " * 1000, "\r\n" * 25 + "w",
           "a" + "\u3000" * 20 + "b", "\u00a0" * 10 + " " * 10 + "c", "    " * 12 + "return x\n" + "    " * 11 + "}\n"]
    pool = [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2003"]
    for _ in range(count):
        out.append(rng.choice(["", "x", "def f():", "世界"]) + "".join(rng.choice(pool) for _ in range(rng.randint(2, 80)))
                   + rng.choice(["", "y", "😀", "\n"]))
    return out


def special_token_cases(tokens):
    """Every special or added token alone, glued to text on both sides, and after a space."""
    out = []
    for t in tokens:
        out += [t, "x" + t + "y", " " + t + " ", t + t]
    return out


def long_text(size=130_000):
    """One text of about 32k tokens (code, prose, CJK, emoji): BPE and the split must stay
    linear on it."""
    return "\n".join(mixed_corpus(size))[:size]


def added_token_cases(tokens, rng, count):
    """Added tokens inside text, adjacent to each other, truncated, and next to whitespace."""
    out = [
        "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
        "<|im_start|><|im_end|><|endoftext|>", "<|im_start", "<|im_start|", "|im_start|>", "<<|im_start|>>",
        "text<|endoftext|>more", " <|im_end|> ", "<think>\nreasoning\n</think>\n\nanswer", "<think></think>",
    ]
    fillers = ["", " ", "\n", "hello", "世界", "  x ", "😀", "<", "|>", "e\u0301"]
    for _ in range(count):
        out.append("".join(rng.choice(fillers + tokens) for _ in range(rng.randint(1, 8))))
    return out


def code_lines(rng, count):
    """Lines and short runs of lines from standard library sources."""
    lines = [line for text in stdlib_sources(2_000_000) for line in text.splitlines(keepends=True)]
    out = []
    for _ in range(count):
        start = rng.randrange(len(lines))
        out.append("".join(lines[start:start + rng.randint(1, 5)]))
    return out


def all_cases(added_tokens, seed=1234):
    """At least 2,000 strings covering the categories above."""
    rng = random.Random(seed)
    cases = []
    cases += MULTILINGUAL + EMOJI + [" ".join(EMOJI)]
    cases += edge_cases()
    cases += code_lines(rng, 700)
    cases += script_words(rng, 400)
    cases += combining_cases(rng, 200)
    cases += random_unicode(rng, 400)
    cases += added_token_cases(added_tokens, rng, 200)
    cases += [t[:rng.randint(100, 2000)] for t in cjk_texts()]
    cases += [rng.choice(MULTILINGUAL) + rng.choice(WHITESPACE) + rng.choice(EMOJI) for _ in range(100)]
    cases += whitespace_runs(rng, 100)
    return cases


def mixed_corpus(target_bytes, seed=7):
    """Documents of code, multilingual prose, CJK, emoji and noise, about `target_bytes` in all."""
    rng = random.Random(seed)
    code = stdlib_sources(int(target_bytes * 0.55))
    prose_pool = MULTILINGUAL + cjk_texts() + script_words(rng, 2000) + combining_cases(rng, 500)
    docs = list(code)
    total = sum(len(d.encode()) for d in docs)
    while total < target_bytes:
        doc = "\n".join(rng.choice(prose_pool) + rng.choice(["", " " + rng.choice(EMOJI)]) for _ in range(40))
        docs.append(doc)
        total += len(doc.encode())
    rng.shuffle(docs)
    return docs
