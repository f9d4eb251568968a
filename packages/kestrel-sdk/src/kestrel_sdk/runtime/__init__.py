"""The Kestrel runtime: catalog, language, engine, and the service that persists them.

Names are imported on first use so that importing one part (say the language) does not
load the others; ``Runtime`` is the entry point every face uses.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ids import operation_id, session_id
    from .service import DEFAULT_GRADE_BUDGET, Runtime
    from .stores import open_runtime_store
    from .stores.memory import MemoryStore
    from .stores.sqlite import SqliteStore
    from .verify import verify_grade, verify_proof

__all__ = [
    "DEFAULT_GRADE_BUDGET",
    "MemoryStore",
    "Runtime",
    "SqliteStore",
    "open_runtime_store",
    "operation_id",
    "session_id",
    "verify_grade",
    "verify_proof",
]

_WHERE = {
    "DEFAULT_GRADE_BUDGET": ".service",
    "MemoryStore": ".stores.memory",
    "Runtime": ".service",
    "SqliteStore": ".stores.sqlite",
    "open_runtime_store": ".stores",
    "operation_id": ".ids",
    "session_id": ".ids",
    "verify_grade": ".verify",
    "verify_proof": ".verify",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(where, __name__), name)
