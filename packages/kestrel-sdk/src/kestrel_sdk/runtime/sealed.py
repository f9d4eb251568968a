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

from typing import Any

from kestrel_protocol import Clock, Delivery, History, SessionFrame

__all__ = ["sealed_delivery", "sealed_frame", "sealed_frame_data", "sealed_history"]


def sealed_frame(frame: SessionFrame) -> SessionFrame:
    """``frame`` without ``clock.remaining``."""
    clock = Clock(bar=frame.clock.bar, time=frame.clock.time)
    return frame.model_copy(update={"clock": clock})


def sealed_delivery(delivery: Delivery) -> Delivery:
    return delivery.model_copy(update={"frame": sealed_frame(delivery.frame)})


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
