"""`dflash-eval serve` fed 500 mixed requests pipelined, without waiting for any reply, as a GUI
that queues runs and inspects and cancels some of them would: runs, inspects and a diagnosis on
the demo models, cancels of queued, active and unknown ids, malformed lines. Checked:

- every frame decodes (a JSON header, then exactly payload_bytes bytes, of a known type);
- every request gets exactly one terminal reply ("done" or "error") under its own id, a line
  whose id cannot be read one error under -1, a cancel none of its own, an unknown id nothing;
- the records of each request that ran to its end equal those of the same request served alone
  (ids and wall times aside): no frame of one request is torn, repeated or lost in another's;
- a shutdown with requests still queued answers each of them, then the server exits 0.

Usage: check_serve_stress.py DFLASH_EVAL DEMO_DIR
"""

import json
import subprocess
import sys
import threading
from pathlib import Path

TERMINAL = ("done", "error")
REPLIES = TERMINAL + ("hello", "progress")
RECORDS = ("run", "prompt", "step", "tree", "statistic", "tensor", "tokens")  # record_codec.h
# Keys of a record that differ between two servings of the same request: the engine's ids and
# wall-clock times.
VOLATILE = {"run_id", "step_id", "started_at", "finished_at", "timings_json"}


def serve(binary, lines):
    """Writes `lines` to a fresh `serve` from a thread (nothing waits for a reply) and reads
    every frame it answers until it exits; returns (frames, exit code)."""
    process = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)

    def write():
        for line in lines:
            process.stdin.write(line)
        process.stdin.close()

    writer = threading.Thread(target=write)
    writer.start()
    frames = []
    out = process.stdout
    while header_line := out.readline():
        header = json.loads(header_line)  # a torn or interleaved frame fails here...
        payload = out.read(header.get("payload_bytes", 0))
        assert len(payload) == header.get("payload_bytes", 0), f"payload cut short: {header}"
        assert header.get("type") in REPLIES + RECORDS, f"unknown frame type: {header}"  # ...or here
        frames.append((header, payload))
    writer.join()
    return frames, process.wait(timeout=600)


def line(obj):
    return json.dumps(obj).encode() + b"\n"


def stable(frame):
    header, payload = frame
    return {k: v for k, v in header.items() if k not in VOLATILE}, payload


def by_request(frames, jobs):
    """Terminal replies per id, and the records of each job that ran: requests run one at a
    time in arrival order, so the records before a job's terminal reply are that job's. Errors
    the reading thread sends (a malformed line, a cancel of a queued job) end no running job."""
    terminal, records, pending = {}, {}, []
    for header, payload in frames:
        kind = header["type"]
        if kind in RECORDS:
            pending.append((header, payload))
        elif kind in TERMINAL:
            rid = header["request_id"]
            terminal.setdefault(rid, []).append(header)
            ran = rid in jobs and "before it started" not in header.get("message", "") \
                and "not started" not in header.get("message", "")
            if ran:
                records[rid] = pending
                pending = []
        elif kind == "progress":
            assert header["request_id"] in jobs, f"progress of an unknown request: {header}"
    assert not pending, f"{len(pending)} records after the last request ended"
    return terminal, records


