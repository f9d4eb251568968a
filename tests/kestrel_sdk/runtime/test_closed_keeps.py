"""What a graded episode leaves behind on the memory store (the gym's): a proved session
still answers everything it answered, from the store alone, and the store keeps no
object per step that the cycle collector must track.

A proof lets go of what the close kept for it (the closed engine, the pentads' bytes);
after that, the session's head frame, record, blotter, grade and proof are read back
from the store, byte for byte as before, and only its owner reads them. The store keeps
a closed session's journal and artifacts as strings, bytes and tuples of them, which
the collector stops tracking: were it to keep a container per step (a set of owners per
pentad, an object per journal row), every full collection of a training run would
traverse them again, episode after episode.

The attack: an episode of the demo's strategy, proved, its close's objects collected;
then every read again, and a count of the collector's tracked objects the store holds.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
from kestrel_protocol import GradeResult, KestrelError, Proof, canonical_json
from kestrel_sdk.runtime import MemoryStore, Runtime

from tests.kestrel_sdk.runtime.test_live_grade import _sma_cross

STEPS = 600


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    runtime = Runtime(store=MemoryStore())
    yield runtime
    runtime.shutdown()


def _proved(runtime: Runtime, label: str) -> tuple[str, Proof]:
    sid = runtime.open_session("alice", "acme-trend", label).session_id
    assert sid is not None
    for source in _sma_cross()[:STEPS]:
        runtime.submit("alice", sid, source)
    return sid, runtime.proof("alice", sid).model()


def _tracked_from(root: object) -> int:
    """The collector's tracked objects reachable from ``root`` (``root`` included)."""
    seen = {id(root)}
    todo = [root]
    while todo:
        for found in gc.get_referents(todo.pop()):
            if gc.is_tracked(found) and id(found) not in seen and not isinstance(found, type):
                seen.add(id(found))
                todo.append(found)
    return len(seen)


def test_a_proved_session_answers_from_the_store_as_before(runtime: Runtime) -> None:
    sid, proof = _proved(runtime, "episode")
    assert proof.grade.metrics.fills > 10
    gc.collect()  # what the close kept for the proof is gone

    assert runtime.frame("alice", sid).model().frame_root == proof.record.head
    assert runtime.close("alice", sid) == proof.record
    grade = runtime.grade("alice", sid)
    assert isinstance(grade, GradeResult)
    assert canonical_json(grade) == canonical_json(proof.grade)
    members = [(proof.record.head, proof.head)] + [
        (member.root, member)
        for member in (proof.record, proof.blotter, proof.grade, *proof.pentads[:3])
    ]
    for root, member in members:
        stored: dict[str, Any] = runtime.artifact(root, reader="alice")
        assert canonical_json(stored) == canonical_json(member)
        with pytest.raises(KestrelError):  # another principal's view: as if never stored
            runtime.artifact(root, reader="mallory")
    again = runtime.proof("alice", sid)  # from the store: pentads rebuilt, blotter read
    assert again.text.encode("utf-8") == proof.canonical()
    assert runtime.verify_proof(again.to_json()).ok


def test_a_closed_session_keeps_no_tracked_object_per_step(runtime: Runtime) -> None:
    store = runtime.store
    _proved(runtime, "first")
    gc.collect()  # tuples of strings stop being tracked at a collection
    one = _tracked_from(store)
    _proved(runtime, "second")
    gc.collect()
    per_session = _tracked_from(store) - one
    assert per_session < STEPS / 10, per_session
