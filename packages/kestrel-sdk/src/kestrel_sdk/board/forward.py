"""Forward runs on the board: sessions that traded a forward tape while it grew.

A door's signed statement about a session on a forward scenario says ``forward: true``
and, per submission, the bar it traded into and, for a bar published after the window
opened, when that bar was published (``barPublishedAt``: its decision is a forward
one; under ``--trust`` every such decision preceded its bar, or the row fails). Such a
run is a different evaluation from a replay of the same tape once frozen (its bars were
known when the agent decided), so the board ranks forward runs apart and shows each
one's window: the times of the first bar a forward decision traded into and of the
session's last bar (the proof's head), and how many forward decisions it made. A
session that traded only once the tape was complete has a statement saying ``forward:
false``: it is one of those replays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..forward_edge import bar_times, embedded_times, member, statement_predicate
from .catalog import BoardCatalog

__all__ = ["ForwardWindow", "forward_window", "tape_times"]


@dataclass(frozen=True, slots=True)
class ForwardWindow:
    """A forward run's window: ``first`` (the time of the first bar a forward decision
    traded into; ``None`` when it made none, or when its tape holding that bar is neither
    embedded, nor fetched from its door, nor in this catalog), ``last`` (the time of its
    last bar) and
    ``decisions`` (its submissions into bars published after they were made)."""

    first: str | None
    last: str | None
    decisions: int

    def to_json(self) -> dict[str, Any]:
        first, last, decisions = self.first, self.last, self.decisions
        return {"forward": True, "first": first, "last": last, "decisions": decisions}

    def __str__(self) -> str:
        if not self.decisions:
            return f"forward, no forward decision (last bar {self.last or '?'})"
        first = self.first or (
            "? (the tape is neither embedded, nor fetched from its door (--trust), "
            "nor in this catalog)"
        )
        return f"forward window {first} to {self.last or '?'}, {self.decisions} decision(s)"


def tape_times(
    data: dict[str, Any], catalog: BoardCatalog, published: str | None = None
) -> tuple[str, ...]:
    """The times of the proof's tape: the embedded one's, else those of ``published``
    (the tape its door publishes, fetched to verify it: its bars up to the signed edge),
    else ``catalog``'s scenario of that id and root (verification found one of them; a
    forward scenario's holds its declared prefix alone)."""
    embedded = embedded_times(data)
    if embedded is not None:
        return embedded
    if published is not None:
        return bar_times(published)
    ref = member(data, "scenario")
    known = catalog.index.get(str(ref.get("id")))
    if known is None or known.scenario.root != ref.get("root"):
        return ()
    return tuple(known.tape.times)


def forward_window(
    data: dict[str, Any], catalog: BoardCatalog | None = None, published: str | None = None
) -> ForwardWindow | None:
    """The window of ``data``'s session when its door's statement says it traded a
    forward tape, else ``None`` (when the proof does not embed its tape, its times are
    those of ``published``, the tape its door publishes as verification fetched it, else
    ``catalog``'s; ``None``: ``KESTREL_CATALOG_PATH``'s)."""
    predicate = statement_predicate(data)
    if predicate.get("forward") is not True:
        return None
    submissions = predicate.get("submissions")
    bars = [
        s["bar"]
        for s in (submissions if isinstance(submissions, list) else [])
        if isinstance(s, dict) and isinstance(s.get("bar"), int) and "barPublishedAt" in s
    ]
    last = member(member(data, "head"), "clock").get("time")
    if not bars:
        return ForwardWindow(None, last if isinstance(last, str) else None, 0)
    times = tape_times(data, catalog if catalog is not None else BoardCatalog(), published)
    first = times[min(bars)] if 0 <= min(bars) < len(times) else None
    return ForwardWindow(first, last if isinstance(last, str) else None, len(bars))
