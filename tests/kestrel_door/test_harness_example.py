from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "harness.py"


def test_harness_example_credential_works_during_the_turn_only() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "child: opened ks_" in done.stdout
    # the child says why: the door's refusal, not only an exception's type
    assert (
        "child: refused: MCPError: the bearer credential sent is not valid here: "
        "unknown, revoked or expired" in done.stdout
    ), done.stdout
    assert "kestrel_turn_" not in done.stdout + done.stderr
