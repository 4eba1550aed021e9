"""Checks `dflash-eval tokenize` against the Hugging Face references written by
gen_tokenizer_cases.py: JSONL encode and decode with the real Qwen3 tokenizer, --chat against
transformers' apply_chat_template, and the error for a malformed JSONL line (file and line
number, non-zero exit)."""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tokenizers import Tokenizer

QWEN3 = Path(__file__).resolve().parents[2] / "tests" / "data" / "tokenizers" / "qwen3"


def run(exe, args, stdin=None):
    return subprocess.run([exe, "tokenize", "--tokenizer", str(QWEN3), *args], input=stdin, capture_output=True,
                          text=True, encoding="utf-8")


# Split on "\n" only: the JSON lines may hold U+2028 or U+0085, which str.splitlines() breaks on.
def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exe", required=True)
    parser.add_argument("--oracle", required=True, type=Path)
    args = parser.parse_args()
    failures = []

    cases = [json.loads(line) for line in (args.oracle / "cases_qwen3.jsonl").read_text(encoding="utf-8").split("\n") if line]
    lines = "".join(json.dumps({"text": c["text"]}, ensure_ascii=False) + "\n" for c in cases)
    out = run(args.exe, ["--jsonl", "-"], lines)
    got = [json.loads(line)["ids"] for line in out.stdout.split("\n") if line]
    if out.returncode != 0 or got != [c["ids"] for c in cases]:
        failures.append(f"encode: rc={out.returncode} {out.stderr.strip()} ({len(got)} of {len(cases)} lines)")

    lines = "".join(json.dumps({"ids": c["ids"]}) + "\n" for c in cases)
    out = run(args.exe, ["--jsonl", "-", "--decode"], lines)
    got = [json.loads(line)["text"] for line in out.stdout.split("\n") if line]
    if out.returncode != 0 or got != [c["decoded"] for c in cases]:
        failures.append(f"decode: rc={out.returncode} {out.stderr.strip()}")

    hf = Tokenizer.from_file(str(QWEN3 / "tokenizer.json"))
    chats = [json.loads(line) for line in (args.oracle / "chat_qwen3.jsonl").read_text(encoding="utf-8").split("\n") if line]
    for thinking in (True, False):
        selected = [c for c in chats if c["add_generation_prompt"] and c["enable_thinking"] == thinking]
        flags = ["--chat"] + ([] if thinking else ["--no-thinking"])
        out = run(args.exe, ["--jsonl", "-", *flags], "".join(json.dumps({"messages": c["messages"]}) + "\n" for c in selected))
        got = [json.loads(line)["ids"] for line in out.stdout.split("\n") if line]
        if out.returncode != 0 or got != [hf.encode(c["text"], add_special_tokens=False).ids for c in selected]:
            failures.append(f"chat {flags}: rc={out.returncode} {out.stderr.strip()}")

    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write('{"text": "fine"}\n{"text": "broken\n')
    out = run(args.exe, ["--jsonl", f.name])
    Path(f.name).unlink()
    if out.returncode == 0 or f"{f.name}: line 2" not in out.stderr:
        failures.append(f"malformed line: rc={out.returncode} stderr={out.stderr.strip()}")

    for failure in failures:
        print("FAIL", failure)
    print(f"{len(cases)} encode/decode cases, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
