"""A forward scenario for the door's tests (issue 47): acme-chop's terms with
``forward = true``, its first :data:`PREFIX` bars the declared prefix, the rest of its
tape the bars an operator appends; and an operator's ``kestrel:feed`` token."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from kestrel_door.cli import door_group

__all__ = ["HEADER", "PREFIX", "ROWS", "SCENARIO", "bars", "feed_token", "forward_catalog"]

SCENARIO = "acme-forward"
PREFIX = 3
HEADER = "time,symbol,open,high,low,close,volume\n"
_SOURCE = Path(__file__).resolve().parents[1] / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"
ROWS = (_SOURCE / "acme-chop" / "tape.csv").read_text().splitlines(keepends=True)[1:]
"""acme-chop's rows, one a bar."""


def bars(start: int, stop: int) -> str:
    """The tape CSV of bars ``start`` … ``stop - 1`` (one row a bar)."""
    return HEADER + "".join(ROWS[start:stop])


def forward_catalog(root: Path) -> Path:
    """The forward scenario's directory under ``root`` (name it in KESTREL_CATALOG_PATH)."""
    directory = root / SCENARIO
    directory.mkdir(parents=True)
    toml = (_SOURCE / "acme-chop" / "scenario.toml").read_text()
    toml = toml.replace('id = "acme-chop"', f'id = "{SCENARIO}"\nforward = true', 1)
    (directory / "scenario.toml").write_text(toml)
    (directory / "tape.csv").write_text(bars(0, PREFIX))
    return directory


def feed_token(home: Path, principal: str = "feeder") -> str:
    """A new issued token holding only ``kestrel:feed``."""
    issued = CliRunner().invoke(
        door_group,
        [
            "--home",
            str(home),
            "token",
            "issue",
            "--principal",
            principal,
            "--scope",
            "kestrel:feed",
        ],
    )
    assert issued.exit_code == 0, issued.output
    return issued.output.strip().splitlines()[-1]
