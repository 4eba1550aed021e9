#!/usr/bin/env python3
"""The Python session reader against what the C++ writer stored, field by field.

Usage: check_session_reader.py WRITE_EVERY_RECORD WORK_DIR [DFLASH_EVAL DEMO_DIR]

1. write_every_record (tests/core/session) writes a session with every record kind and every
   field set, and the same records as the field tables encode them (dfi::toJson, the stream's
   and the exports' encoding). Every row the reader returns must equal its record: arrays,
   enums by name, raw token bytes (hex in the JSON), JSON columns (embedded in the JSON),
   floats exactly.
2. An older file: the schema-4 columns dropped from a copy and user_version set to 4 read back
   with the values the C++ reader gives them ('' for hypothesis and origin).
3. Files that are not sessions are refused naming the file: not SQLite, another application
   id, a newer schema, a missing table.
4. With the engine: a real demo run read by the reader equals `dflash-eval export` (runs and
   steps), its tau equals `summary --json`'s, and its per-slot acceptance the summary's
   positions.
"""
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import dflash_inspector as dfi

failures = []


def same(expected, got, column, where):
    if column.binary:
        return got.hex() == expected
    if column.json_text and not isinstance(expected, str):
        return (json.loads(got) if got else None) == expected
    if isinstance(expected, float) or isinstance(got, float):
        return got == expected or (math.isnan(got) and math.isnan(expected))
    return got == expected


def check_every_record(writer, work):
    session, written = work / "every.dfi", work / "every.json"
    subprocess.run([writer, str(session), str(written)], check=True)
    expected = json.loads(written.read_text())
    with dfi.Session(session) as s:
        for table, records in expected.items():
            key = dfi._schema.TABLES[table].columns[0].name
            rows = s.records(table)
            if len(rows) != len(records):
                failures.append(f"{table}: {len(rows)} rows read, {len(records)} written")
                continue
            compared = 0
            for record, row in zip(records, rows):
                for column in dfi._schema.TABLES[table].columns:
                    if column.name not in record:
                        failures.append(f"{table}: the writer's JSON has no {column.name}")
                        continue
                    compared += 1
                    if not same(record[column.name], row[column.name], column, table):
                        failures.append(f"{table} {key}={row[key]}: {column.name} read {row[column.name]!r}, "
                                        f"written {record[column.name]!r}")
            print(f"{table}: {len(rows)} rows, {compared} fields equal to what was written")
        import pandas
        frame = s.steps()  # pandas installed: a DataFrame by default, the schema's columns in order
        columns = [c.name for c in dfi._schema.TABLES["steps"].columns]
        if not isinstance(frame, pandas.DataFrame) or list(frame.columns) != columns or len(frame) != len(expected["steps"]):
            failures.append(f"steps as a DataFrame: {type(frame)} {list(getattr(frame, 'columns', []))}")
        elif list(frame["mode"]) != [r["mode"] for r in expected["steps"]]:
            failures.append(f"DataFrame modes {list(frame['mode'])}")
        written_tables = set(expected)
        if written_tables != set(dfi._schema.TABLES):
            failures.append(f"record kinds not written: {set(dfi._schema.TABLES) - written_tables}")
    return session


def check_older_file(session, work):
    older = work / "schema4.dfi"
    shutil.copy(session, older)
    db = sqlite3.connect(older)
    for column in ("hypothesis", "origin"):
        db.execute(f"ALTER TABLE runs DROP COLUMN {column}")
    db.execute("PRAGMA user_version=4")
    db.commit()
    db.close()
    with dfi.Session(older) as s:
        run = s.runs(as_frame=False)[0]
        if s.version != 4 or run["hypothesis"] != "" or run["origin"] != "":
            failures.append(f"schema 4 file: version {s.version}, hypothesis {run['hypothesis']!r}, "
                            f"origin {run['origin']!r}")


