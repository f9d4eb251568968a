"""The Kestrel runtime: catalog, language, engine, and the service that persists them.

Names are imported on first use so that importing one part (say the language) does not
load the others; ``Runtime`` is the entry point every face uses.

The step path runs compiled when a matching mypyc build is there (:mod:`.native`): its
directory goes first on this package's ``__path__`` (and its subpackages') before
anything imports them, and its C dump of protocol objects is installed (:mod:`.dumps`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import native

native.activate(__name__, __path__)
if native.engine() == "compiled":  # its C dump of protocol objects serves every face
    from .dumps import install

    install()

if TYPE_CHECKING:
    from .ids import operation_id, session_id
    from .service import DEFAULT_GRADE_BUDGET, Runtime
    from .sqlite import SqliteStore
    from .stores import open_runtime_store
    from .verify import verify_grade, verify_proof

__all__ = [
    "DEFAULT_GRADE_BUDGET",
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
    "Runtime": ".service",
    "SqliteStore": ".sqlite",
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
