"""What a step made: the frame as the engine wrote it (its canonical text; its object
built from the text on first use) and the stand-down, if the session stood down."""

from __future__ import annotations

from typing import Final, final

from kestrel_protocol import SessionFrame, StandDown
from kestrel_protocol.wire import text_builder

from .frame import FrameBuilder

__all__ = ["Shown", "Step"]

_frame_of: Final = text_builder(SessionFrame)


@final
class Shown:
    """A frame as the engine wrote it: its canonical text, and its object made on first
    use (once: every reader of this frame shares it), from the engine's values while it
    has not moved on, else from the text."""

    __slots__ = ("_frame", "_frames", "_version", "text")

    def __init__(self, text: str, frames: FrameBuilder | None = None, version: int = 0) -> None:
        self.text: Final = text
        self._frames = frames
        self._version = version
        self._frame: SessionFrame | None = None

    @property
    def frame(self) -> SessionFrame:
        frame = self._frame
        if frame is None:
            frames, self._frames = self._frames, None
            made = None if frames is None else frames.model(self._version)
            frame = self._frame = _frame_of(self.text) if made is None else made
        return frame


@final
class Step:
    """What one applied submission produced (a plain class: see :class:`.bus.Event`):
    the new frame and the stand-down if the session stood down."""

    __slots__ = ("shown", "stand_down")

    def __init__(self, shown: Shown, stand_down: StandDown | None) -> None:
        self.shown: Final = shown
        self.stand_down: Final = stand_down

    @property
    def text(self) -> str:
        """The new frame's canonical text."""
        return self.shown.text

    @property
    def frame(self) -> SessionFrame:
        """The new frame, built from its text on first use."""
        return self.shown.frame
