"""Listing a catalog that holds a 2,000,000-bar user scenario copied in (not imported, so
nothing is remembered about it): the first listing, which checks the tape in full and
remembers its shape, against a later one, which reads the remembered shape, not the tape;
and the same two followed by loading the tape to trade (``LoadedScenario.tape``). Each
in a fresh process, the first ones under a fresh ``KESTREL_HOME``.

Run with ``uv run python benchmarks/catalog_listing.py``; it prints the wall time, process
CPU and peak RSS (``ru_maxrss``, as ``/usr/bin/time -v`` reports it) of each (the later
ones the median of RUNS processes) and the ratio of first to later (the import of
``kestrel_sdk`` is not counted in the times, and is in the peak). The goals (issue 36 and
its follow-up): a later listing under 0.5 s; a first listing or load in bounded memory
(under 512 MB).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1]))  # the tests' 2,000,000-bar tape, said once there

from tests.large_tapes import ROWS, SCENARIO_TOML, write_canonical_tape  # noqa: E402

BARS = ROWS
RUNS = 5
LIST = """
import json, resource, time
from kestrel_sdk.runtime.catalog import load_catalog
started, cpu = time.perf_counter(), time.process_time()
index = load_catalog()
assert index.problems == [], index.problems
loaded = index.get("big")
assert loaded.scenario.tape.bars == {bars}
if {trade}:
    assert len(loaded.tape) == {bars}
print(json.dumps({{
    "wall": time.perf_counter() - started,
    "cpu": time.process_time() - cpu,
    "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}}))
"""


def write_scenario(directory: Path) -> None:
    directory.mkdir(parents=True)
    (directory / "scenario.toml").write_text(SCENARIO_TOML, "utf-8")
    write_canonical_tape(directory / "tape.csv", rows=BARS)


def listing(env: dict[str, str], *, trade: bool = False) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", LIST.format(bars=BARS, trade=trade)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, float] = json.loads(done.stdout)
    return found


def line(label: str, found: dict[str, float], note: str = "") -> str:
    return (
        f"{label:<38}{found['wall']:7.2f} s wall  {found['cpu']:7.2f} s CPU"
        f"  {found['rss_mb']:7.0f} MB peak RSS{note}"
    )


def median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="kestrel-listing-"))
    try:
        write_scenario(work / "catalog" / "big")
        size = (work / "catalog" / "big" / "tape.csv").stat().st_size
        print(f"tape: {BARS:,} bars, {size / 1e6:.0f} MB")
        for trade in (False, True):
            env = {
                **os.environ,
                "KESTREL_HOME": str(work / f"home-{trade}"),
                "KESTREL_CATALOG_PATH": str(work / "catalog"),
            }
            first = listing(env, trade=trade)
            later = median([listing(env, trade=trade) for _ in range(RUNS)])
            what = "listing and loading to trade" if trade else "listing"
            print(line(f"first {what}", first))
            print(line(f"later {what}", later, f"  (median of {RUNS})"))
            print(f"{'ratio (wall)':<38}{first['wall'] / later['wall']:7.1f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
