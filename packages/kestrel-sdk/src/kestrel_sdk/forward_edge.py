"""Where a forward tape ended when the door signed a grade, and a proof whose embedded
tape was cut before it (``kestrel verify --trust`` and the board say it in the same words).

A forward scenario's terms count its declared prefix alone: no frame or root covers the
bars published after it. The door's signed statement says how many bars the tape held
when it signed the grade (``edge.bars``); a proof that embeds fewer had its tape cut after
its session's last bar (its root recomputed: the statement is outside it).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["cut_tape", "embedded_times", "member", "signed_edge", "statement_predicate"]


def member(data: Any, name: str) -> dict[str, Any]:
    """The JSON object under ``name`` in ``data`` (a proof read before its model is
    trusted), or ``{}`` when either is not an object."""
    value = data.get(name) if isinstance(data, Mapping) else None
    return value if isinstance(value, dict) else {}


def statement_predicate(data: Mapping[str, Any]) -> dict[str, Any]:
    """The predicate of the door's statement the proof carries (not checked here:
    :func:`kestrel_sdk.trust.check_attestation` checks it), or ``{}``."""
    payload = member(data, "attestation").get("payload")
    if not isinstance(payload, str):
        return {}
    try:
        statement = json.loads(base64.b64decode(payload, validate=True))
    except (ValueError, binascii.Error):
        return {}
    return member(statement, "predicate")


def signed_edge(data: Mapping[str, Any]) -> int | None:
    """How many bars the forward tape held when the door signed the grade (its
    statement's ``edge.bars``), or ``None`` when no statement says."""
    bars = member(statement_predicate(data), "edge").get("bars")
    return bars if isinstance(bars, int) and not isinstance(bars, bool) else None


def embedded_times(data: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The bar times of the tape the proof embeds, or ``None`` when it embeds none."""
    tape = member(data, "embedded").get("tape")
    if not isinstance(tape, str):
        return None
    times: list[str] = []
    for line in tape.splitlines()[1:]:
        time = line.split(",", 1)[0]
        if line and (not times or times[-1] != time):
            times.append(time)
    return tuple(times)


def cut_tape(data: Mapping[str, Any]) -> str | None:
    """Why the forward tape the proof embeds is not the tape as the door's statement says
    it stood when the grade was signed (fewer bars: cut), or None (no statement's edge,
    no embedded tape, or the whole of it)."""
    edge, times = signed_edge(data), embedded_times(data)
    if edge is None or times is None or len(times) >= edge:
        return None
    return (
        f"the embedded tape holds {len(times)} bars; the door's statement says {edge} "
        "were published when the grade was signed: the tape was cut"
    )
