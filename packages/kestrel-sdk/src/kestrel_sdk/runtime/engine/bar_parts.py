"""The frame parts of a bar (its bars, clock and marks, before and after the events; its
time; its texts for an object or values asked), written once for every session of a
scenario in the process (a training loop's episodes replay one tape): see
:meth:`.frame.FrameBuilder._marks_at`."""

from __future__ import annotations

from typing import Final

from ..catalog.model import LoadedScenario
from .frame_models import Bars
from .per_scenario import Bounded, PerScenario

__all__ = ["BARS_MAX", "BarParts", "bar_parts"]

BarParts = tuple[str, str, str, tuple[int, Bars, dict[str, str]]]
"""A bar's parts before and after the events, its time, and (bar, texts, closes)."""

BARS_MAX: Final = 4096
"""The longest tape whose bars' parts are kept (a longer one's would be forgotten before
a session came back to them: none are kept); all are forgotten when there are this many
(a forward tape grown)."""

_SHARED: Final = PerScenario[tuple[Bounded[tuple[int, int], BarParts], ...]](
    lambda loaded: (Bounded(BARS_MAX), Bounded(BARS_MAX))
)
"""Each loaded scenario's parts by (bar, last bar): its unsealed sessions', its sealed ones'."""


def bar_parts(loaded: LoadedScenario, sealed: bool) -> Bounded[tuple[int, int], BarParts] | None:
    """The parts every session of ``loaded`` (sealed or not) shares; ``None`` for a tape
    longer than :data:`BARS_MAX`."""
    if len(loaded.tape) > BARS_MAX:
        return None
    return _SHARED.of(loaded)[sealed]
