from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from kestrel_sdk.runtime.service import Runtime

CHILD = r"""
import sys
from kestrel_sdk.runtime.service import Runtime

rt = Runtime(sys.argv[1])
sid = rt.open_session("local", "acme-trend", "d").session_id
i = 0
while True:
    i += 1
    source = "buy 1 ACME\nadvance 1" if i % 5 == 0 else "advance 1"
    response = rt.submit("local", sid, source).model()
    print(response.pentad.seq, response.delivery.frame_root, flush=True)
"""


def _source(i: int) -> str:
    return "buy 1 ACME\nadvance 1" if i % 5 == 0 else "advance 1"


def test_a_killed_process_loses_nothing_accepted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(home)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    printed: dict[int, str] = {}
    try:
        while len(printed) < 40:
            line = child.stdout.readline()
            assert line, "the child died early"
            number, root = line.split()
            printed[int(number)] = root
    finally:
        child.send_signal(signal.SIGKILL)  # mid-loop: no chance to clean up
        child.wait(30)
    with sqlite3.connect(home / "kestrel.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    restarted = Runtime(home)
    opened = restarted.open_session("local", "acme-trend", "d")  # idempotent resume
    assert opened.session_id is not None
    sid = opened.session_id
    delivery = restarted.frame("local", sid).model()
    seq = delivery.frame.seq
    assert seq >= 40  # every printed (accepted) submission survived
    if seq in printed:
        assert delivery.frame_root == printed[seq]

    reference = Runtime(tmp_path / "reference")
    ref_sid = sid  # same principal, scenario and label: the same deterministic id
    assert reference.open_session("local", "acme-trend", "d").session_id == ref_sid
    for i in range(1, seq + 1):
        expected = reference.submit("local", ref_sid, _source(i)).model()
        if i in printed:
            assert expected.delivery.frame_root == printed[i]
    assert delivery.frame_root == expected.delivery.frame_root
    # and the session continues exactly as an uninterrupted one would
    assert (
        restarted.submit("local", sid, _source(seq + 1)).model().delivery.frame_root
        == reference.submit("local", ref_sid, _source(seq + 1)).model().delivery.frame_root
    )
    restarted.shutdown()
    reference.shutdown()
