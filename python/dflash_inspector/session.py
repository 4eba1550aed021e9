"""Reading a .dfi session (one SQLite file) without the engine.

Every table comes back as a pandas DataFrame when pandas is installed, else as a list of dicts
(pass as_frame=True or False to choose); values are decoded as `dflash-eval export` writes them:
arrays as lists, enums by name, raw token bytes as bytes, JSON columns as text.
"""

import sqlite3
from collections import defaultdict
from pathlib import Path

from ._schema import APPLICATION_ID, SCHEMA_VERSION, TABLES, SessionError, decode, select_sql

_SQLITE_HEADER = b"SQLite format 3\x00"


def _frame(rows, as_frame):
    if as_frame is False:
        return rows
    try:
        import pandas
    except ImportError:
        if as_frame:
            raise ImportError("as_frame=True needs pandas (pip install pandas)") from None
        return rows
    return pandas.DataFrame.from_records(rows)


class Session:
    """An open session file: `with Session("eval.dfi") as s: s.runs()`."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            with open(self.path, "rb") as f:
                header = f.read(len(_SQLITE_HEADER))
        except OSError as e:
            raise SessionError(f"{self.path}: cannot read: {e.strerror}") from None
        if header != _SQLITE_HEADER:
            raise SessionError(f"{self.path}: not an SQLite file, so not a DFlash Inspector session")
        # Read-only: a reader never changes a session, even one a writer still appends to.
        self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            self.version = self._check()
        except Exception:
            self._db.close()
            raise

    def _check(self):
        app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
        if app_id != APPLICATION_ID:
            raise SessionError(f"{self.path}: not a DFlash Inspector session (application_id {app_id:#x})")
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise SessionError(f"{self.path}: written by a newer DFlash Inspector (schema version {version}; "
                               f"this reader reads up to {SCHEMA_VERSION})")
        if version < 1:
            raise SessionError(f"{self.path}: session schema version {version} is invalid")
        present = {r[0] for r in self._db.execute("SELECT name FROM sqlite_schema WHERE type='table'")}
        for table in TABLES:
            if table not in present:
                raise SessionError(f"{self.path}: session has no table '{table}'")
        return version

    def close(self):
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- the record tables -----------------------------------------------------------------

    def records(self, table, where="", params=(), order=""):
        """Every row of one record table (runs, prompts, steps, trees, statistics, tensors,
        token_strings, annotations) as dicts, decoded; `where` is SQL over its columns."""
        if table not in TABLES:
            raise KeyError(f"no record table '{table}' (tables: {', '.join(sorted(TABLES))})")
        t = TABLES[table]
        # Columns a later schema version added read as their older value in an older file,
        # so a filter on them must see the same values: filter the derived rows.
        sql = f"SELECT * FROM ({select_sql(t, self.version)})"
        if where:
            sql += f" WHERE {where}"
        if order:
            sql += f" ORDER BY {order}"
        rows = []
        for values in self._db.execute(sql, params):
            where_ = f"{self.path}: {table}"
            rows.append({c.name: decode(c, v, where_) for c, v in zip(t.columns, values)})
        return rows

    def runs(self, as_frame=None):
        return _frame(self.records("runs", order="run_id"), as_frame)

    def prompts(self, run_id=None, as_frame=None):
        return _frame(self._of_run("prompts", run_id, "run_id, prompt_id"), as_frame)

    def steps(self, run_id=None, as_frame=None):
        return _frame(self._of_run("steps", run_id, "step_id"), as_frame)

    def trees(self, as_frame=None):
        return _frame(self.records("trees", order="step_id"), as_frame)

    def statistics(self, run_id=None, as_frame=None):
        """Hidden-state statistics (hidden.<tensor>.<stat>), parity and cost records."""
        return _frame(self._of_run("statistics", run_id, "run_id, step_id, name, layer, head"), as_frame)

    def hidden_statistics(self, run_id=None, as_frame=None):
        rows = [r for r in self._of_run("statistics", run_id, "run_id, step_id, name, layer, head")
                if r["name"].startswith("hidden.")]
        return _frame(rows, as_frame)

    def tensors(self, run_id=None, as_frame=None):
        """The stored tensors' descriptions (their zstd tiles are not decoded here)."""
        return _frame(self._of_run("tensors", run_id, "tensor_id"), as_frame)

    def token_strings(self, as_frame=None):
        return _frame(self.records("token_strings", order="token_id"), as_frame)

    def annotations(self, as_frame=None):
        return _frame(self.records("annotations", order="annotation_id"), as_frame)

    def diagnoses(self, as_frame=None):
        """The runs of `dflash-eval diagnose`: its baseline and one run per hypothesis tested."""
        return _frame(self.records("runs", "hypothesis != ''", order="run_id"), as_frame)

    def imports(self, as_frame=None):
        """Runs imported from another engine's log (`dflash-eval import`)."""
        return _frame(self.records("runs", "origin != ''", order="run_id"), as_frame)

    def _of_run(self, table, run_id, order):
        if run_id is None:
            return self.records(table, order=order)
        return self.records(table, "run_id = ?", (int(run_id),), order)

    # --- figures derived from the steps, as the engine's summary computes them ---------------

    def tau(self, run_id=None, as_frame=None):
        """Per recorded run and step mode: tau in the z-lab convention (the mean over prompts of
        each response's mean acceptance length, the length being the step's counted length when
        a budget or stop token cut it, else accepted drafts + 1) and vLLM's (pooled over steps)."""
        lengths = defaultdict(lambda: defaultdict(list))
        for s in self.steps(run_id, as_frame=False):
            length = s["counted_length"] if s["counted_length"] > 0 else s["accepted_count"] + 1
            lengths[(s["run_id"], s["mode"])][s["prompt_id"]].append(length)
        rows = []
        for (run, mode), by_prompt in sorted(lengths.items()):
            pooled = [x for v in by_prompt.values() for x in v]
            rows.append({"run_id": run, "mode": mode, "prompts": len(by_prompt), "steps": len(pooled),
                         "tau": sum(sum(v) / len(v) for v in by_prompt.values()) / len(by_prompt),
                         "tau_vllm": sum(pooled) / len(pooled)})
        return _frame(rows, as_frame)

    def per_slot_acceptance(self, run_id=None, as_frame=None):
        """Per recorded run, step mode and draft slot (1-based): the fraction of steps whose slot
        was accepted (vLLM's per-position acceptance rate) and the conditional
        P(slot accepted | every earlier slot accepted)."""
        blocks = {r["run_id"]: r["block_size"] for r in self.records("runs")}
        drafts = defaultdict(list)
        for s in self.steps(run_id, as_frame=False):
            length = s["counted_length"] if s["counted_length"] > 0 else s["accepted_count"] + 1
            drafts[(s["run_id"], s["mode"])].append(length - 1)
        rows = []
        for (run, mode), accepted in sorted(drafts.items()):
            previous = len(accepted)
            for slot in range(1, blocks[run]):
                reached = sum(1 for a in accepted if a >= slot)
                rows.append({"run_id": run, "mode": mode, "slot": slot, "steps": len(accepted), "accepted": reached,
                             "rate": reached / len(accepted),
                             "conditional": reached / previous if previous else float("nan")})
                previous = reached
        return _frame(rows, as_frame)
