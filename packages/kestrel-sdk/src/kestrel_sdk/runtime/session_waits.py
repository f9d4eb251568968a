"""Whether a call may wait for a session another call is using (its lock held).

A read of a session takes the session's lock (so it never sees a step half made). A call
that runs where waiting would hold up others (on a server's event loop) is made with
:data:`SESSION_WAITS` set to ``False``: meeting the lock held (a submit, perhaps waiting
for the store's write lock), or the session evicted and another thread replaying it, it
raises :class:`SessionBusy` before doing anything, and its
caller runs it again where it may wait (a worker thread). Taking the lock is the check:
no look at the lock beforehand that a submit could make stale in the next instant.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

__all__ = ["SESSION_WAITS", "SessionBusy"]

SESSION_WAITS: Final[ContextVar[bool]] = ContextVar("kestrel_session_waits", default=True)
"""Whether a call in this context waits for a session's lock (by default it does)."""


class SessionBusy(Exception):
    """A session's lock was held when a call that may not wait came for it; nothing done."""
