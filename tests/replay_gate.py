"""An instrument for a door's process: a session's replay held while a read comes for it.

:func:`install` (run in the door's process before it serves) wraps the replay of an
evicted session. Once the door's home holds :data:`ARMED`, the next replay in a worker
thread (a submit's) writes :data:`HELD` and waits until the home holds :data:`RELEASE`;
the next look at a session on the event loop while that replay is held writes
:data:`LOOKED`. That is the instant a read on the loop can lose: its session is being
rebuilt by another thread. The test orders the steps by the files (the door's threads
wait for the test, never for a guessed time), so the interleaving is the same on every
run, however loaded the machine.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from kestrel_sdk.runtime.live import LiveSession, LiveSessions

from tests.session_gate import on_event_loop

__all__ = ["ARMED", "HELD", "LOOKED", "RELEASE", "install"]

ARMED = "replay.armed"
"""The file (in the door's home) that arms the gate for one replay."""
HELD = "replay.held"
"""The file the replay writes once it is held (the test then sends the read)."""
LOOKED = "replay.looked"
"""The file a look at a session on the event loop writes while the replay is held."""
RELEASE = "replay.release"
"""The file the test writes to let the replay go on."""
_PATIENCE_S = 30.0
_POLL_S = 0.01


def install(home: str) -> None:
    """Gate the next armed replay of a session (``home``: the door's)."""
    where = Path(home)
    rebuild, get = LiveSessions._rebuild, LiveSessions.get
    held, released = threading.Event(), threading.Event()

    def gated_rebuild(self: LiveSessions, row: Any) -> LiveSession:
        armed = where / ARMED
        if armed.exists() and not on_event_loop():
            armed.unlink()
            held.set()
            (where / HELD).touch()
            for _ in range(int(_PATIENCE_S / _POLL_S)):  # the test's signal: another process
                if (where / RELEASE).exists():
                    break
                released.wait(_POLL_S)
            released.set()
        return rebuild(self, row)

    def gated_get(self: LiveSessions, principal: str, sid: str) -> LiveSession:
        if held.is_set() and not released.is_set() and on_event_loop():
            (where / LOOKED).touch()
        return get(self, principal, sid)

    LiveSessions._rebuild = gated_rebuild  # type: ignore[method-assign]
    LiveSessions.get = gated_get  # type: ignore[method-assign]
