"""What a sealed scenario's frames look like when served: no ``clock.remaining``.

A frame says how many bars remain on the tape, which tells its length: a sealed
scenario's frames are served without it (by the step, the frame and history tools,
artifact reads and proofs). A session opened while its scenario is sealed builds its
frames without it (``SessionEngine(sealed=True)``), so its roots bind what is served and
no value of ``remaining`` tried against a root matches; a replay takes the form from the
chain's first root (:mod:`.engine.chain`). Stripping it here is then a no-op; it matters
for a session opened unsealed and served sealed later, whose roots, made while the tape
was public, still cover the whole frame (its proof's ``head`` may omit
``clock.remaining``, which verification allows).
"""

from __future__ import annotations

import re
from typing import Any, Final

from kestrel_protocol import Clock, History, SessionFrame

__all__ = [
    "sealed_frame",
    "sealed_frame_data",
    "sealed_frame_text",
    "sealed_history",
]

_REMAINING: Final = re.compile(r',"remaining":[0-9]+,"time":')
"""A frame's ``clock.remaining`` in its canonical text (the clock's members in order: bar,
remaining, time); nothing else matches: a quote inside a string is escaped, and a key
that is a symbol or an id is followed by an object or a string, not by digits."""


def sealed_frame_text(text: str) -> str:
    """A frame's canonical text without ``clock.remaining`` (the same text when it has
    none)."""
    return _REMAINING.sub(',"time":', text, count=1)


def sealed_frame(frame: SessionFrame) -> SessionFrame:
    """``frame`` without ``clock.remaining``."""
    clock = Clock(bar=frame.clock.bar, time=frame.clock.time)
    return frame.model_copy(update={"clock": clock})


def sealed_history(history: History) -> History:
    clock = Clock(bar=history.clock.bar, time=history.clock.time)
    return history.model_copy(update={"clock": clock})


def sealed_frame_data(data: dict[str, Any]) -> dict[str, Any]:
    """A stored object as JSON data: a frame's without ``clock.remaining``, any other
    as it is."""
    clock = data.get("clock")
    if data.get("kind") != "kestrel.frame" or not isinstance(clock, dict):
        return data
    return {**data, "clock": {k: v for k, v in clock.items() if k != "remaining"}}
