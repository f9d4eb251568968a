"""The order of a forward session's events, as its door's statement signs it.

A statement about a session on a forward scenario (``forward: true``) carries, for every
submission whose bar was published during the window, when it arrived and when its bar
was published: the door's clock read as the last thing before the commit that made the
bar visible (``barPublishedAt``) and as the first thing after it (``barVisibleBy``). A
submission that arrived before the first read decided before its bar; one that arrived
after the second decided once the bar could be seen: it is late, and the first such is
named by its seq (:func:`check_order`). One that arrived between the two may have
decided before the bar became visible, or after: its order is unconfirmed
(:data:`~.attested.ORDER_UNCONFIRMED`, in the words a late one is named with), never
counted as on time nor failed (so too after ``barPublishedAt`` where the statement has
no ``barVisibleBy``: the door read no time after the commit). A session that traded the
tape only once it was complete (``forward: false``: a replay of published bars) is said
so; each of its submissions must then have arrived after its bar was visible. A
statement whose signature fails is said so, and when the tampered statement's own order
names a submission, that one too (:func:`order_of_tampered`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .attested import NotAttested, statement_text

__all__ = ["Order", "check_order", "order_of_tampered"]


@dataclass(frozen=True, slots=True)
class Order:
    """What a forward session's statement shows of its order of events: how many of its
    submissions into bars published during the window were each found to precede their
    bar (for a replay, to follow it: ``decisions``), and, for each whose order is
    unconfirmed, what its statement says (``unconfirmed``: ``statement.predicate.
    submissions[seq N]: expected …, found …``)."""

    decisions: int
    unconfirmed: tuple[str, ...] = ()


def check_order(predicate: Mapping[str, Any], proof: Mapping[str, Any]) -> Order | None:
    """The :class:`Order` of a forward session's statement (None for a statement that is
    not ``forward``): each submission into a bar published during the window arrived
    before that bar was published, or its order is unconfirmed; for a replay of the
    complete tape (``forward: false``), each arrived after the bar was visible.
    :class:`NotAttested` naming the first submission (by seq) that did not, or that the
    proof does not hold."""
    if "forward" not in predicate and "submissions" not in predicate:
        if _embeds_forward(proof):  # the door left out the order of a forward session
            raise NotAttested(
                "statement.predicate.forward", "true (the proof's scenario is forward)", "none"
            )
        return None
    field = "statement.predicate.submissions"
    listed = predicate.get("submissions")
    replay = predicate.get("forward") is False
    if not isinstance(predicate.get("forward"), bool) or not isinstance(listed, list):
        raise NotAttested(
            field, "forward: true or false and a list of submissions", "something else"
        )
    held, previous, decisions = len(proof.get("pentads") or ()), 0, 0
    unconfirmed: list[str] = []
    for entry in listed:
        seq = entry.get("seq") if isinstance(entry, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool) or not previous < seq <= held:
            raise NotAttested(
                field,
                f"submissions in seq order, each one of the proof's {held}",
                f"seq {seq!r} after seq {previous}",
            )
        previous = seq
        if "barPublishedAt" not in entry:
            continue  # its bar was of the prefix, or never published: not a forward bar
        named = f"{field}[seq {seq}]"
        published = _instant(entry["barPublishedAt"], f"{named}.barPublishedAt")
        if "arrivedAt" not in entry:
            raise NotAttested(named, "the time the submission arrived", "none recorded")
        arrived = _instant(entry["arrivedAt"], f"{named}.arrivedAt")
        visible = _visible_by(entry, published, named)
        found = f"submission {seq} arrived at {entry['arrivedAt']}"
        if replay and not (visible or published) < arrived:
            raise NotAttested(
                named,
                f"a submission made after its bar {entry.get('bar')} was published "
                f"({_when(entry)}), as the statement says the session replayed "
                "the complete tape",
                found,
            )
        if not replay and not arrived < published:
            expected = (
                f"a decision made before its bar {entry.get('bar')} was published "
                f"({entry['barPublishedAt']})"
            )
            if visible is None or not visible < arrived:  # it may not have been visible
                unconfirmed.append(
                    f"{named}: expected {expected}, found {found}, while the bar was being "
                    f"published ({_when(entry)}): whether it could be seen then is unknown"
                )
                continue
            raise NotAttested(named, expected, f"{found}, once the bar could be seen")
        decisions += 1
    return Order(decisions, tuple(unconfirmed))


def _visible_by(entry: Mapping[str, Any], published: datetime, named: str) -> datetime | None:
    """When the entry's bar was visible by (``barVisibleBy``: ``None`` when not said);
    :class:`NotAttested` for a time before its ``barPublishedAt``."""
    if "barVisibleBy" not in entry:
        return None
    visible = _instant(entry["barVisibleBy"], f"{named}.barVisibleBy")
    if visible < published:
        raise NotAttested(
            f"{named}.barVisibleBy",
            f"a time from its barPublishedAt ({entry['barPublishedAt']})",
            statement_text(entry["barVisibleBy"]),
        )
    return visible


def _when(entry: Mapping[str, Any]) -> str:
    """When an entry's bar was published, as a result says it: both reads of the clock,
    or the first alone when the statement has no second."""
    if "barVisibleBy" not in entry:
        return f"{entry['barPublishedAt']}; the door read no time after its commit"
    return f"{entry['barPublishedAt']}, visible by {entry['barVisibleBy']}"


def _embeds_forward(proof: Mapping[str, Any]) -> bool:
    """Whether the scenario ``proof`` embeds is a forward one."""
    embedded = proof.get("embedded")
    scenario = embedded.get("scenario") if isinstance(embedded, Mapping) else None
    return isinstance(scenario, Mapping) and scenario.get("forward") is not None


def _instant(value: Any, field: str) -> datetime:
    """An RFC 3339 UTC time of a statement."""
    try:
        if isinstance(value, str) and value.endswith("Z"):
            return datetime.fromisoformat(value)
    except ValueError:
        pass
    raise NotAttested(field, "an RFC 3339 UTC time", statement_text(value))


def order_of_tampered(payload: bytes, proof: Mapping[str, Any]) -> str:
    """What a statement whose signature failed says wrongly of its order of events
    (``""`` when it says nothing wrong, or is not a statement)."""
    try:
        predicate = json.loads(payload)["predicate"]
        check_order(predicate, proof)
    except NotAttested as exc:
        return f"; and {exc.field}: expected {exc.expected}, found {exc.found}"
    except (ValueError, KeyError, TypeError):
        return ""
    return ""
