"""The order of a forward session's events, as its door's statement signs it.

A statement about a session on a forward scenario (``forward: true``) carries, for every
submission whose bar was published during the window, when it arrived and when its bar
was published: each must have arrived before (:func:`check_order`); the first that did
not is named by its seq. A session that traded the tape only once it was complete
(``forward: false``: a replay of published bars) is said so; each of its submissions must
then have arrived after its bar was published. A statement whose signature fails is said
so, and when the tampered statement's own order names a submission, that one too
(:func:`order_of_tampered`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .attested import NotAttested, statement_text

__all__ = ["check_order", "order_of_tampered"]


def check_order(predicate: Mapping[str, Any], proof: Mapping[str, Any]) -> int | None:
    """How many submissions of a forward session's statement traded into a bar published
    during the window, each having arrived before that bar was published (None for a
    statement that is not ``forward``); for a replay of the complete tape (``forward:
    false``), each having arrived after it. :class:`NotAttested` naming the first
    submission (by seq) that did not, or that the proof does not hold."""
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
        if replay and not published < arrived:
            raise NotAttested(
                named,
                f"a submission made after its bar {entry.get('bar')} was published "
                f"({entry['barPublishedAt']}), as the statement says the session replayed "
                "the complete tape",
                f"submission {seq} arrived at {entry['arrivedAt']}",
            )
        if not replay and not arrived < published:
            raise NotAttested(
                named,
                f"a decision made before its bar {entry.get('bar')} was published "
                f"({entry['barPublishedAt']})",
                f"submission {seq} arrived at {entry['arrivedAt']}",
            )
        decisions += 1
    return decisions


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
