"""Two OS processes submitting to one session on one store (two door processes on one
PostgreSQL, or two hosts on one SQLite home) while a third grades it: every submission a
process acknowledged is in the graded record, in one chain; every one after the grade is
refused ``SESSION_CLOSED``, never taken and lost; the proof verifies in a fourth runtime.
(A close or a submission racing them may be refused ``BACKEND_UNAVAILABLE``, having
retried: nothing of it taken; the close is asked again, as its refusal says.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kestrel_protocol import GradeResult, KestrelError
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

# A runtime on the store: after "go", submits until the session is closed (at most 400
# times: on SQLite the submitters can hold the grade off until they stop), one line per
# submission: its seq, or the refusal's code; then "done".
SUBMITTER = """
import sys
from kestrel_protocol import KestrelError
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
runtime = Runtime(store=open_runtime_store(sys.argv[1]))
print("ready", flush=True)
sys.stdin.readline()
for _ in range(400):
    try:
        print(runtime.submit("alice", sys.argv[2], "buy 1 ACME\\nadvance 1").model().pentad.seq,
              flush=True)
    except KestrelError as exc:
        print(exc.code, flush=True)
        if exc.code == "SESSION_CLOSED":
            break
print("done", flush=True)
runtime.shutdown()
"""


def _graded(runtime: Runtime, sid: str) -> GradeResult:
    """The session's grade; while others advance it at full speed a close can be refused
    ``BACKEND_UNAVAILABLE`` (``close again``), and is asked again as it says."""
    for _ in range(50):
        try:
            grade = runtime.grade("alice", sid)
        except KestrelError as exc:
            if exc.code == "BACKEND_UNAVAILABLE" and "close again" in str(exc):
                continue
            raise
        assert isinstance(grade, GradeResult)
        return grade
    raise AssertionError("the grade was refused 50 times")


def test_two_processes_submitting_while_a_third_grades_lose_nothing(
    store_url: str, tmp_path: Path
) -> None:
    here = Runtime(store=open_runtime_store(store_url))
    sid = here.open_session("alice", "acme-trend", "raced").session_id
    assert sid is not None
    submitters = [
        subprocess.Popen(
            [sys.executable, "-c", SUBMITTER, store_url, sid],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    said: list[list[str]] = [[], []]
    try:
        for process in submitters:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "ready"
        for process in submitters:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        assert submitters[0].stdout is not None
        for _ in range(5):  # the first has been acknowledged five times: grade meanwhile
            said[0].append(submitters[0].stdout.readline().strip())
        grade = _graded(here, sid)
        for n, process in enumerate(submitters):
            assert process.stdout is not None
            while not said[n] or said[n][-1] != "done":
                said[n].append(process.stdout.readline().strip())
            assert process.wait(60) == 0
    finally:
        for process in submitters:
            if process.poll() is None:
                process.kill()
    acknowledged = [int(line) for lines in said for line in lines if line.isdigit()]
    for lines in said:  # seqs, then SESSION_CLOSED (unless the 400th landed first)
        assert lines[-1] == "done", lines
        refused = {line for line in lines[:-2] if not line.isdigit()}
        assert refused <= {"BACKEND_UNAVAILABLE"}, lines  # raced past its retries: not taken
        assert lines[-2] == "SESSION_CLOSED" or lines[-2].isdigit(), lines
    assert sorted(acknowledged) == list(range(1, len(acknowledged) + 1))
    record = here.close("alice", sid)
    assert len(record.pentads) == len(acknowledged)  # every acknowledged one, no other
    proof = json.loads(here.proof("alice", sid).text)
    assert proof["grade"]["root"] == grade.root
    elsewhere = Runtime(tmp_path / "elsewhere")
    try:
        report = elsewhere.verify_proof(proof)
        assert report.ok, report
    finally:
        elsewhere.shutdown()
        here.shutdown()
