from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError, canonical_json, root_of
from kestrel_sdk.runtime.store import SessionRow, SqliteStore


def test_put_get_is_content_addressed_and_verbatim(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    obj = {"kind": "x", "b": [1, 2, {"z": "é"}], "a": None}
    root = store.put(obj)
    assert root == root_of(obj)
    assert store.get(root) == obj
    assert store.put(obj) == root  # idempotent
    assert store.has(root)
    assert store.get("sha256:" + "0" * 64) is None
    assert not store.has("sha256:" + "0" * 64)


def test_put_refuses_an_object_whose_root_lies(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    with pytest.raises(ValueError, match="claims root"):
        store.put({"kind": "x", "root": "sha256:" + "1" * 64})


def test_database_is_wal_in_home(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "h")
    assert store.path == tmp_path / "h" / "kestrel.db"
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.integrity_check() == "ok"


def test_a_corrupted_row_is_reported_and_never_served(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SqliteStore(tmp_path)
    root = store.put({"kind": "x", "value": "100.00"})
    with sqlite3.connect(store.path) as conn:
        conn.execute(
            "UPDATE artifacts SET body = ? WHERE root = ?",
            (canonical_json({"kind": "x", "value": "999.00"}), root),
        )
    with caplog.at_level(logging.ERROR):
        assert store.get(root) is None
    assert store.lookup(root) == (None, "corrupt")
    assert not store.has(root)
    assert any(root in r.getMessage() and "corrupt" in r.getMessage() for r in caplog.records)
    # bytes that are not even JSON are reported the same way
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE artifacts SET body = ? WHERE root = ?", (b"\xff{", root))
    assert store.lookup(root) == (None, "corrupt")
    # putting the true object again repairs the row
    store.put({"kind": "x", "value": "100.00"})
    assert store.get(root) == {"kind": "x", "value": "100.00"}


def test_non_canonical_bytes_are_not_served(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    root = store.put({"a": 1, "b": 2})
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE artifacts SET body = ? WHERE root = ?", (b'{"b":2,"a":1}', root))
    assert store.lookup(root)[1] == "corrupt"


def test_sessions_labels_and_journal(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path)
    row = SessionRow("ks_a", "alice", "acme-trend", "sha256:" + "a" * 64, "1", "open", None, None)
    assert store.insert_session(row)
    assert not store.insert_session(row)
    assert store.session("ks_a") == row
    assert store.labels("alice", "sha256:" + "a" * 64) == {"1"}
    assert store.labels("bob", "sha256:" + "a" * 64) == set()
    pentad = {"seq": 1, "session": "ks_a"}
    proot = root_of(pentad)
    store.append(
        "ks_a", 1, proot, canonical_json(pentad), "sha256:" + "f" * 64, status="stood-down"
    )
    assert [(e.seq, e.pentad_root) for e in store.journal("ks_a")] == [(1, proot)]
    assert store.get(proot) == pentad
    assert store.session("ks_a").status == "stood-down"  # type: ignore[union-attr]
    # a duplicate seq is refused and leaves nothing half-written
    other = {"seq": 1, "session": "ks_a", "x": 1}
    with pytest.raises(sqlite3.IntegrityError):
        store.append("ks_a", 1, root_of(other), canonical_json(other), "sha256:" + "e" * 64)
    assert store.get(root_of(other)) is None
    assert len(store.journal("ks_a")) == 1


def test_a_second_store_on_the_same_home_sees_committed_rows(tmp_path: Path) -> None:
    first = SqliteStore(tmp_path)
    root = first.put({"k": "v"})
    second = SqliteStore(tmp_path)
    assert second.get(root) == {"k": "v"}
    first.close()
    second.close()


def test_a_store_of_another_schema_is_refused_clearly(tmp_path: Path) -> None:
    SqliteStore(tmp_path).close()
    with sqlite3.connect(tmp_path / "kestrel.db") as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    with pytest.raises(KestrelError) as err:
        SqliteStore(tmp_path)
    assert err.value.code == "BACKEND_UNAVAILABLE"
    assert "schema 0" in err.value.message
