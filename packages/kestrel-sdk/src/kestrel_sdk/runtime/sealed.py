"""What a sealed scenario's frames look like when served: no ``clock.remaining``.

A frame says how many bars remain on the tape, which tells its length: a sealed
scenario's frames are served without it (by the step, the frame and history tools,
artifact reads and proofs). The frame's root stays the root of the whole frame, so
roots do not depend on sealing, and a replay (which has the tape) recomputes it; a
proof's ``head`` may omit ``clock.remaining``, which its verification allows.
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
