from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = r"""
import json, sys
from kestrel_protocol import GradeResult, OperationResumption
from kestrel_sdk.runtime.service import Runtime

rt = Runtime(sys.argv[1])
sid = rt.open_session("local", "acme-trend").session_id
sources = [
    "buy 100 ACME as entry\nsell 100 ACME stop 30.00 tif gtc as guard\nadvance 40",
    "buy 50 ACME limit 41.00 tif gtc\nadvance 200",
    "cancel guard\nsell 75 ACME\nadvance 10",
    'stand down "done"',
]
frames = [rt.submit("local", sid, s).model().delivery.frame_root for s in sources]
blotter = rt.blotter("local", sid).root
record = rt.close("local", sid)
grade = rt.grade("local", sid, budget=60)
assert isinstance(grade, GradeResult)
print(json.dumps({"session": sid, "frames": frames, "blotter": blotter,
                  "record": record.root, "head": record.head, "grade": grade.root}))
"""


def _run(home: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(home)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def test_two_processes_produce_identical_roots(tmp_path: Path) -> None:
    first = _run(tmp_path / "one")
    second = _run(tmp_path / "two")
    assert first == second
    assert len(first["frames"]) == 4
    assert len(set(first["frames"])) == 4
