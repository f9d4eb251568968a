"""A factory for user scenario directories on disk (``scenario.toml`` + ``tape.csv``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

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

MakeScenario = Callable[..., Path]


@pytest.fixture
def good_toml() -> str:
    """The valid scenario.toml template (``{id}`` is filled in)."""
    return TOML


@pytest.fixture
def good_tape() -> str:
    return TAPE


@pytest.fixture
def make_scenario() -> MakeScenario:
    """``make_scenario(parent, id, tape=..., toml=..., tape_bytes=...)`` → the directory."""

    def make(
        parent: Path,
        scenario_id: str,
        *,
        tape: str = TAPE,
        toml: str = TOML,
        tape_bytes: bytes | None = None,
        tape_name: str = "tape.csv",
    ) -> Path:
        directory = parent / scenario_id
        directory.mkdir(parents=True)
        (directory / "scenario.toml").write_text(toml.replace("{id}", scenario_id), "utf-8")
        data = tape_bytes if tape_bytes is not None else tape.encode("utf-8")
        (directory / tape_name).write_bytes(data)
        return directory

    return make
