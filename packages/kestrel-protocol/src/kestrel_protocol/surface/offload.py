"""When a call is worth a worker thread: the offload predicates of the tools that
mostly run on the caller's thread (see :class:`~.declare.Binding`).

A worker-thread hop costs ~100-200 us; a short submit or a small blotter costs less
than that, so they run directly, and only the calls that may take long (a submit that
advances thousands of bars or holds hundreds of lines, a large blotter) take a thread.
Where a call runs never changes its result.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["DIRECT_BLOTTER", "large_blotter", "long_submit"]

_HEAVY_ADVANCE: Final = re.compile(r"(?im)^\s*advance\s+(?:to\b|(\d{4,}))")
_HEAVY_LINES: Final = 200
_WAITS: Final = re.compile(r"(?i)\bwait\b")
_SEEN: dict[str, bool] = {}
_SEEN_MAX: Final = 512

DIRECT_BLOTTER: Final = 256
"""Orders plus fills up to which a blotter is built on the caller's thread: a rebuild
costs ~10 us per entry (a few ms at this size), a worker-thread hop ~100-200 us."""


def _heavy(source: str) -> bool:
    """Whether a submit of ``source`` may take long enough to be worth a worker thread.

    An agent repeats a handful of sources, so short ones are answered from memory.
    """
    if len(source) < 12:
        return False
    seen = _SEEN.get(source)
    if seen is not None:
        return seen
    heavy = source.count("\n") >= _HEAVY_LINES or any(
        m.group(1) is None or int(m.group(1)) >= 2000 for m in _HEAVY_ADVANCE.finditer(source)
    )
    if len(source) <= 256:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.clear()
        _SEEN[source] = heavy
    return heavy


def long_submit(runtime: Any, principal: str, arguments: Any) -> bool:
    """A submit that advances many bars, holds many lines or may wait for a forward
    tape's bar (a ``wait`` argument or statement: never on the caller's event loop)."""
    source: str = arguments.source
    if getattr(arguments, "wait", None) is not None or _WAITS.search(source):
        return True
    return len(source) >= 12 and _heavy(source)


def large_blotter(runtime: Any, principal: str, arguments: Any) -> bool:
    """A blotter of more than :data:`DIRECT_BLOTTER` orders and fills (or of unknown size)."""
    size = runtime.blotter_size(principal, arguments.session_id)
    return size is None or size > DIRECT_BLOTTER
