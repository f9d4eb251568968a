"""Where a forward tape ended when the door signed a grade, and a proof whose embedded
tape is not that tape (``kestrel verify --trust`` and the board say it in the same words).

A forward scenario's terms count its declared prefix alone: no frame or root covers the
bars published after it. The door's signed statement says how many bars the tape held
when it signed the grade and the tape root of those bars (``edge``: ``bars``, ``root``,
the sha256 of their canonical tape CSV, as any tape's root). A proof that embeds fewer
bars had its tape cut after its session's last bar; one whose first ``bars`` bars hash
to another root had bars of it swapped (its proof root recomputed: the statement is
outside it). Bars embedded past the edge are no door's word and bound nothing.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kestrel_protocol import root_of_bytes
from kestrel_protocol.quoting import counted

__all__ = [
    "UNCONFIRMED",
    "SignedEdge",
    "bar_times",
    "edge_mismatch",
    "embedded_times",
    "first_bars",
    "member",
    "signed_edge",
    "statement_predicate",
]

_ROOT = re.compile(r"sha256:[0-9a-f]{64}")

UNCONFIRMED = "forward tape unconfirmed"
"""How a result begins to say that a proof's forward tape was checked neither embedded
nor fetched (the reason follows)."""


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


@dataclass(frozen=True, slots=True)
class SignedEdge:
    """Where a forward tape ended when the door signed a grade: ``bars`` published (the
    declared prefix's too) and ``root``, the tape root of those bars."""

    bars: int
    root: str


def signed_edge(data: Mapping[str, Any]) -> SignedEdge | None:
    """Where the forward tape ended when the door signed the grade (its statement's
    ``edge``), or ``None`` when no statement says both how many bars and their root."""
    edge = member(statement_predicate(data), "edge")
    bars, root = edge.get("bars"), edge.get("root")
    if not isinstance(bars, int) or isinstance(bars, bool) or bars < 0:
        return None
    if not isinstance(root, str) or _ROOT.fullmatch(root) is None:
        return None
    return SignedEdge(bars, root)


def bar_times(tape: str) -> tuple[str, ...]:
    """The bar times of ``tape`` (CSV text: a header, then rows whose first column is the
    time), one a bar."""
    times: list[str] = []
    for line in tape.splitlines()[1:]:
        time = line.split(",", 1)[0]
        if line and (not times or times[-1] != time):
            times.append(time)
    return tuple(times)


def embedded_times(data: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The bar times of the tape the proof embeds, or ``None`` when it embeds none."""
    tape = member(data, "embedded").get("tape")
    return bar_times(tape) if isinstance(tape, str) else None


def first_bars(tape: str, bars: int) -> str:
    """The first ``bars`` bars of ``tape`` (its header and their rows): their tape root
    is the root of this text."""
    lines = tape.splitlines(keepends=True)
    kept, times = lines[:1], 0
    for line in lines[1:]:
        time = line.split(",", 1)[0]
        if kept[1:] and kept[-1].split(",", 1)[0] == time:
            kept.append(line)
            continue
        if times == bars:
            break
        times += 1
        kept.append(line)
    return "".join(kept)


def edge_mismatch(data: Mapping[str, Any]) -> str | None:
    """Why the forward tape the proof embeds is not the tape as the door's statement says
    it stood when the grade was signed (fewer bars: cut; other bars up to the edge:
    altered), or None (no statement's edge, no embedded tape, or that tape)."""
    edge, times = signed_edge(data), embedded_times(data)
    if edge is None or times is None:
        return None
    if len(times) < edge.bars:
        return (
            f"the embedded tape holds {counted(len(times), 'bar')}; the door's statement says "
            f"{edge.bars} were published when the grade was signed: the tape was cut"
        )
    root = root_of_bytes(first_bars(str(member(data, "embedded")["tape"]), edge.bars).encode())
    if root != edge.root:
        return (
            f"the embedded tape's first {edge.bars} bars have root {root}; the door's "
            f"statement says the {edge.bars} published when the grade was signed have root "
            f"{edge.root}: the tape was altered"
        )
    return None
