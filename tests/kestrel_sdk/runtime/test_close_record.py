"""A close's record is ``SessionRecord.with_root`` of its members, byte for byte.

The close roots the record from its members' canonical bytes instead of validating each
of its pentad roots again (:func:`kestrel_sdk.runtime.grading._record`). The attack: a
label a naive writer would quote wrongly (a quote, a backslash, a control, non-ASCII), a
session with a stand-down, a lookahead read; any member, fields set or byte that differs
from what ``with_root`` makes of the same members, or a stored record whose root does not
verify, fails.
"""

from __future__ import annotations

from pathlib import Path

from kestrel_protocol import SessionRecord, canonical_json
from kestrel_sdk.runtime import Runtime

from tests.kestrel_sdk.runtime.test_service import PINNED_SOURCES

LABEL = 'q"uote \\ back\tslash é ✓'


def test_a_closes_record_is_with_root_of_its_members(tmp_path: Path) -> None:
    runtime = Runtime(tmp_path, [])
    sid = runtime.open_session("alice", "acme-trend", LABEL).session_id
    assert sid is not None
    runtime.frame("alice", sid)
    for source in PINNED_SOURCES:
        runtime.submit("alice", sid, source)
    record = runtime.close("alice", sid)
    members = record.model_dump(exclude={"root"})
    expected = SessionRecord.with_root(**members)
    assert record.label == LABEL
    assert len(record.pentads) == len(PINNED_SOURCES)
    assert record == expected
    assert record.model_fields_set == expected.model_fields_set
    assert canonical_json(record) == canonical_json(expected)
    stored = runtime.artifact(record.root)
    assert SessionRecord.parse(stored) == expected  # its root verifies
    runtime.shutdown()
