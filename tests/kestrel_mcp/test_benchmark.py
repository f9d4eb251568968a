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
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"kestrel-mcp\s+[\d.]+ round trips/s", done.stdout)
    assert re.search(r"mcp MCPServer\s+[\d.]+ round trips/s", done.stdout)
    ratio = re.search(r"ratio\s+([\d.]+)x", done.stdout)
    assert ratio is not None
    assert float(ratio.group(1)) > 0
    assert re.search(r"median ratio\s+[\d.]+x", done.stdout)
