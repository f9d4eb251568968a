"""The stdio benchmark still runs end to end (a tiny run; the numbers are not judged here)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "mcp_stdio.py"


def test_benchmark_prints_both_rates_and_the_ratio() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARK),
            "--requests",
            "40",
            "--warmup",
            "5",
            "--scenario",
            "acme-trend",
            "--step-floor",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    ours = re.search(r"kestrel-mcp\s+([\d.]+) round trips/s", done.stdout)
    theirs = re.search(r"mcp MCPServer\s+([\d.]+) round trips/s", done.stdout)
    ratio = re.search(r"ratio\s+([\d.]+)x  \((\d+) requests each\)", done.stdout)
    assert ours is not None, done.stdout
    assert theirs is not None, done.stdout
    assert ratio is not None, done.stdout
    assert ratio.group(2) == "40"
    assert re.search(r"median ratio\s+[\d.]+x  \(over [1-9]\d* interleaved blocks\)", done.stdout)
    # the floor that also runs the runtime's step: what any face over this runtime reaches
    assert re.search(r"step floor\s+[\d.]+ round trips/s", done.stdout), done.stdout
    assert re.search(r"its ratio\s+[\d.]+x", done.stdout), done.stdout
    assert re.search(r"of it\s+[\d.]+ ", done.stdout), done.stdout
    if sys.platform == "linux":  # /proc shows each server's CPU time
        per_call = r"\s+([\d.]+) us server CPU per round trip"
        ours_cpu = re.search(r"kestrel-mcp" + per_call, done.stdout)
        theirs_cpu = re.search(r"mcp MCPServer" + per_call, done.stdout)
        cpu_ratio = re.search(r"cpu ratio\s+([\d.]+)x", done.stdout)
        assert ours_cpu is not None, done.stdout
        assert theirs_cpu is not None, done.stdout
        assert cpu_ratio is not None, done.stdout
