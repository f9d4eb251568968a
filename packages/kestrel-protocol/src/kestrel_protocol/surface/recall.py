"""What one caller has seen, for completion: artifact roots and, apart, grade roots.

A face notes every successful tool result; completion of an artifact root or of a
prompt's ``gradeRoot`` then offers the caller's own roots, newest first. Stdio keeps
one per process (one user); the door one per principal, so nobody is offered another
principal's grade. Bounded: a long run must not grow without end.

A note is made on every call (an agent's every step) and read only when a client asks
for completion, so a note only appends the roots it finds, and the order and limit are
worked out when they are read: the roots seen, each at its newest place, the newest
``limit`` of them (what moving a root seen again to the end and dropping the oldest on
every note would hold). The list is cut back to that whenever it doubles the limit.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["Recall"]

_LIMIT: Final = 10_000


class Recall:
    """The roots a caller has been shown, newest first, at most ``limit`` of each kind.

    Noted and read by one face's handlers on its event loop (stdio's session, the door's
    requests for one principal), so no lock: a note is a few lookups and an append."""

    def __init__(self, limit: int = _LIMIT) -> None:
        self.limit = max(1, limit)
        # each kind's roots as noted, oldest first, a root seen again noted again
        self._roots: list[str] = []
        self._grades: list[str] = []

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
        roots = self._roots
        if root is not None or record is not None or blotter is not None or pentads:
            roots.extend(
                found
                for found in (root, record, blotter, *(pentads or ()))
                if isinstance(found, str) and found.startswith("sha256:")
            )
            if isinstance(root, str) and get("kind") == "kestrel.grade":
                self._grades.append(root)
                _bound(self._grades, self.limit)
        pentad = get("pentad")
        if isinstance(pentad, dict):  # a submission's response: its pentad's root
            found = pentad.get("root")
            if isinstance(found, str) and found.startswith("sha256:"):
                roots.append(found)
        if len(roots) > 2 * self.limit:
            _bound(roots, self.limit)

    def roots(self) -> list[str]:
        """Every artifact root seen, newest first."""
        return _newest(self._roots, self.limit)

    def grades(self) -> list[str]:
        """The grade roots seen, newest first."""
        return _newest(self._grades, self.limit)


def _newest(noted: list[str], limit: int) -> list[str]:
    """The distinct roots of ``noted`` (oldest first), each where it was last noted,
    newest first, at most ``limit``."""
    return list(dict.fromkeys(reversed(noted)))[:limit]


def _bound(noted: list[str], limit: int) -> None:
    """Cut ``noted`` back to what :func:`_newest` reads of it, in place, once it holds
    twice ``limit`` (so a note costs no more than an append, on average)."""
    if len(noted) > 2 * limit:
        noted[:] = reversed(_newest(noted, limit))
