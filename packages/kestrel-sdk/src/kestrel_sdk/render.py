"""``render_frame``: the human rendering of a frame. (To be implemented.)"""

from __future__ import annotations

from kestrel_protocol import SessionFrame

__all__ = ["render_frame"]


def render_frame(frame: SessionFrame) -> str:
    """A compact, human-readable rendering of a frame; callers choose to use it."""
    raise NotImplementedError("render_frame is being built")
