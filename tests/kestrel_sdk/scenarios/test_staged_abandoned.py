"""A scenario writer killed mid-write leaves its hidden staging directory; the next
write into that catalog removes it, and never the directory of a writer still at work.

Each writer here is a process of its own, stopped at a known point: its tape callback
writes part of the tape, says ``writing`` on stdout and waits on stdin. Ownership is an
OS lock the writer holds on a file in its staging directory (``staged.WRITER_LOCK``): the
lock of a killed writer is free, a live writer's is held.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import IO

from kestrel_sdk.scenarios import write_staged

TOML = 'id = "mine"\n'

WRITER = """
import sys
from kestrel_sdk.scenarios import write_staged


def tape(out):
    out.write(b"time,open\\n")
    out.flush()
    print("writing", flush=True)
    sys.stdin.readline()
    out.write(b"1,2\\n")


write_staged(sys.argv[1], tape, 'id = "theirs"\\n', None)
print("written", flush=True)
"""


def _writer(target: Path) -> subprocess.Popen[str]:
    """A writer of ``target`` in another process, stopped mid-write (it said so)."""
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline() == "writing\n"
    return child


def _hidden(catalog: Path) -> list[Path]:
    return sorted(p for p in catalog.iterdir() if p.name.startswith("."))


def _tape(out: IO[bytes]) -> None:
    out.write(b"time,open\n")


def _write(target: Path) -> Path:
    return write_staged(target, _tape, TOML, None)


def test_a_killed_writers_staging_directory_is_removed_by_the_next_write(
    tmp_path: Path,
) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    foreign = catalog / ".not-a-writers"  # no lock file: not a staging directory
    foreign.mkdir()
    child = _writer(catalog / "theirs")
    [staging] = [p for p in _hidden(catalog) if p != foreign]
    child.kill()  # SIGKILL: no cleanup of its own runs
    child.wait(timeout=60)
    assert staging.is_dir()  # left behind

    _write(catalog / "mine")
    assert sorted(p.name for p in catalog.iterdir()) == [".not-a-writers", "mine"]
    assert sorted(p.name for p in (catalog / "mine").iterdir()) == ["scenario.toml", "tape.csv"]


def test_a_live_writers_staging_directory_is_kept_and_its_write_completes(
    tmp_path: Path,
) -> None:
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    child = _writer(catalog / "theirs")
    try:
        [staging] = _hidden(catalog)
        _write(catalog / "mine")
        assert _hidden(catalog) == [staging]  # its lock is held: kept
        assert child.stdin is not None
        child.stdin.write("go on\n")
        child.stdin.flush()
        assert child.stdout is not None
        assert child.stdout.readline() == "written\n"
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
    assert _hidden(catalog) == []
    assert sorted(p.name for p in catalog.iterdir()) == ["mine", "theirs"]
    written = catalog / "theirs"
    assert sorted(p.name for p in written.iterdir()) == ["scenario.toml", "tape.csv"]
    assert (written / "tape.csv").read_bytes() == b"time,open\n1,2\n"