def check_refusals(session, work):
    def refused(path, words):
        try:
            dfi.Session(path).close()
            failures.append(f"{path.name} was opened")
        except dfi.SessionError as e:
            if str(path) not in str(e) or words not in str(e):
                failures.append(f"{path.name}: '{e}' does not name the file and say '{words}'")

    text = work / "notes.dfi"
    text.write_text("not a database\n" * 10)
    refused(text, "not an SQLite file")
    for name, sql, words in [("other.dfi", "PRAGMA application_id=1", "application_id 0x1"),
                             ("newer.dfi", f"PRAGMA user_version={dfi.SCHEMA_VERSION + 1}", "newer"),
                             ("tableless.dfi", "DROP TABLE annotations", "no table 'annotations'")]:
        path = work / name
        shutil.copy(session, path)
        db = sqlite3.connect(path)
        db.execute(sql)
        db.commit()
        db.close()
        refused(path, words)


def engine_json(engine, *args):
    return json.loads(subprocess.run([engine, *args], check=True, capture_output=True, text=True).stdout)


def check_demo_run(engine, demo, work):
    os.environ["DFLASH_EVAL"] = engine  # what dfi.evaluate runs
    session = work / "demo.dfi"
    session.unlink(missing_ok=True)
    s = dfi.evaluate(demo / "target", [demo / "drafter-good"], demo / "prompts.jsonl", session, limit=6,
                     max_new_tokens=40, mode=["live", "teacher"], ddtree=4, no_parity=True)
    with s:
        for what in ("runs", "steps"):
            exported = engine_json(engine, "export", "--session", str(session), "--format", "json", "--what", what)
            read = s.runs(as_frame=False) if what == "runs" else s.steps(as_frame=False)
            table = dfi._schema.TABLES[what]
            key = table.columns[0].name  # the export lists steps by run and prompt, the reader by id
            exported.sort(key=lambda e: e[key])
            mismatched = [(e.get(c.name), r[c.name], c.name) for e, r in zip(exported, read) for c in table.columns
                          if c.name in e and not same(e[c.name], r[c.name], c, what)]
            if len(exported) != len(read) or mismatched:
                failures.append(f"export --what {what}: {len(exported)} rows vs {len(read)}; {mismatched[:3]}")
            else:
                print(f"demo {what}: {len(read)} rows equal to dflash-eval export")
        summary = engine_json(engine, "summary", str(session), "--json")
        taus = {(t["run_id"], t["mode"]): t for t in s.tau(as_frame=False)}
        for row in summary["rows"]:
            [run_id] = row["run_ids"]
            mode = "ddtree" if row["mode"].startswith("ddtree") else row["mode"]
            got = taus[(run_id, mode)]
            if abs(got["tau"] - row["tau_reference"]) > 1e-12 or abs(got["tau_vllm"] - row["tau_vllm"]) > 1e-12:
                failures.append(f"tau of run {run_id}: {got} but the summary says {row['tau_reference']}, "
                                f"{row['tau_vllm']}")
            else:
                print(f"demo run {run_id} {mode}: tau {got['tau']:.4f}, vLLM {got['tau_vllm']:.4f} as the summary")
        slots = s.per_slot_acceptance(as_frame=False)
        for p in summary["positions"]:
            mine = [r["rate"] for r in slots if r["run_id"] == p["run_id"] and r["mode"] == p["mode"]]
            if len(mine) != len(p["slot_acceptance"]) or any(abs(a - b) > 1e-12
                                                              for a, b in zip(mine, p["slot_acceptance"])):
                failures.append(f"per-slot acceptance of run {p['run_id']} {p['mode']}: {mine} vs "
                                f"{p['slot_acceptance']}")
        print(f"demo per-slot acceptance: {len(summary['positions'])} run/mode pairs as the summary's positions")


def main():
    writer, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    session = check_every_record(writer, work)
    check_older_file(session, work)
    check_refusals(session, work)
    if len(sys.argv) > 3:
        check_demo_run(sys.argv[3], Path(sys.argv[4]), work)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print("the Python reader read back every record as written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
