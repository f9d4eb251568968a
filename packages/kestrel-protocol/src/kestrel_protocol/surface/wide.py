"""A frame of many symbols as a model reads it: tables, one row a line.

The one-line sections of :func:`~.compact.frame_text` suit a frame of a few symbols; at
a basket's width (20 stocks and an index) its bars line alone runs past a thousand
characters and its marks repeat every close. A frame of more than :data:`WIDE_SYMBOLS`
symbols is written instead as a header line and rows: the clock bar of each symbol (its
close is the mark, so no marks line), each position, each open order, each event (the
``accepted`` events of one bar ten to a line, as they carry only an order and a quantity).
Every row is short, and the text grows by about one row per symbol, position, order and
event: at 20 symbols it stays a few thousand characters, no line over a hundred or so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from itertools import groupby
from typing import Any, Final

__all__ = ["WIDE_SYMBOLS", "wide_frame_text"]

WIDE_SYMBOLS: Final = 4
"""A frame of more symbols than this is written as tables (fewer keep their one-line
sections, so their text is unchanged)."""

_ACCEPTED_PER_ROW: Final = 10
Data = Mapping[str, Any]


def _bar_row(symbol: str, b: Data) -> str:
    return f"{symbol} {b['open']} {b['high']} {b['low']} {b['close']} {b['volume']}"


def _position_row(p: Data) -> str:
    return f"{p['symbol']} {p['qty']} {p['avgPrice']} {p['unrealized']}"


def _events(events: Iterable[Data], event: Callable[[Data], str]) -> list[str]:
    rows: list[str] = []
    for (bar, kind), group in groupby(events, key=lambda e: (e["bar"], e["type"])):
        if kind != "accepted":
            rows.extend(event(e) for e in group)
            continue
        accepted = [f"{e['order']} {e['qty']}" for e in group]
        for start in range(0, len(accepted), _ACCEPTED_PER_ROW):
            chunk = accepted[start : start + _ACCEPTED_PER_ROW]
            rows.append(f"bar {bar} accepted " + ", ".join(chunk))
    return rows


def _section(title: str, rows: list[str]) -> str:
    return f"{title}: none" if not rows else "\n".join((f"{title}:", *rows))


def wide_frame_text(
    frame: Data, head: str, account: str, order: Callable[[Data], str], event: Callable[[Data], str]
) -> str:
    """``frame`` as tables under its ``head`` line, with its ``account`` line; ``order``
    and ``event`` write one open order and one event as the one-line layout does."""
    bars = frame.get("bars") or {}
    positions = frame["positions"]
    return "\n".join(
        (
            head,
            _section(
                "bars (symbol open high low close volume; the close is the mark)",
                [_bar_row(s, b) for s, b in bars.items()],
            ),
            account,
            _section(
                "positions (symbol qty avgPrice unrealized)", [_position_row(p) for p in positions]
            ),
            _section("orders", [order(o) for o in frame["orders"]]),
            _section("events", _events(frame["events"], event)),
        )
    )
