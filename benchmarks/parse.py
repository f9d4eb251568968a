"""The language front end on sources it has not seen: parse, validate, program check.

Run: ``uv run python benchmarks/parse.py [--runs 7] [--sources 5000]``.

Each row is one kind of source an agent sends, made ``--sources`` times with a number
that differs every time, so no source repeats (the gym env sends ``buy N ACME`` then
``advance 1`` with ``N`` following its equity, and ``buy N`` rarely repeats within a
cache's reach). Two figures per row, in microseconds of process CPU per source, the
median of ``--runs`` runs: ``parse_located`` (the statements and the syntax diagnostics)
and ``SessionEngine.check`` (parse, the scenario and session checks, the program or the
refusal: what ``Runtime.submit`` spends before it applies anything), on ``acme-trend``.

There is no peer to run beside: to compare two commits, run this script in each
worktree, alternating them in one sitting (see benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Callable

from kestrel_protocol import KestrelError
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.engine import SessionEngine
from kestrel_sdk.runtime.lang import parse_located

SCENARIO = "acme-trend"

ROWS: dict[str, Callable[[int], str]] = {
    "gym step: buy N ACME / advance 1": lambda n: f"buy {n} ACME\nadvance 1\n",
    "every line new: sell N ACME / advance N": lambda n: f"sell {n} ACME\nadvance {n}\n",
    "limit order, tif, alias": lambda n: f"buy {n} ACME limit 101.25 tif gtc as e{n}",
    "stop-limit order": lambda n: f"sell {n} ACME stop 99.{n % 100:02d} limit 98.50",
    "advance to a time": lambda n: (
        f"advance to 2015-06-{1 + n // 86400 % 28:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}"
        f":{n % 60:02d}Z"
    ),
    "a five-line plan with a comment": lambda n: (
        f"# plan {n}\nbuy {n} ACME limit 101.25 as a{n}\nsell {n} ACME stop 99\n"
        f"cancel a{n}\nadvance {n % 50 + 1}\n"
    ),
    "refused: unknown symbol (K201)": lambda n: f"buy {n} ACMEE\nadvance 1\n",
    "refused: bad quantity (K102)": lambda n: f"buy {n}.5 ACME\nadvance 1\n",
}


def _cpu_per_source(work: Callable[[str], object], sources: list[str]) -> float:
    start = time.process_time()
    for source in sources:
        work(source)
    return (time.process_time() - start) / len(sources) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sources", type=int, default=5000)
    args = parser.parse_args()
    loaded = load_catalog().get(SCENARIO)
    assert loaded is not None
    engine = SessionEngine(loaded, "ks_parse_benchmark")

    def check(source: str) -> None:
        with contextlib.suppress(KestrelError):  # the refused rows are refused
            engine.check(source)

    print(f"µs of process CPU per source, median of {args.runs} runs of {args.sources}")
    print(f"{'source':44} {'parse_located':>14} {'engine.check':>13}")
    offset = 1
    for name, make in ROWS.items():
        parse_runs: list[float] = []
        check_runs: list[float] = []
        for _ in range(args.runs):
            # fresh numbers for each run and each figure: nothing is ever seen twice
            batch = [make(n) for n in range(offset, offset + args.sources)]
            offset += args.sources
            parse_runs.append(_cpu_per_source(parse_located, batch))
            batch = [make(n) for n in range(offset, offset + args.sources)]
            offset += args.sources
            check_runs.append(_cpu_per_source(check, batch))
        parse_us = statistics.median(parse_runs)
        check_us = statistics.median(check_runs)
        print(f"{name:44} {parse_us:14.2f} {check_us:13.2f}")


if __name__ == "__main__":
    main()
