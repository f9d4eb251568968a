"""What one caller has seen, for completion: artifact roots and, apart, grade roots.

A face notes every successful tool result; completion of an artifact root or of a
prompt's ``gradeRoot`` then offers the caller's own roots, newest first. Stdio keeps
one per process (one user); the door one per principal, so nobody is offered another
principal's grade. Bounded: a long run must not grow without end.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Final

__all__ = ["Recall"]

_LIMIT: Final = 10_000


class Recall:
    """The roots a caller has been shown, newest last, at most ``limit`` of each kind.

    Noted and read by one face's handlers on its event loop (stdio's session, the door's
    requests for one principal), so no lock: a note is a few lookups on every call."""

    def __init__(self, limit: int = _LIMIT) -> None:
        self.limit = max(1, limit)
        # OrderedDict: dropping the oldest is O(1) (a dict's first key after many
        # deletions at its front is found by scanning past their empty slots)
        self._roots: OrderedDict[str, None] = OrderedDict()
        self._grades: OrderedDict[str, None] = OrderedDict()

    def note(self, structured: Any) -> None:
        """Remember the roots a result names (its own, its record, blotter and pentads)."""
        if not isinstance(structured, dict):
            return
        get = structured.get  # every call's path (an agent's every step): kept short
        root, record, blotter, pentads = (
            get("root"),
            get("record"),
            get("blotterRoot"),
            get("pentads"),
        )
        if root is not None or record is not None or blotter is not None or pentads:
            for found in (root, record, blotter, *(pentads or ())):
                if isinstance(found, str) and found.startswith("sha256:"):
                    _push(self._roots, found, self.limit)
        pentad = get("pentad")
        if isinstance(pentad, dict):  # a submission's response: its pentad's root
            found = pentad.get("root")
            if isinstance(found, str) and found.startswith("sha256:"):
                _push(self._roots, found, self.limit)
        if isinstance(root, str) and get("kind") == "kestrel.grade":
            _push(self._grades, root, self.limit)

    def roots(self) -> list[str]:
        """Every artifact root seen, newest first."""
        return list(reversed(self._roots))

    def grades(self) -> list[str]:
        """The grade roots seen, newest first."""
        return list(reversed(self._grades))


def _push(seen: OrderedDict[str, None], root: str, limit: int) -> None:
    if root in seen:
        seen.move_to_end(root)
        return
    seen[root] = None
    if len(seen) > limit:
        seen.popitem(last=False)
