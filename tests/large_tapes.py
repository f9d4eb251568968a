"""The 2,000,000-bar file of the memory tests, and the peak RSS of a command that reads it.

One series of one-symbol minute bars from 2010-01-04, written two ways: as a bar file for
``kestrel scenario new`` (prices as Python prints floats, ``benchmarks/import_large.py``'s
file) and as the canonical tape the importer makes of it (``benchmarks/catalog_listing.py``'s
tape). Both come to the tape root ``ROOT_2M``.
"""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MB",
    "ROOT_2M",
    "ROWS",
    "SCENARIO_TOML",
    "Peak",
    "peak",
    "write_bar_file",
    "write_canonical_tape",
]

MB = 1024 * 1024
ROWS = 2_000_000
# The root the importer gave the bar file before it streamed (main at 7b8c790: 6.3 GB peak).
ROOT_2M = "sha256:952bcdd3b0fc5bb6cd98360aeac27c33460e00cb1703bc0cd47462a5fb1291d3"


SCENARIO_TOML = """id = "big"
title = "2,000,000 minute bars"
tape = "tape.csv"
interval = "1m"
bars_per_year = 98280

[account]
cash = "100000.00"
shortable = false
max_position = 100000
max_drawdown = "1.0"

[fees]
bps = "10"
minimum = "0.00"

[fill]
participation = "1"
slippage_bps = "0"

[[instruments]]
symbol = "ACME"
tick = "0.01"
lot = 1
"""
"""The ``scenario.toml`` of a catalog directory holding the canonical tape as ``tape.csv``."""


def _bars(rows: int) -> Iterator[tuple[str, int, int, int, int, int]]:
    """(time, open, high, low, close in cents, volume) of the first ``rows`` bars."""
    start = dt.datetime(2010, 1, 4, tzinfo=dt.UTC)
    price = 10_000  # cents
    for n in range(rows):
        stamp = (start + dt.timedelta(minutes=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
        close = price + (n * 7919 % 21) - 10
        high, low = max(price, close) + 5, min(price, close) - 5
        yield stamp, price, high, low, close, 1000 + n % 97
        price = close


def write_bar_file(path: Path, rows: int = ROWS) -> None:
    """The bars as a file to import: prices as Python prints floats (``100.0``)."""
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write("timestamp,open,high,low,close,volume\n")
        for stamp, open_, high, low, close, volume in _bars(rows):
            out.write(f"{stamp},{open_ / 100},{high / 100},{low / 100},{close / 100},{volume}\n")


def write_canonical_tape(path: Path, symbol: str = "ACME", rows: int = ROWS) -> None:
    """The bars as the canonical tape of ``symbol`` (tick 0.01), as the importer writes it."""

    def cents(value: int) -> str:
        return f"{value // 100}.{value % 100:02d}"

    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write("time,symbol,open,high,low,close,volume\n")
        for stamp, open_, high, low, close, volume in _bars(rows):
            prices = ",".join(map(cents, (open_, high, low, close)))
            out.write(f"{stamp},{symbol},{prices},{volume}\n")


# Linux counts a child's peak RSS from its parent's size at the fork: each command runs
# under this small launcher, which waits for it and writes its peak (ru_maxrss, KiB).
LAUNCH = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


@dataclass(frozen=True)
class Peak:
    output: str
    rss: int  # bytes


def peak(command: list[str], env: dict[str, str], tmp_path: Path) -> Peak:
    """A command's output and the peak RSS of its process alone (it must succeed)."""
    found = tmp_path / "peak"
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, str(found), *command],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return Peak(done.stdout, int(found.read_text()) * 1024)
