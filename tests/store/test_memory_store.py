"""The memory store as a user of it meets it: the same roots as the durable stores, proofs
that verify on any runtime, and nothing kept past the store."""

from __future__ import annotations

from pathlib import Path

import anyio
from kestrel_protocol import GradeResult
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.runtime import MemoryStore, Runtime

SOURCES = [
    "buy 10 ACME as a\nadvance 3",
    "sell 5 ACME limit 1000.00 tif gtc",
    "advance 7",
    "cancel all\nadvance 1",
    "sell 5 ACME\nadvance 4",
]


def _run(runtime: Runtime) -> tuple[list[str], str, dict[str, object]]:
    sid = runtime.open_session("alice", "acme-trend", "sweep").session_id
    assert sid is not None
    frames = [runtime.submit("alice", sid, s).model().delivery.frame_root for s in SOURCES]
    grade = runtime.grade("alice", sid)
    assert isinstance(grade, GradeResult)
    return frames, grade.root, runtime.proof("alice", sid).to_json()


def test_a_memory_session_has_the_roots_of_a_sqlite_one_and_its_proof_verifies_there(
    tmp_path: Path,
) -> None:
    memory = Runtime(store=MemoryStore())
    on_disk = Runtime(tmp_path / "home")
    try:
        frames, grade, proof = _run(memory)
        assert _run(on_disk)[:2] == (frames, grade)
        report = on_disk.verify_proof(proof)  # made in memory, verified on SQLite
        assert report.ok, report
        assert report.grade == grade
    finally:
        memory.shutdown()
        on_disk.shutdown()
    assert memory.store.sessions() == []  # shut down: nothing kept


def test_each_memory_store_is_its_own_and_empty(tmp_path: Path) -> None:
    async def main() -> None:
        async with create_sdk(local_transport(home=tmp_path, store="memory:")) as sdk:
            opened = await sdk.open_session("acme-trend", label="one")
            assert opened.session is not None
            moved = await opened.session.submit("advance 2")
            assert moved.delivery.frame.clock.bar == 2
        async with create_sdk(local_transport(home=tmp_path, store="memory:")) as sdk:
            again = await sdk.open_session("acme-trend", label="one")  # the same id, anew
            assert again.session is not None
            assert again.session.id == opened.session.id
            assert (await again.session.frame()).frame.clock.bar == 0  # nothing was kept

    anyio.run(main)
    assert not (tmp_path / "kestrel.db").exists()
