"""A waiting ``advance 1 wait 30s`` wakes when its bar is published by another process,
told so by the store (PostgreSQL: the append's ``NOTIFY``; SQLite: the file's
``data_version``), not by reading the store over and over: each waiter here re-reads
the store on its own only every ten minutes, and still wakes at once, having read the
store a handful of times. A listener connection that is dropped is replaced, and no
waiter outlives its deadline meanwhile."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
from kestrel_sdk.transports.feed_waiter import StoreFeedWaiter

from tests.kestrel_sdk.runtime.forward.scenarios import SCENARIO_ID, bars, forward_catalog

AT = "2026-12-01T14:31:02Z"
RECHECK_S = 600.0  # a waiter's own re-reads: never, within these tests
READS = 8  # at most this many reads of the store per wait (a 20 ms poll reads ~50 a second)

OTHER = """
import sys
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
runtime = Runtime(sys.argv[1], [sys.argv[2]], store=open_runtime_store(sys.argv[3]))
runtime.append_bars("fwd-live", sys.stdin.buffer.read(), clock=lambda: "T")
"""


class _Counted(StoreFeedWaiter):
    """The default waiter, counting its reads of the store and running ``then`` once a
    wait has begun (an event, no sleep)."""

    def __init__(self, runtime_store: object, then: Callable[[], object]) -> None:
        super().__init__(runtime_store, recheck_s=RECHECK_S)  # type: ignore[arg-type]
        self.then = then
        self.reads = 0

    def _enough(self, scenario_id: str, bars_needed: int) -> bool:
        self.reads += 1
        return super()._enough(scenario_id, bars_needed)

    def wait(self, scenario_id: str, bars_needed: int, seconds: float) -> bool:
        self.reads = 0
        threading.Thread(target=self.then).start()
        return super().wait(scenario_id, bars_needed, seconds)


def _session(tmp_path: Path, url: str, waiter: Callable[[object], _Counted]) -> tuple[Runtime, str]:
    forward_catalog(tmp_path)
    store = open_runtime_store(url)
    runtime = Runtime(tmp_path / "home", [tmp_path / "catalog"], store=store, waiter=waiter(store))
    runtime.append_bars(SCENARIO_ID, bars(0), clock=lambda: AT)
    sid = runtime.open_session("alice", SCENARIO_ID).session_id
    assert sid is not None
    return runtime, sid


def _append_elsewhere(tmp_path: Path, url: str, first: int) -> None:
    command = [sys.executable, "-c", OTHER, str(tmp_path / "o"), str(tmp_path / "catalog"), url]
    subprocess.run(command, input=bars(first), check=True)


def test_a_waiter_wakes_on_an_append_by_another_process(tmp_path: Path, store_url: str) -> None:
    counted: list[_Counted] = []

    def waiter(store: object) -> _Counted:
        counted.append(_Counted(store, lambda: _append_elsewhere(tmp_path, store_url, 1)))
        return counted[0]

    runtime, sid = _session(tmp_path, store_url, waiter)
    frame = runtime.submit("alice", sid, "advance 1 wait 300s").model().delivery.frame
    assert frame.clock.bar == 1
    assert counted[0].reads <= READS  # woken by the store's signal, not by re-reading it


def _listeners(dsn: str, channel: str) -> list[int]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE query = %s", (f'LISTEN "{channel}"',)
        ).fetchall()
    return [int(row[0]) for row in rows]


def test_a_dropped_listener_is_replaced_and_waiters_keep_their_deadline(
    tmp_path: Path, postgres_dsn: str
) -> None:
    """The listener's connection is terminated by the server while a waiter waits; the
    bar published meanwhile (its notice lost) still wakes it, at once, and a wait for a
    bar nobody publishes is refused at its deadline."""
    dropped = threading.Event()
    counted: list[_Counted] = []

    def drop_then_append() -> None:
        store = runtime.store
        channel = getattr(store, "feed_channel", "")
        found: list[int] = []
        for _ in range(200):  # the waiter's listener is up once the wait has begun
            found = _listeners(postgres_dsn, channel)
            if found:
                break
            time.sleep(0.05)
        if found:  # (none: no listener to drop; the test fails on `dropped`)
            import psycopg

            with psycopg.connect(postgres_dsn, autocommit=True) as conn:
                conn.execute("SELECT pg_terminate_backend(%s)", (found[0],))
            dropped.set()
        runtime.append_bars(SCENARIO_ID, bars(1), clock=lambda: AT)

    def waiter(store: object) -> _Counted:
        counted.append(_Counted(store, drop_then_append))
        return counted[0]

    runtime, sid = _session(tmp_path, postgres_dsn, waiter)
    frame = runtime.submit("alice", sid, "advance 1 wait 300s").model().delivery.frame
    assert dropped.is_set()
    assert frame.clock.bar == 1
    assert counted[0].reads <= READS  # woken by the reconnected listener, not a re-read

    counted[0].then = lambda: None
    with pytest.raises(KestrelError) as caught:
        runtime.submit("alice", sid, "advance 1 wait 300ms").model()
    assert caught.value.code == RefusalCode.BAR_NOT_PUBLISHED
