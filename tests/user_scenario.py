"""A user scenario on disk (``scenario.toml`` + ``tape.csv``): two daily bars of FOO, the
template the catalog tests and the home-rule test write."""

from __future__ import annotations

from pathlib import Path

__all__ = ["TAPE", "TOML", "write_user_scenario"]

TOML = """\
id = "{id}"
title = "A user scenario"
description = "two days of FOO"
tape = "tape.csv"
interval = "1d"
bars_per_year = 252

[account]
cash = "5000.00"
shortable = false
max_position = 1000
max_drawdown = "1.0"

[fees]
bps = "10"
minimum = "0.00"

[fill]
participation = "1"
slippage_bps = "0"

[[instruments]]
symbol = "FOO"
tick = "0.01"
lot = 1
"""

TAPE = """\
time,symbol,open,high,low,close,volume
2024-01-02T00:00:00Z,FOO,10.00,10.50,9.90,10.20,1000
2024-01-03T00:00:00Z,FOO,10.20,10.40,10.00,10.10,800
"""


def write_user_scenario(
    parent: Path,
    scenario_id: str,
    *,
    tape: str = TAPE,
    toml: str = TOML,
    tape_bytes: bytes | None = None,
    tape_name: str = "tape.csv",
) -> Path:
    """The directory ``parent/scenario_id`` holding ``toml`` (``{id}`` filled in) and the
    tape (``tape_bytes`` when given, else ``tape``) as ``tape_name``."""
    directory = parent / scenario_id
    directory.mkdir(parents=True)
    (directory / "scenario.toml").write_text(toml.replace("{id}", scenario_id), "utf-8")
    data = tape_bytes if tape_bytes is not None else tape.encode("utf-8")
    (directory / tape_name).write_bytes(data)
    return directory
