"""What a step made: the frame as the engine wrote it (its canonical text; its object
built from the text on first use) and the stand-down, if the session stood down."""

from __future__ import annotations

from typing import Final, final

from kestrel_protocol import SessionFrame, StandDown
from kestrel_protocol.wire import text_builder

__all__ = ["Shown", "Step"]

_frame_of: Final = text_builder(SessionFrame)


@final
class Shown:
    """A frame as the engine wrote it: its canonical text, its object built from the
    text on first use (once: every reader of this frame shares it)."""

    __slots__ = ("_frame", "text")

    def __init__(self, text: str) -> None:
        self.text: Final = text
        self._frame: SessionFrame | None = None

    @property
    def frame(self) -> SessionFrame:
        frame = self._frame
        if frame is None:
            frame = self._frame = _frame_of(self.text)
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
