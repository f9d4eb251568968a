"""Two processes on one home (two MCP hosts sharing ``~/.kestrel``): a frame, blotter or
grade read in one reflects every submission the other acknowledged before the read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kestrel_protocol import GradeResult
from kestrel_sdk.runtime.service import Runtime

# The other process: a runtime on the same home, submitting what it is told and
# answering each acknowledged submission with its seq.
OTHER = """
import sys
from kestrel_sdk.runtime.service import Runtime
runtime = Runtime(sys.argv[1])
print("ready", flush=True)
for line in sys.stdin:
    sid, source = line.rstrip("\\n").split(" ", 1)
    print(runtime.submit("alice", sid, source.replace("|", "\\n")).model().pentad.seq, flush=True)
runtime.shutdown()
"""


def test_reads_in_one_process_reflect_what_another_acknowledged(tmp_path: Path) -> None:
    home = tmp_path / "home"
    here = Runtime(home)
    other = subprocess.Popen(
        [sys.executable, "-c", OTHER, str(home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert other.stdin is not None
    assert other.stdout is not None
    try:
        assert other.stdout.readline().strip() == "ready"
        sid = here.open_session("alice", "acme-trend", "shared").session_id
        assert sid is not None
        assert here.frame("alice", sid).model().frame.seq == 0  # cached here from now on
        for n in range(1, 41):
            source = "buy 1 ACME|advance 1" if n % 3 else "advance 2"
            other.stdin.write(f"{sid} {source}\n")
            other.stdin.flush()
            acknowledged = int(other.stdout.readline())
            assert acknowledged == n + (n - 1) // 5  # every 5th step is this process's
            assert here.frame("alice", sid).model().frame.seq == acknowledged
            assert len(here.blotter("alice", sid).orders) == sum(
                1 for k in range(1, n + 1) if k % 3
            )
            if n % 5 == 0:  # and this process's own submission lands after the other's
                assert here.submit("alice", sid, "advance 1").model().pentad.seq == acknowledged + 1
        record = here.close("alice", sid)
        grade = here.grade("alice", sid)
        assert isinstance(grade, GradeResult)
        assert len(record.pentads) == 40 + 8
    finally:
        other.stdin.close()
        other.wait(timeout=60)
        here.shutdown()
