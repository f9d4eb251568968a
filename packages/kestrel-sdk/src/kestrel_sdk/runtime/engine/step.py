"""What a step made: the frame as the engine wrote it (its canonical text; its object
made on first use) and the stand-down, if the session stood down."""

from __future__ import annotations

from typing import Final, final

from kestrel_protocol import SessionFrame, StandDown
from kestrel_protocol.wire import text_builder

from ..frame_values import FrameValues
from .frame import FrameBuilder

__all__ = ["Step"]

_frame_of: Final = text_builder(SessionFrame)


@final
class Step:
    """A frame as the engine wrote it (a plain class: see :class:`.bus.Event`): its
    canonical text, its object made on first use (once: every reader of this frame
    shares it) from the engine's values while it has not moved on, else from the text;
    and the stand-down of the submission that made it, if the session stood down."""

    __slots__ = ("_frame", "_frames", "_version", "stand_down", "text")

    def __init__(
        self,
        text: str,
        frames: FrameBuilder | None = None,
        version: int = 0,
        stand_down: StandDown | None = None,
    ) -> None:
        self.text: Final = text
        self.stand_down: Final = stand_down
        self._frames = frames
        self._version = version
        self._frame: SessionFrame | None = None

    @property
    def frame(self) -> SessionFrame:
        """The frame as an object."""
        frame = self._frame
        if frame is None:
            frames, self._frames = self._frames, None
            made = None if frames is None else frames.model(self._version)
            frame = self._frame = _frame_of(self.text) if made is None else made
        return frame

    def values(self) -> FrameValues:
        """The frame's plain values (no object made while the engine is still at it)."""
        frames = self._frames
        made = None if frames is None else frames.values(self._version)
        return FrameValues.of(self.frame) if made is None else made
