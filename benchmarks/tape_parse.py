"""Time the runtime's tape parser against ``pandas.read_csv`` on the 200k-minute tape.

``parse_tape`` checks every bar (tick grid, OHLC order, times ascending) and turns prices
into integer ticks; ``pandas.read_csv`` only reads the columns, so it is the floor to
compare with. Run with ``uv run python benchmarks/tape_parse.py``; it prints the median
time of each over several runs and their ratio (the goal: the whole tape in under 1 s).
"""

from __future__ import annotations

import gzip
import io
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd  # type: ignore[import-untyped]
from kestrel_sdk.runtime.catalog.tapes import parse_tape

RUNS = 5
TAPE = (
    Path(__file__).resolve().parents[1]
    / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data/minute-200k/tape.csv.gz"
)


def median_seconds(work: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    data = gzip.decompress(TAPE.read_bytes())
    tape = parse_tape(data, {"ACME": "0.01"}, 2)
    assert not isinstance(tape, list), tape
    frame = pd.read_csv(io.BytesIO(data))
    assert len(tape) == len(frame) == 200_000
    ours = median_seconds(lambda: parse_tape(data, {"ACME": "0.01"}, 2))
    peer = median_seconds(lambda: pd.read_csv(io.BytesIO(data)))
    print(f"parse_tape       {ours * 1000:8.1f} ms  (200k bars, checked, in ticks)")
    print(f"pandas.read_csv  {peer * 1000:8.1f} ms  (200k rows, unchecked)")
    print(f"ratio            {ours / peer:8.2f}x")


if __name__ == "__main__":
    main()
