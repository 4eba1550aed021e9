"""DFlash Inspector sessions in Python: read a .dfi file (runs, steps, per-slot acceptance,
hidden statistics, diagnoses, imports) as pandas DataFrames or plain lists, and run the engine.

    import dflash_inspector as dfi
    with dfi.Session("eval.dfi") as s:
        print(s.tau())                  # tau per run and mode, z-lab's and vLLM's conventions
        print(s.per_slot_acceptance())  # per draft slot: rate and P(accepted | earlier accepted)

The reader needs no engine; its columns come from the engine's own field tables (schema.json).
"""

from ._schema import SCHEMA_VERSION, SessionError
from .engine import EngineError, diagnose, evaluate
from .session import Session

__all__ = ["Session", "SessionError", "SCHEMA_VERSION", "evaluate", "diagnose", "EngineError"]
