"""Several processes opening one fresh home at once (two MCP hosts starting on one
``~/.kestrel``): every one opens it, under any interleaving, and every file is private."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

# One opener process: for each home it is sent, it opens the runtime's and the door's
# store there (both new), closes them and says so; the four get each home at once.
OPENER = """
import sys, traceback
from pathlib import Path
from kestrel_door.store import DoorStore
from kestrel_sdk.runtime.stores.sqlite.store import SqliteStore
print("ready", flush=True)
for line in sys.stdin:
    home = Path(line.strip())
    try:
        runtime = SqliteStore(home)
        door = DoorStore(home / "door.db")
        runtime.close()
        door.close()
        print("opened", flush=True)
    except Exception:
        print(repr(traceback.format_exc()), flush=True)
"""


def test_four_processes_open_one_fresh_home_in_25_rounds(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        for n in range(25):
            home = tmp_path / f"home-{n}"
            for proc in procs:  # the same fresh home to all four, at once
                assert proc.stdin is not None
                proc.stdin.write(f"{home}\n")
                proc.stdin.flush()
            said = [proc.stdout.readline().strip() for proc in procs if proc.stdout]
            assert said == ["opened"] * 4, (n, said)
            for path in home.rglob("*"):
                mode = stat.S_IMODE(path.stat().st_mode)
                assert mode & 0o077 == 0, (path, oct(mode))
            assert stat.S_IMODE(home.stat().st_mode) == 0o700
    finally:
        for proc in procs:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=60)
