"""The order of events on a forward scenario: when each submission reached the door.

A forward scenario's tape grows while sessions trade on it (``kestrel-door feed``). A
replay proves what a session did with the bars it was shown; only the door can say
that it decided before the next bar existed. So, for every submission to a session on a
forward scenario, the door reads its own clock (:func:`door_time`) before the runtime
sees the call, and once the runtime has accepted it notes (seq, that time, the clock bar
the submission left the session at) in its records (``DoorRecords.add_arrival``, shared
by replicas on PostgreSQL), outside every root. When it signs the session's grade
(:mod:`.attest`), :func:`forward_submissions` pairs each submission with the times
between which the bar it traded into (the clock at submission + 1; for a submission that
advanced from the declared prefix into the window, the window's first bar) became
visible: its clock read before the append's commit (``barPublishedAt``) and after it
(``barVisibleBy``), as :class:`ForwardFeeds` (the composition root's view of the
runtime's feeds) tells them. A session that traded the tape only once it was complete
(:func:`replayed`) is a replay of published bars, not a forward run: its statement says
``forward: false``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from kestrel_protocol.store_feed import Arrival

__all__ = ["ForwardFeeds", "Stamps", "door_time", "forward_submissions", "replayed"]

Stamps = tuple[str, str]
"""When a bar was published: the door's clock read as the last thing before the commit
that made it visible, and as the first thing after it (``("", "")`` for a bar of the
declared prefix, published before the window; the second ``""`` while it is not known)."""


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

    def published(self, scenario_id: str) -> Mapping[int, Stamps]:
        """Each bar's index -> when it was published (:data:`Stamps`)."""
        ...

    def edge(self, scenario_id: str) -> tuple[int, str]:
        """How many bars the tape of ``scenario_id`` holds as published (the declared
        prefix's too) and the tape root of those bars (of their canonical text)."""
        ...

    def frozen(self, scenario_id: str) -> bool:
        """Whether the feed of ``scenario_id`` is frozen (its tape takes no more bars)."""
        ...


def forward_submissions(
    arrivals: list[Arrival], published: Mapping[int, Stamps], pentads: int
) -> list[dict[str, Any]]:
    """The statement's ``submissions`` for a session of ``pentads`` submissions: for seq
    1 … ``pentads``, when it arrived, the bar it traded into (the clock before it + 1; a
    session opens at bar 0) and when that bar was published (before its commit, and
    visible by). A submission that advanced from the declared prefix into bars published
    during the window is its decision about the first of them: that is its bar. A member
    the door cannot tell is absent: ``arrivedAt`` without an arrival noted for the seq,
    ``bar`` without the previous seq's clock, ``barPublishedAt`` for a bar of the prefix
    or one never published, ``barVisibleBy`` where the store holds no read after the
    commit (a bar stored before it kept one, or whose append stopped after its commit)."""
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
            bar = next((k for k in range(before + 1, reached + 1) if _at(published, k)), before + 1)
            entry["bar"] = bar
            at, visible_by = published.get(bar, ("", ""))
            if at:
                entry["barPublishedAt"] = at
                if visible_by:
                    entry["barVisibleBy"] = visible_by
        listed.append(entry)
    return listed


def _at(published: Mapping[int, Stamps], bar: int) -> str:
    """When ``bar`` was published (before its commit), ``""`` for one of the prefix."""
    return published.get(bar, ("", ""))[0]


def replayed(
    submissions: list[dict[str, Any]], published: Mapping[int, Stamps], frozen: bool
) -> bool:
    """Whether a session whose statement lists ``submissions`` traded the tape only once
    it was complete: its feed ``frozen``, a bar published during the window, and each
    submission arrived (as the door noted it) after every such bar was visible (its
    clock read after the commit; a bar without that read shows no replay). Judged by
    when each decision was made, not by when the proof is asked: a session that made any
    decision while a bar was still to come, or may have been, is a forward run, its
    decisions checked by ``verify --trust``."""
    try:  # times the door's clock wrote (an operator's own clock may write others)
        window = [visible_by for at, visible_by in published.values() if at]
        if not all(window):
            return False
        times = [datetime.fromisoformat(visible_by) for visible_by in window]
        if not (frozen and times and submissions):
            return False
        return all(
            "arrivedAt" in entry and max(times) < datetime.fromisoformat(entry["arrivedAt"])
            for entry in submissions
        )
    except (ValueError, TypeError):  # a time that reads as none: not shown to be a replay
        return False
