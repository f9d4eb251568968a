from __future__ import annotations

import threading
from pathlib import Path

from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores.sqlite import SqliteStore


def _sqlite(runtime: Runtime) -> SqliteStore:
    """The runtime's store, which these tests reach into: the embedded SQLite one."""
    assert isinstance(runtime.store, SqliteStore)
    return runtime.store


SOURCES = ["buy 3 ACME\nadvance 2", "advance 1", "sell 1 ACME\nadvance 3", "advance 1"] * 10


def _drive(runtime: Runtime, principal: str, roots: dict[str, str]) -> None:
    opened = runtime.open_session(principal, "acme-trend", "c")
    assert opened.session_id is not None
    for source in SOURCES:
        response = runtime.submit(principal, opened.session_id, source).model()
    roots[principal] = response.delivery.frame_root


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    shared = Runtime(tmp_path / "home")
    other = Runtime(tmp_path / "home")  # a second connection, as another process would have
    roots: dict[str, str] = {}
    threads = [
        threading.Thread(target=_drive, args=(shared if i % 2 else other, f"p{i}", roots))
        for i in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(roots) == 6
    assert _sqlite(shared).integrity_check() == "ok"
    fresh = Runtime(tmp_path / "home")  # everything is in the file, in order
    for principal, root in roots.items():
        sid = fresh.open_session(principal, "acme-trend", "c").session_id
        assert sid is not None
        assert [e.seq for e in fresh.store.journal(sid)] == list(range(1, len(SOURCES) + 1))
        assert fresh.frame(principal, sid).model().frame_root == root
    reference = Runtime(tmp_path / "reference")
    expected: dict[str, str] = {}
    _drive(reference, "p0", expected)
    # each principal's session is its own, so only p0's roots can be compared directly
    assert roots["p0"] == expected["p0"]
    for runtime in (shared, other, fresh, reference):
        runtime.shutdown()
