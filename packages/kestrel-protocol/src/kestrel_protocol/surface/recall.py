"""What one caller has seen, for completion: artifact roots and, apart, grade roots.

A face notes every successful tool result; completion of an artifact root or of a
prompt's ``gradeRoot`` then offers the caller's own roots, newest first. Stdio keeps
one per process (one user); the door one per principal, so nobody is offered another
principal's grade. Bounded: a long run must not grow without end.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Final

__all__ = ["Recall"]

_LIMIT: Final = 10_000


class Recall:
    """The roots a caller has been shown, newest last, at most ``limit`` of each kind."""

    def __init__(self, limit: int = _LIMIT) -> None:
        self.limit = max(1, limit)
        # OrderedDict: dropping the oldest is O(1) (a dict's first key after many
        # deletions at its front is found by scanning past their empty slots)
        self._roots: OrderedDict[str, None] = OrderedDict()
        self._grades: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def note(self, structured: Any) -> None:
        """Remember the roots a result names (its own, its record, blotter and pentads)."""
        if not isinstance(structured, dict):
            return
        get = structured.get  # every call's path (an agent's every step): kept short
        pentad = get("pentad")
        found: list[Any] = [get("root"), get("record"), get("blotterRoot")]
        found += get("pentads") or ()
        if isinstance(pentad, dict):
            found.append(pentad.get("root"))
        grade = found[0] if get("kind") == "kestrel.grade" else None
        with self._lock:
            for root in found:
                if isinstance(root, str) and root.startswith("sha256:"):
                    _push(self._roots, root, self.limit)
            if isinstance(grade, str):
                _push(self._grades, grade, self.limit)

    def roots(self) -> list[str]:
        """Every artifact root seen, newest first."""
        with self._lock:
            return list(reversed(self._roots))

    def grades(self) -> list[str]:
        """The grade roots seen, newest first."""
        with self._lock:
            return list(reversed(self._grades))


def _push(seen: OrderedDict[str, None], root: str, limit: int) -> None:
    if root in seen:
        seen.move_to_end(root)
        return
    seen[root] = None
    if len(seen) > limit:
        seen.popitem(last=False)
