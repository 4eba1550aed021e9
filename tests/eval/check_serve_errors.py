"""`dflash-eval serve` fed malformed requests one after another, as a GUI talking to it would:
each one must be answered with an "error" (under its request id when that can be read, else
-1) naming what is wrong, within a few seconds, and the server must keep answering: a valid
inspect request on the demo models afterwards gets its records and "done", and the server
exits cleanly at the end of its input.

Usage: check_serve_errors.py DFLASH_EVAL DEMO_DIR
"""

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

REPLY_TIMEOUT_S = 60  # a model load on a busy machine; a missing reply fails after this


class Engine:
    """A running `serve` whose stdout frames are read on a thread, so a missing reply is a
    timeout rather than a hang."""

    def __init__(self, binary):
        self.process = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
        self.frames = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr = []
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True).start()

    def _read(self):
        out = self.process.stdout
        while line := out.readline():
            header = json.loads(line)
            payload = out.read(header.get("payload_bytes", 0))
            self.frames.put((header, payload))
        self.frames.put(None)  # end of output

    def send(self, raw: bytes):
        self.process.stdin.write(raw)
        self.process.stdin.flush()

    def next_frame(self, what):
        try:
            frame = self.frames.get(timeout=REPLY_TIMEOUT_S)
        except queue.Empty:
            raise AssertionError(f"no reply to {what} within {REPLY_TIMEOUT_S} s") from None
        if frame is None:
            log = b"".join(self.stderr).decode(errors="replace")
            raise AssertionError(f"the server ended (code {self.process.wait()}) instead of answering {what}\n{log}")
        return frame

    def answer(self, what):
        """The frames up to and including the next "done" or "error"."""
        frames = []
        while True:
            header, payload = self.next_frame(what)
            frames.append((header, payload))
            if header["type"] in ("done", "error"):
                return frames


def malformed(demo):
    """(what, raw bytes, expected request_id, a phrase the error message must contain)"""
    target, drafter = str(demo / "target"), str(demo / "drafter-good")

    def line(obj):
        return json.dumps(obj).encode() + b"\n"

    return [
        ("an id of the wrong type", line({"type": "inspect", "request_id": "x"}), -1, "inspect.request_id"),
        ("a run without its fields", line({"type": "run"}), -1, "run.target"),
        ("a run with an id but no fields", line({"type": "run", "request_id": 5}), 5, "run.target"),
        ("a mistyped field", line({"type": "inspect", "request_id": 6, "target": target, "drafter": drafter,
                                   "ids": "1 2 3", "anchor": 1}), 6, "inspect.ids"),
        ("an out-of-range integer", line({"type": "inspect", "request_id": 7, "target": target, "drafter": drafter,
                                          "ids": [1, 2], "anchor": 1, "top_k": 2 ** 40}), 7, "inspect.top_k"),
        ("an unknown type", line({"type": "rerun", "request_id": 8}), 8, "unknown request type 'rerun'"),
        ("no type", line({"request_id": 9}), 9, "message.type"),
        ("a type that is not a string", line({"type": ["run"], "request_id": 10}), 10, "message.type"),
        ("invalid JSON", b'{"type": "run", "request_id": 11,,}\n', -1, "not a JSON message"),
        ("a line cut short", b'{"type": "inspect", "request_id": 12, "target": "/m\n', -1, "not a JSON message"),
        ("not an object", b"[1, 2, 3]\n", -1, "not a JSON object"),
        ("a number too large for JSON", b'{"type": "cancel", "request_id": 1e400}\n', -1, "not a JSON message"),
        ("a cancel without its id", line({"type": "cancel"}), -1, "cancel.request_id"),
        ("a huge payload_bytes", line({"type": "cancel", "request_id": 13, "payload_bytes": 2 ** 40}), -1,
         "payload_bytes"),
        ("a request with a payload", line({"type": "cancel", "request_id": 14, "payload_bytes": 3}) + b"abc", 14,
         "carries no payload"),
        ("an unknown mode", line({"type": "run", "request_id": 15, "target": target, "drafters": [drafter],
                                  "prompts": str(demo / "prompts.jsonl"), "modes": ["sideways"]}), 15,
         "run.modes[0]: unknown value 'sideways'"),
        ("an unknown mask variant", line({"type": "inspect", "request_id": 16, "target": target, "drafter": drafter,
                                          "ids": [1, 2], "anchor": 1, "mask_variant": "upside-down"}), 16,
         "inspect.mask_variant: unknown value 'upside-down'"),
    ]


def main():
    binary, demo = sys.argv[1], Path(sys.argv[2])
    engine = Engine(binary)
    hello, _ = engine.next_frame("the start")
    assert hello["type"] == "hello", hello
    for what, raw, request_id, phrase in malformed(demo):
        engine.send(raw)
        answer = engine.answer(what)
        error = answer[-1][0]
        assert len(answer) == 1 and error["type"] == "error", (what, answer)
        assert error["request_id"] == request_id, (what, error)
        assert phrase in error["message"], (what, phrase, error)
        assert error["exit_code"] in (2, 4), (what, error)  # usage or format, never an engine failure
        print(f"{what}: error {error['exit_code']}: {error['message']}")

    engine.send(json.dumps({"type": "inspect", "request_id": 20, "target": str(demo / "target"),
                            "drafter": str(demo / "drafter-good"), "ids": [510, 1027, 27, 41, 339, 1400],
                            "anchor": 3, "attention": False, "statistics": False}).encode() + b"\n")
    answer = engine.answer("the valid inspect request")
    done = answer[-1][0]
    assert done["type"] == "done" and done["request_id"] == 20 and done["request"] == "inspect", done
    assert any(h["type"] == "step" for h, _ in answer), answer

    # A last line without its newline: answered, then the server ends with its input.
    engine.send(b'{"type": "cancel", "request_')
    engine.process.stdin.close()
    error = engine.answer("a line the input ends inside")[-1][0]
    assert error["type"] == "error" and error["request_id"] == -1, error
    assert engine.process.wait(timeout=REPLY_TIMEOUT_S) == 0
    print(f"serve: {len(malformed(demo)) + 1} malformed requests answered with errors, the server kept serving")


if __name__ == "__main__":
    main()
