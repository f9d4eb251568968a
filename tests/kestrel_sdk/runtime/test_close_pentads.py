"""A close builds each pentad's canonical bytes once: the store keeps them as the close
built them and the proof carries those very bytes (a gym episode's end built each of
its 2,519 pentads twice, once for the store and once for the proof).

The attack: a pentad stored or proved with bytes that differ from the ones rebuilt from
its journal row, or built more than once per close, on the memory and SQLite stores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol import Pentad, Proof, canonical_json
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime import grading as grading_module
from kestrel_sdk.runtime import pentads as pentads_module
from kestrel_sdk.runtime.stores import open_runtime_store
from kestrel_sdk.runtime.stores import rows as rows_module

SOURCES = [
    "buy 10 ACME\nadvance 3",
    'sell 5 ACME limit 1000.00 tif gtc\nadvance 2\n# "é" ',
    "advance 1",
    "buy 7 ACME\nadvance 1",
    "advance 1",
]


@pytest.mark.parametrize("store", ["memory:", "sqlite"])
def test_a_close_builds_each_pentad_once_and_stores_what_its_proof_carries(
    store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    url = "memory:" if store == "memory:" else f"sqlite:///{home / 'kestrel.db'}"
    runtime = Runtime(home, store=open_runtime_store(url, home))
    sid = runtime.open_session("alice", "acme-trend", "once").session_id
    assert sid is not None
    for source in SOURCES * 4:
        runtime.submit("alice", sid, source)
    built: list[Any] = []
    real = pentads_module.pentad_bytes

    def counted(*args: Any) -> tuple[str, bytes]:
        built.append(args)
        return real(*args)

    monkeypatch.setattr(grading_module, "pentad_bytes", counted)
    monkeypatch.setattr(rows_module, "pentad_bytes", counted)
    proof = runtime.proof("alice", sid).model()
    assert len(built) == len(SOURCES) * 4  # one build per pentad, for the store and proof
    monkeypatch.undo()
    assert len(proof.pentads) == len(SOURCES) * 4
    journal = runtime.store.journal(sid)
    for seq, pentad in enumerate(proof.pentads, start=1):
        entry = journal[seq - 1]
        root, text = real(sid, seq, entry.prev, entry.source)
        assert pentad.root == root
        assert canonical_json(pentad) == text
        stored = runtime.artifact(pentad.root)  # served, its root verified
        assert canonical_json(stored) == text
        assert Pentad.parse(stored) == pentad
    assert Proof.parse(proof.canonical()) == proof
    runtime.shutdown()
