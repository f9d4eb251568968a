"""What ``kestrel-door serve`` says at start of the catalog it serves and what it seals.

An operator who typed ``--seal acme-trnd`` is told at once (a usage error naming the
id, by ``kestrel_door.serve_cli``); one who sealed nothing, or relied on a
``scenario.toml`` that does not say ``sealed = true``, reads it on the door's first
lines rather than in a grade.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["catalog_line", "seal_line"]


def catalog_line(runtime: Any) -> str:
    """The catalog the door serves: its root, and how many scenarios come from where."""
    index, catalog = runtime.index, runtime.catalog()
    loaded = [index.get(i) for i in index.ids()]
    user = sorted({str(s.origin.parent) for s in loaded if s is not None and s.origin})
    mine = sum(1 for s in loaded if s is not None and s.origin is not None)
    where = f"; {mine} from {', '.join(user)}" if user else ""
    return (
        f"kestrel-door: catalog {catalog.root}: {len(loaded)} scenarios "
        f"({len(loaded) - mine} shipped{where})"
    )


def seal_line(runtime: Any, seal: Iterable[str]) -> str:
    """Which scenarios the door seals, each with why (``--seal`` or its scenario.toml);
    ``seal``: the ids ``--seal`` serves (a renamed copy's served id)."""
    flagged = set(seal)
    index = runtime.index
    sealed = [i for i in index.ids() if runtime.sealed(i)]
    if not sealed:
        return "kestrel-door: sealed: none (every scenario's tape is served; --seal ID seals one)"
    named = [f"{i} ({'--seal' if i in flagged else 'its scenario.toml'})" for i in sealed]
    return f"kestrel-door: sealed: {', '.join(named)}"