def main():
    binary, demo = sys.argv[1], Path(sys.argv[2])
    target, drafter = str(demo / "target"), str(demo / "drafter-good")
    run = {"type": "run", "target": target, "drafters": [drafter], "prompts": str(demo / "prompts.jsonl"),
           "modes": ["live", "teacher-forced"], "limit": 1, "max_new_tokens": 6}
    inspect = {"type": "inspect", "target": target, "drafter": drafter, "ids": [510, 1027, 27, 41, 339, 1400],
               "anchor": 3, "attention": False, "statistics": False}
    diagnose = {"type": "diagnose", "target": target, "drafters": [drafter], "prompts": str(demo / "prompts.jsonl"),
                "limit": 1, "max_new_tokens": 4}

    # Each request served alone: the records every pipelined copy must reproduce.
    alone, code = serve(binary, [line(dict(run, request_id=1)), line(dict(inspect, request_id=2))])
    assert code == 0, code
    _, reference = by_request(alone, {1, 2})
    reference = {kind: [stable(f) for f in reference[rid]] for kind, rid in (("run", 1), ("inspect", 2))}
    assert any(h["type"] == "step" for h, _ in reference["run"]) and reference["inspect"], reference

    # 500 lines, pipelined.
    lines, jobs, kinds, cancels, unknown_cancels, unreadable = [], set(), {}, 0, 0, 0
    rid = 100
    for i in range(500):
        rid += 1
        if i % 100 == 0:
            lines.append(line(dict(run, request_id=rid)))
            jobs.add(rid); kinds[rid] = "run"
        elif i == 250:
            lines.append(line(dict(diagnose, request_id=rid)))
            jobs.add(rid); kinds[rid] = "diagnose"
        elif i % 200 == 1:  # the run just sent: active or still queued
            lines.append(line({"type": "cancel", "request_id": rid - 1})); cancels += 1
        elif i % 37 == 0:  # an inspect sent a few lines before: queued, or already answered
            lines.append(line({"type": "cancel", "request_id": rid - 3})); cancels += 1
        elif i % 41 == 0:
            lines.append(line({"type": "cancel", "request_id": 10 ** 9 + i})); unknown_cancels += 1
        elif i % 43 == 0:
            lines.append(b'{"type": "inspect", "request_id": ' + str(rid).encode() + b',,}\n'); unreadable += 1
        elif i % 47 == 0:
            lines.append(line({"type": "rerun", "request_id": rid}))
            jobs.add(rid); kinds[rid] = "malformed"
        else:
            lines.append(line(dict(inspect, request_id=rid)))
            jobs.add(rid); kinds[rid] = "inspect"
    frames, code = serve(binary, lines)
    assert code == 0, f"serve exited {code}"
    terminal, records = by_request(frames, jobs)

    failures = []
    for job in sorted(jobs):
        replies = terminal.get(job, [])
        if len(replies) != 1:
            failures.append(f"request {job} ({kinds[job]}): {len(replies)} terminal replies: {replies}")
    unexpected = set(terminal) - jobs - {-1}
    if unexpected:
        failures.append(f"terminal replies to ids never sent: {sorted(unexpected)}")
    if len(terminal.get(-1, [])) != unreadable:
        failures.append(f"{len(terminal.get(-1, []))} errors under -1 for {unreadable} unreadable lines")
    compared = {"run": 0, "inspect": 0}
    for job, got in records.items():
        if kinds[job] in compared and terminal[job][0]["type"] == "done":
            if [stable(f) for f in got] != reference[kinds[job]]:
                failures.append(f"request {job} ({kinds[job]}): its records differ from the request served alone")
            compared[kinds[job]] += 1
    if compared["inspect"] < 300:
        failures.append(f"only {compared['inspect']} inspects compared")

    # A shutdown with requests still queued: each is answered, then the server exits.
    queued = list(range(1, 31))
    frames, code = serve(binary, [line(dict(inspect, request_id=r)) for r in queued] + [line({"type": "shutdown"})])
    shut, _ = by_request(frames, set(queued))
    if code != 0:
        failures.append(f"serve exited {code} after shutdown")
    for r in queued:
        if len(shut.get(r, [])) != 1:
            failures.append(f"request {r} before shutdown: {len(shut.get(r, []))} terminal replies")

    done = sum(1 for job in jobs if terminal.get(job, [{}])[0].get("type") == "done")
    print(f"{len(lines)} pipelined lines: {len(jobs)} requests ({done} done, {len(jobs) - done} errors), {cancels} "
          f"cancels, {unknown_cancels} of unknown ids, {unreadable} unreadable; records equal to the request served "
          f"alone for {compared['run']} runs and {compared['inspect']} inspects; {len(queued)} queued requests "
          f"answered at shutdown")
    if failures:
        print("\n".join(failures[:40]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
