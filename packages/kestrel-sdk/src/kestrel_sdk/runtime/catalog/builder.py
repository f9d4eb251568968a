"""In-memory scenarios from literal bars, for tests of the engine, grading and faces.

The scenario goes through exactly the validation a ``scenario.toml`` and tape CSV get,
so a test cannot build a tape the catalog would refuse.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from .model import LoadedScenario
from .news import News, parse_news
from .objects import scenario_object
from .tapes import HEADER, TapeShape, parse_tape
from .terms import BARS_PER_YEAR, INTERVAL_SECONDS, parse_terms

__all__ = ["BarRow", "build_loaded_scenario", "terms_toml"]

Value = str | int | Decimal
BarRow = Sequence[Value]
"""``(open, high, low, close, volume)`` or ``(time, symbol, open, high, low, close, volume)``."""


def _text(value: Value) -> str:
    return f"{value:f}" if isinstance(value, Decimal) else str(value)


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def terms_toml(
    *,
    scenario_id: str,
    title: str,
    description: str,
    interval: str,
    bars_per_year: int,
    cash: str,
    shortable: bool,
    max_position: int,
    max_drawdown: str,
    fee_bps: str,
    fee_minimum: str,
    participation: str,
    slippage_bps: str,
    instruments: Sequence[Mapping[str, str | int]],
    margin: Mapping[str, str] | None = None,
    forward: bool = False,
) -> str:
    """The ``scenario.toml`` text of these terms (tape file ``tape.csv``; ``forward``: a
    forward scenario's), for :func:`~.terms.parse_terms` to validate exactly as it
    validates a user's file. ``margin``: a margin account's terms by their
    ``scenario.toml`` keys (``leverage``, ``maintenance_margin``, ``borrow_rate``,
    ``cash_rate``)."""
    return "\n".join(
        [
            f"id = {_toml_string(scenario_id)}",
            f"title = {_toml_string(title)}",
            f"description = {_toml_string(description)}",
            'tape = "tape.csv"',
            f"interval = {_toml_string(interval)}",
            f"bars_per_year = {bars_per_year}",
            *(["forward = true"] if forward else []),
            "[account]",
            f"cash = {_toml_string(cash)}",
            f"shortable = {'true' if shortable else 'false'}",
            f"max_position = {max_position}",
            f"max_drawdown = {_toml_string(max_drawdown)}",
            *(
                []
                if margin is None
                else ['kind = "margin"']
                + [f"{key} = {_toml_string(value)}" for key, value in margin.items()]
            ),
            "[fees]",
            f"bps = {_toml_string(fee_bps)}",
            f"minimum = {_toml_string(fee_minimum)}",
            "[fill]",
            f"participation = {_toml_string(participation)}",
            f"slippage_bps = {_toml_string(slippage_bps)}",
            *(
                "[[instruments]]\n"
                + "\n".join(
                    f"{key} = {_toml_string(value) if isinstance(value, str) else value}"
                    for key, value in item.items()
                )
                for item in instruments
            ),
            "",
        ]
    )


def build_loaded_scenario(
    bars: Sequence[BarRow],
    *,
    scenario_id: str = "test-scenario",
    title: str = "Test scenario",
    description: str = "",
    symbol: str = "ACME",
    start: str = "2024-01-01T00:00:00Z",
    interval: str = "1d",
    bars_per_year: int | None = None,
    cash: str = "100000.00",
    shortable: bool = False,
    max_position: int = 100000,
    max_drawdown: str = "1.0",
    fee_bps: str = "10",
    fee_minimum: str = "0.00",
    participation: str = "1",
    slippage_bps: str = "0",
    tick: str = "0.01",
    lot: int | str = 1,
    instruments: Sequence[Mapping[str, str | int]] | None = None,
    margin: Mapping[str, str] | None = None,
    news: Sequence[Mapping[str, str]] | None = None,
    news_in_frame: int | None = None,
) -> LoadedScenario:
    """A validated scenario (``origin`` ``None``) whose tape is the given bars.

    ``bars`` rows are either ``(open, high, low, close, volume)`` for the single symbol
    ``symbol``, timed ``start``, ``start + interval``, ... (``1d`` steps are calendar
    days, so each bar is its own UTC date for ``tif day``), or full rows
    ``(time, symbol, open, high, low, close, volume)`` with every symbol at every time.
    Prices are decimal strings (``"101.25"``), ``Decimal`` or ``int``; volumes ``int``,
    or a decimal string or ``Decimal`` for a fractional one (``"2012.25343589"``).
    Instruments default to one per symbol found with ``tick`` and ``lot``; pass
    ``instruments=[{"symbol": "KAPPA", "tick": "0.05", "lot": 10}, ...]`` to override.
    ``bars_per_year`` defaults by interval (252 for 1d, 98280 for 1m). ``lot`` may be
    a decimal string (``"0.01"``); ``margin`` makes a margin account (see
    :func:`terms_toml`).

    ``news`` items (``{"time", "symbol", "headline", "body"}``, as ``news.jsonl`` lines)
    are checked as the catalog checks that file; ``news_in_frame`` sets the scenario's
    frame budget of news items.

    Raises ``ValueError`` listing every problem when the terms, bars or news are invalid.
    """
    if interval not in INTERVAL_SECONDS:
        raise ValueError(f"interval {interval!r} must be one of {', '.join(INTERVAL_SECONDS)}")
    rows = _rows(bars, symbol, start, interval)
    if instruments is None:
        symbols = sorted({row[1] for row in rows}) or [symbol]
        instruments = [{"symbol": name, "tick": tick, "lot": lot} for name in symbols]
    toml = terms_toml(
        scenario_id=scenario_id,
        title=title,
        description=description,
        interval=interval,
        bars_per_year=BARS_PER_YEAR[interval] if bars_per_year is None else bars_per_year,
        cash=cash,
        shortable=shortable,
        max_position=max_position,
        max_drawdown=max_drawdown,
        fee_bps=fee_bps,
        fee_minimum=fee_minimum,
        participation=participation,
        slippage_bps=slippage_bps,
        instruments=instruments,
        margin=margin,
    )
    if news_in_frame is not None:
        toml = f"news_in_frame = {news_in_frame}\n" + toml  # top level: before any table
    terms = parse_terms(toml)
    if isinstance(terms, list):
        raise ValueError("invalid scenario terms: " + "; ".join(p.reason for p in terms))
    csv = HEADER + "\n" + "".join(",".join(row) + "\n" for row in rows)
    tape = parse_tape(csv.encode("utf-8"), terms.ticks, terms.scale, limit=50)
    if isinstance(tape, list):
        raise ValueError(
            "invalid bars: " + "; ".join(f"bar {(p.line or 2) - 2}: {p.reason}" for p in tape)
        )
    shape = TapeShape(bars=len(tape), start=tape.times[0], end=tape.times[-1], root=tape.root)
    checked: News | None = None
    if news is not None:
        lines = "".join(json.dumps(item) + "\n" for item in news).encode("utf-8")
        found = parse_news(lines, terms.symbols, last_time=shape.end, limit=50)
        if isinstance(found, list):
            raise ValueError("invalid news: " + "; ".join(map(str, found)))
        checked = found
    return LoadedScenario(
        scenario_object(terms, shape, None if checked is None else checked.root),
        None,
        lambda: tape,
        news=checked,
    )


def _rows(bars: Sequence[BarRow], symbol: str, start: str, interval: str) -> list[list[str]]:
    rows: list[list[str]] = []
    first = datetime.strptime(start, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    step = timedelta(seconds=INTERVAL_SECONDS[interval])
    for index, bar in enumerate(bars):
        if len(bar) == 5:
            time = (first + index * step).strftime("%Y-%m-%dT%H:%M:%SZ")
            rows.append([time, symbol, *(_text(value) for value in bar)])
        elif len(bar) == 7:
            rows.append([_text(value) for value in bar])
        else:
            raise ValueError(f"bar {index} has {len(bar)} values; expected 5 or 7")
    return rows
