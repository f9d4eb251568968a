"""The CPU an append of one bar costs on a forward tape already holding N bars.

A forward scenario (two symbols, one-minute bars, no declared prefix) on a SQLite store
is grown to ``--bars`` N published bars, then ``--appends`` single-bar appends are timed
with ``time.process_time`` (the whole ``Runtime.append_bars``: parse, validate, store,
extend what is loaded). With ``--compare DIR`` the same run is made by the checkout
``DIR`` (its own ``.venv``), alternated with this one, ``--pairs`` times per size; the
medians of the pairs are printed. Usage::

    uv run python benchmarks/feed_append.py [--bars 1000 --bars 20000] [--pairs 5]
        [--appends 10] [--compare /work/start]
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1]))  # the forward tests' scenario and bars, said once there

from tests.kestrel_sdk.runtime.forward.scenarios import (  # noqa: E402
    SCENARIO_ID,
    bars,
    forward_catalog,
)


def run_once(size: int, appends: int) -> float:
    """µs of CPU per single-bar append on a tape of ``size`` bars (this interpreter's
    checkout)."""
    from kestrel_sdk.runtime.service import Runtime
    from kestrel_sdk.runtime.stores import open_runtime_store

    with tempfile.TemporaryDirectory() as tmp:
        catalog = forward_catalog(Path(tmp))
        store = open_runtime_store(f"sqlite:///{tmp}/store.db")
        runtime = Runtime(Path(tmp) / "home", [catalog], store=store)
        # the stamp's keyword: a clock to read (this checkout) or a time (an older one)
        append_bars: Any = runtime.append_bars
        at = "2026-12-01T14:31:02.000000Z"
        stamp: dict[str, Any] = (
            {"clock": lambda: at}
            if "clock" in inspect.signature(append_bars).parameters
            else {"published_at": at}
        )

        def append(data: bytes) -> None:
            append_bars(SCENARIO_ID, data, **stamp)

        for first in range(0, size, 5000):
            append(bars(first, min(5000, size - first)))
        begun = time.process_time()
        for k in range(appends):
            append(bars(size + k, 1))
        spent = time.process_time() - begun
        runtime.shutdown()
    return spent / appends * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bars", type=int, action="append")
    parser.add_argument("--appends", type=int, default=10)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--once", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.once is not None:
        print(json.dumps(run_once(args.once, args.appends)))
        return
    sides = {"this": Path(sys.executable)}
    if args.compare is not None:
        sides = {str(args.compare): args.compare / ".venv" / "bin" / "python", **sides}
    me = Path(__file__).resolve()
    for size in args.bars or [1000, 20000]:
        spent: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(args.pairs):
            for name, python in sides.items():
                command = [
                    str(python),
                    str(me),
                    "--once",
                    str(size),
                    "--appends",
                    str(args.appends),
                ]
                done = subprocess.run(command, check=True, capture_output=True, text=True)
                spent[name].append(json.loads(done.stdout))
        for name, values in spent.items():
            shown = ", ".join(f"{v:.0f}" for v in values)
            print(
                f"{size} bars, {name}: median {statistics.median(values):.0f} µs/append ({shown})"
            )


if __name__ == "__main__":
    main()
