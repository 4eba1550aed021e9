#!/usr/bin/env python3
"""Corpus for the demo: Python source files of the standard library of the Python that runs
this script (already on every machine that has the venv; nothing is downloaded).

Two views of the same files, both deterministic (sorted paths, no randomness here):
  text_files()  the raw source files (tokenizer training)
  functions()   top-level and method `def`s extracted with ast: (signature line, full source),
                dedented, 3..40 lines long (target training: "write this function")
"""

import ast
import sysconfig
import textwrap
from pathlib import Path

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SKIP_DIRS = {"site-packages", "test", "tests", "idlelib", "lib2to3", "turtledemo", "__pycache__",
             "ensurepip", "pydoc_data", "tkinter", "config-3.11-x86_64-linux-gnu"}


def source_paths():
    out = []
    for p in sorted(STDLIB.rglob("*.py")):
        rel = p.relative_to(STDLIB)
        if any(part in SKIP_DIRS or part.startswith("config-") for part in rel.parts[:-1]):
            continue
        out.append(p)
    return out


def text_files(max_bytes=None):
    total = 0
    for p in source_paths():
        try:
            text = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        yield text
        total += len(text)
        if max_bytes and total >= max_bytes:
            return


def functions(min_lines=3, max_lines=40, max_chars=1200):
    """(signature, source) for every def of the selected files, signature = the def line(s)
    up to and including the colon, source = the whole dedented function."""
    seen = set()
    for p in source_paths():
        try:
            text = p.read_text(encoding="utf-8")
            tree = ast.parse(text)
            src_lines = text.split("\n")
        except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.decorator_list:
                continue
            if node.end_lineno - node.lineno + 1 > max_lines:
                continue
            seg = "\n".join(src_lines[node.lineno - 1:node.end_lineno])
            src = textwrap.dedent(seg).strip("\n")
            lines = src.split("\n")
            if not (min_lines <= len(lines) <= max_lines) or len(src) > max_chars:
                continue
            if not lines[0].rstrip().endswith(":"):
                continue  # multi-line signatures: skip, the prompt would be cut mid-signature
            if "\t" in src or src in seen:
                continue
            seen.add(src)
            yield lines[0].rstrip(), src


if __name__ == "__main__":
    fs = list(functions())
    print(len(source_paths()), "files;", len(fs), "functions;",
          sum(len(s) for _, s in fs) // 1000, "k chars")
    for sig, _ in fs[:5]:
        print(sig)
