"""A forward scenario on disk for the tests of forward tapes: two instruments on a
one-minute interval, declared with no prefix (or with ``prefix`` bars), and the bars a
feed appends (``bars(first, count)``: one CSV block, header included)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from kestrel_sdk.runtime.catalog.tapes import HEADER

SCENARIO_ID = "fwd-live"
START = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)

TOML = """\
id = "{id}"
title = "A forward scenario"
description = "ACME and BETA, minute bars appended while agents trade"
interval = "1m"
bars_per_year = 98280
forward = true
{tape}
[account]
cash = "10000.00"
shortable = false
max_position = 1000
max_drawdown = "1.0"

[fees]
bps = "0"
minimum = "0.00"

[fill]
participation = "1"
slippage_bps = "0"

[[instruments]]
symbol = "ACME"
tick = "0.01"
lot = 1

[[instruments]]
symbol = "BETA"
tick = "0.05"
lot = 1
"""


def bar_time(index: int) -> str:
    """Bar ``index``'s time: one a minute from 2026-12-01 14:30 UTC (bar 570 is the
    first of the next day)."""
    return (START + timedelta(minutes=index)).strftime("%Y-%m-%dT%H:%M:%SZ")


def bar_rows(index: int, *, acme_close: str | None = None) -> str:
    """Bar ``index``'s rows (ACME rising a cent a bar from 100.00 when not given)."""
    close = acme_close or f"{100 + index // 100}.{index % 100:02d}"
    time = bar_time(index)
    return (
        f"{time},ACME,{close},{close},{close},{close},1000\n"
        f"{time},BETA,20.00,20.10,19.95,20.05,500\n"
    )


def bars(first: int, count: int = 1) -> bytes:
    """Bars ``first`` … ``first + count - 1`` as tape CSV (with its header)."""
    return (HEADER + "\n" + "".join(bar_rows(k) for k in range(first, first + count))).encode()


def forward_catalog(parent: Path, *, prefix: int = 0, scenario_id: str = SCENARIO_ID) -> Path:
    """A catalog directory holding the forward scenario (a ``prefix`` of that many bars
    in its ``tape.csv``, else no tape file); the directory to put on the catalog path."""
    directory = parent / "catalog" / scenario_id
    directory.mkdir(parents=True)
    tape = 'tape = "tape.csv"\n' if prefix else ""
    (directory / "scenario.toml").write_text(TOML.format(id=scenario_id, tape=tape))
    if prefix:
        (directory / "tape.csv").write_bytes(bars(0, prefix))
    return parent / "catalog"
