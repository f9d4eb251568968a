"""An instrument for a door's process: one interleaving of a session's lock, made certain.

:func:`install` (run in the door's process before it serves) wraps the lock of every
session the runtime keeps. Once the door's home holds :data:`ARMED`, the next submit (a
worker thread) to reach a session's lock first writes :data:`WAITING` and waits there; the
next read on the event loop to reach the lock writes :data:`LOOKED`, lets the submit take
the lock and waits until it has; then each goes on. That is the instant a read on the
loop can lose: it found the session free, and a submit took the lock before the read did.
Events, not sleeps (the test waits for the files, the door's threads for each other): the
interleaving is the same on every run, however loaded the machine.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from kestrel_sdk.runtime.live import LiveSession, LiveSessions

__all__ = ["ARMED", "LOOKED", "WAITING", "install", "on_event_loop"]

ARMED = "gate.armed"
"""The file (in the door's home) that arms the gate for one interleaving."""
WAITING = "gate.waiting"
"""The file the submit writes once it waits at the gate (the test then sends the read)."""
LOOKED = "gate.looked"
"""The file the read writes once it reaches the gate (the test then asks the others)."""
_PATIENCE_S = 30.0


def on_event_loop() -> bool:
    """Whether this call runs on a thread's event loop (the door's), not a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _GatedLock:
    """A session's lock that, while armed, orders one submit after one read's look."""

    def __init__(self, lock: threading.Lock, home: Path, gate: dict[str, threading.Event]) -> None:
        self._lock = lock
        self._home = home
        self._gate = gate

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        armed = self._home / ARMED
        if armed.exists():
            if on_event_loop():  # the read: let the submit take the lock first
                (self._home / LOOKED).touch()
                self._gate["looked"].set()
                self._gate["taken"].wait(_PATIENCE_S)
            elif not self._gate["taken"].is_set():  # the submit
                (self._home / WAITING).touch()
                self._gate["looked"].wait(_PATIENCE_S)
                got = self._lock.acquire(blocking, timeout)
                armed.unlink()
                self._gate["taken"].set()
                return got
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def install(home: str) -> None:
    """Gate every session the runtime keeps from now on (``home``: the door's)."""
    keep = LiveSessions._keep
    gate = {"looked": threading.Event(), "taken": threading.Event()}

    def gated_keep(self: LiveSessions, live: LiveSession) -> None:
        if not isinstance(live.lock, _GatedLock):
            gated: Any = _GatedLock(live.lock, Path(home), gate)
            live.lock = gated
        keep(self, live)

    LiveSessions._keep = gated_keep  # type: ignore[method-assign]
