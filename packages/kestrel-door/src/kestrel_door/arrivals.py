"""The order of events on a forward scenario: when each submission reached the door.

A forward scenario's tape grows while sessions trade on it (``kestrel-door feed``). A
replay proves what a session did with the bars it was shown; only the door can say
that it decided before the next bar existed. So, for every submission to a session on a
forward scenario, the door reads its own clock (:func:`door_time`) before the runtime
sees the call, and once the runtime has accepted it notes (seq, that time, the clock bar
the submission left the session at) in its records (``DoorRecords.add_arrival``, shared
by replicas on PostgreSQL), outside every root. When it signs the session's grade
(:mod:`.attest`), :func:`forward_submissions` pairs each submission with the time the
bar it traded into (the clock at submission + 1; for a submission that advanced from the
declared prefix into the window, the window's first bar) was published, as
:class:`ForwardFeeds` (the composition root's view of the runtime's feeds) tells it.
A session that traded the tape only once it was complete (:func:`replayed`) is a replay
of published bars, not a forward run: its statement says ``forward: false``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from kestrel_protocol.store_feed import Arrival

__all__ = ["ForwardFeeds", "door_time", "forward_submissions", "replayed"]


def door_time() -> str:
    """The door's clock, RFC 3339 UTC to the microsecond: when a bar was published or a
    submission arrived (bars may come every few milliseconds)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@runtime_checkable
class ForwardFeeds(Protocol):
    """What the door asks of the runtime's forward tapes."""

    def is_forward(self, scenario_id: str) -> bool:
        """Whether ``scenario_id`` (as served) is a forward scenario."""
        ...

    def published(self, scenario_id: str) -> Mapping[int, str]:
        """Each bar's index -> when it was published (``""`` for a bar of the declared
        prefix, published before the window)."""
        ...

    def edge(self, scenario_id: str) -> tuple[int, str]:
        """How many bars the tape of ``scenario_id`` holds as published (the declared
        prefix's too) and the tape root of those bars (of their canonical text)."""
        ...

    def frozen(self, scenario_id: str) -> bool:
        """Whether the feed of ``scenario_id`` is frozen (its tape takes no more bars)."""
        ...


def forward_submissions(
    arrivals: list[Arrival], published: Mapping[int, str], pentads: int
) -> list[dict[str, Any]]:
    """The statement's ``submissions`` for a session of ``pentads`` submissions: for seq
    1 … ``pentads``, when it arrived, the bar it traded into (the clock before it + 1; a
    session opens at bar 0) and when that bar was published. A submission that advanced
    from the declared prefix into bars published during the window is its decision
    about the first of them: that is its bar. A member the door cannot tell is absent:
    ``arrivedAt`` without an arrival noted for the seq, ``bar`` without the previous
    seq's clock, ``barPublishedAt`` for a bar of the prefix or one never published."""
    by_seq = {arrival.seq: arrival for arrival in arrivals}
    listed: list[dict[str, Any]] = []
    for seq in range(1, pentads + 1):
        entry: dict[str, Any] = {"seq": seq}
        arrival = by_seq.get(seq)
        if arrival is not None:
            entry["arrivedAt"] = arrival.arrived_at
        before = 0 if seq == 1 else getattr(by_seq.get(seq - 1), "clock", None)
        if before is not None:
            reached = before + 1 if arrival is None else max(before + 1, arrival.clock)
            bar = next((k for k in range(before + 1, reached + 1) if published.get(k)), before + 1)
            entry["bar"] = bar
            if published.get(bar):
                entry["barPublishedAt"] = published[bar]
        listed.append(entry)
    return listed


def replayed(submissions: list[dict[str, Any]], published: Mapping[int, str], frozen: bool) -> bool:
    """Whether a session whose statement lists ``submissions`` traded the tape only once
    it was complete: its feed ``frozen``, a bar published during the window, and each
    submission arrived (as the door noted it) after the last such bar was published.
    Judged by when each decision was made, not by when the proof is asked: a session
    that made any decision while a bar was still to come is a forward run, its late
    decisions named by ``verify --trust``."""
    try:  # times the door's clock wrote (an operator's own clock may write others)
        times = [datetime.fromisoformat(at) for at in published.values() if at]
        if not (frozen and times and submissions):
            return False
        return all(
            "arrivedAt" in entry and max(times) < datetime.fromisoformat(entry["arrivedAt"])
            for entry in submissions
        )
    except (ValueError, TypeError):  # a time that reads as none: not shown to be a replay
        return False
