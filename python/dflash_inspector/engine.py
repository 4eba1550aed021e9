"""Running the engine from Python: thin wrappers over the `dflash-eval` command line, so a
training script or a notebook evaluates a checkpoint and reads the numbers back in a few lines.

    from dflash_inspector import evaluate
    s = evaluate("~/models/Qwen3-8B", ["ckpt/step40k"], "prompts.jsonl", "eval.dfi", mode="both")
    print(s.tau())

Keyword options become the command's flags: max_new_tokens=64 -> --max-new-tokens 64, a list
repeats the flag (require=["tau(a) >= 3", "tau(b) >= 3"]), True is a bare flag, False and None
nothing. The engine is found as
DFLASH_EVAL in the environment, else `dflash-eval` on PATH.
"""

import os
import shutil
import subprocess
from pathlib import Path

from .session import Session


class EngineError(Exception):
    """The engine refused or failed; the message holds what it printed and its exit code."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


def engine_path():
    found = os.environ.get("DFLASH_EVAL") or shutil.which("dflash-eval")
    if not found:
        raise EngineError("no dflash-eval: set DFLASH_EVAL to the engine's path or put it on PATH", 127)
    return found


def _flags(options):
    args = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [flag, str(v)]
        else:
            args += [flag, str(value)]
    return args


def _run(command, out, repeated, options):
    args = [engine_path(), command]
    for flag, values in repeated:
        for value in values:
            args += [flag, str(value)]
    args += ["-o", str(out), "--progress", "none"] + _flags(options)
    done = subprocess.run(args, capture_output=True, text=True)
    # `run --require` ends with 6 when a pass bar is missed: the session is complete and readable.
    if done.returncode not in (0, 6):
        raise EngineError(f"dflash-eval {command} exited {done.returncode}: {done.stderr.strip()}", done.returncode)
    return Session(out)


def evaluate(target, drafters, prompts, out, **options):
    """`dflash-eval run`: every drafter against `target` on `prompts` into the session `out`."""
    drafters = [drafters] if isinstance(drafters, (str, Path)) else list(drafters)
    return _run("run", out, [("--target", [target]), ("--drafter", drafters), ("--prompts", [prompts])], options)


def diagnose(target, drafters, prompts, out, **options):
    """`dflash-eval diagnose`: the hypothesis battery; the session holds its runs."""
    drafters = [drafters] if isinstance(drafters, (str, Path)) else list(drafters)
    return _run("diagnose", out, [("--target", [target]), ("--drafter", drafters), ("--prompts", [prompts])], options)
