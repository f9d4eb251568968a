"""The process's one copy of each tape, by root: every session on a tape shares its
columns, parsed on the tape's first use (shipped, user or embedded)."""

from __future__ import annotations

import threading

from .model import Tape

__all__ = ["cached_tape", "shared_tape"]

_TAPES: dict[str, Tape] = {}
_TAPES_LOCK = threading.Lock()


def shared_tape(tape: Tape) -> Tape:
    """The process's one copy of a tape with this root (``tape`` if it is the first)."""
    with _TAPES_LOCK:
        return _TAPES.setdefault(tape.root, tape)


def cached_tape(root: str) -> Tape | None:
    """The process's copy of the tape with this root, if one was parsed."""
    with _TAPES_LOCK:
        return _TAPES.get(root)
