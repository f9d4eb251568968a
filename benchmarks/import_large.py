"""Importing a 2,000,000-row CSV with ``kestrel scenario new``, and listing the catalog
that then holds it.

Each step runs in a fresh process, measured by ``os.wait4`` (wall time, process CPU, peak
RSS of that process alone):

* the import, against its peer ``pandas.read_csv`` of the same file (what merely holding
  the file as a DataFrame costs); the goal (issue 36): peak RSS at most 512 MB;
* listing the catalog (``load_catalog``) and checking it (``check_catalog``) with the new
  scenario on ``KESTREL_CATALOG_PATH``, against the same without it (the shipped
  scenarios alone); medians of RUNS processes; the goal: the scenario adds under 0.5 s.

Run with ``uv run python benchmarks/import_large.py [--rows 2000000] [--runs 5]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1]))  # the tests' bar file, said once there

from tests.large_tapes import write_bar_file  # noqa: E402

KESTREL = str(Path(sys.executable).with_name("kestrel"))
PANDAS = "import sys, pandas; pandas.read_csv(sys.argv[1])"
LIST = "from kestrel_sdk.runtime.catalog import load_catalog; assert not load_catalog().problems"
CHECK = "from kestrel_sdk.runtime.catalog import check_catalog; assert not check_catalog()"
IMPORT_ONLY = "import kestrel_sdk.runtime.catalog"  # what the two above cost before they work


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    rss_mb: float


def measured(command: list[str], env: dict[str, str]) -> Run:
    """One process's wall time, CPU (user + system) and peak RSS, by ``os.wait4``."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"{command[:3]} failed with exit code {process.returncode}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def medians(commands: list[tuple[list[str], dict[str, str]]], runs: int) -> list[Run]:
    """Each command's medians, the commands alternating run by run (one sitting)."""
    found: list[list[Run]] = [[] for _ in commands]
    for _ in range(runs):
        for runs_of, (command, env) in zip(found, commands, strict=True):
            runs_of.append(measured(command, env))
    return [
        Run(
            statistics.median(r.wall for r in each),
            statistics.median(r.cpu for r in each),
            statistics.median(r.rss_mb for r in each),
        )
        for each in found
    ]


def line(label: str, run: Run) -> str:
    return f"{label:<44} {run.wall:7.2f} s wall {run.cpu:7.2f} s CPU {run.rss_mb:7.0f} MB peak RSS"


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--rows", type=int, default=2_000_000)
    options.add_argument("--runs", type=int, default=5)
    args = options.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kestrel-import-"))
    try:
        source = work / "ACME.csv"
        write_bar_file(source, args.rows)
        env = {**os.environ, "KESTREL_HOME": str(work / "home"), "KESTREL_CATALOG_PATH": ""}
        python = [sys.executable, "-c"]
        peer = measured([*python, PANDAS, str(source)], env)
        target = work / "catalog" / "acme"
        done = measured(
            [KESTREL, "scenario", "new", "acme", "--from", str(source), "--out", str(target)], env
        )
        print(f"file: {args.rows:,} rows, {source.stat().st_size / 1e6:.0f} MB")
        print(line("kestrel scenario new (import)", done))
        print(line("pandas.read_csv (peer)", peer))
        print(
            f"{'ratio to the peer (wall; peak RSS)':<44} {done.wall / peer.wall:7.2f}x {'':>14}"
            f"{done.rss_mb / peer.rss_mb:.2f}x"
        )
        with_it = {**env, "KESTREL_CATALOG_PATH": str(work / "catalog")}
        (base,) = medians([([*python, IMPORT_ONLY], with_it)], args.runs)
        for name, code in (("list", LIST), ("check", CHECK)):
            alone, listed = medians([([*python, code], env), ([*python, code], with_it)], args.runs)
            print(line(f"{name}: shipped scenarios only", alone))
            print(line(f"{name}: with the {args.rows:,}-bar scenario", listed))
            print(
                f"{f'{name}: the scenario adds':<44} {listed.wall - alone.wall:7.2f} s wall "
                f"{listed.cpu - alone.cpu:7.2f} s CPU (medians of {args.runs}, alternating)"
            )
        print(line("(importing kestrel_sdk.runtime.catalog)", base))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
