"""Listing a catalog that holds a 2,000,000-bar user scenario: the first listing (which
validates the tape in full and remembers its shape) against a later one (which reads the
remembered shape, not the tape), each in a fresh process.

Run with ``uv run python benchmarks/catalog_listing.py``; it prints each listing's wall
time, process CPU and peak RSS (median of RUNS fresh processes for the later listing) and
their ratio (the import of ``kestrel_sdk`` is not counted). The goal (issue 36): a
later listing under 0.5 s.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BARS = 2_000_000
RUNS = 5
LIST = """
import json, resource, time
from kestrel_sdk.runtime.catalog import load_catalog
started, cpu = time.perf_counter(), time.process_time()
index = load_catalog()
assert index.problems == [], index.problems
assert index.get("big").scenario.tape.bars == {bars}
print(json.dumps({{
    "wall": time.perf_counter() - started,
    "cpu": time.process_time() - cpu,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}}))
"""
TOML = """id = "big"
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


def write_scenario(directory: Path) -> None:
    directory.mkdir(parents=True)
    (directory / "scenario.toml").write_text(TOML, "utf-8")
    start = dt.datetime(2010, 1, 4, tzinfo=dt.UTC)
    price = 10_000  # cents
    with (directory / "tape.csv").open("w", encoding="utf-8", newline="\n") as out:
        out.write("time,symbol,open,high,low,close,volume\n")
        for n in range(BARS):
            stamp = (start + dt.timedelta(minutes=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
            close = price + (n * 7919 % 21) - 10
            high, low = max(price, close) + 5, min(price, close) - 5
            out.write(
                f"{stamp},ACME,{price // 100}.{price % 100:02d},{high // 100}.{high % 100:02d},"
                f"{low // 100}.{low % 100:02d},{close // 100}.{close % 100:02d},{1000 + n % 97}\n"
            )
            price = close


def listing(env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", LIST.format(bars=BARS)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, float] = json.loads(done.stdout)
    return found


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="kestrel-listing-"))
    try:
        write_scenario(work / "catalog" / "big")
        size = (work / "catalog" / "big" / "tape.csv").stat().st_size
        env = {
            **os.environ,
            "KESTREL_HOME": str(work / "home"),
            "KESTREL_CATALOG_PATH": str(work / "catalog"),
        }
        first = listing(env)
        later = [listing(env) for _ in range(RUNS)]
        wall = statistics.median(r["wall"] for r in later)
        cpu = statistics.median(r["cpu"] for r in later)
        rss = statistics.median(r["rss_mb"] for r in later)
        print(f"tape: {BARS:,} bars, {size / 1e6:.0f} MB")
        print(
            f"first listing (validates, remembers)  {first['wall']:7.2f} s wall"
            f"  {first['cpu']:7.2f} s CPU  {first['rss_mb']:7.0f} MB peak RSS"
        )
        print(
            f"later listing (remembered shape)      {wall:7.2f} s wall"
            f"  {cpu:7.2f} s CPU  {rss:7.0f} MB peak RSS  (median of {RUNS})"
        )
        print(f"ratio                                 {first['wall'] / wall:7.1f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
