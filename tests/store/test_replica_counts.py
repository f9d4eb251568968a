"""Each session a principal opens is counted once on its horizon row, whatever order
replicas (runtimes on one store: threads here, or another process) open it, open it
again by its label, repair it or die in. A second count would make each step of a lone
session write a horizon raise, as if the principal had another session to compare.

The opening writes the session's row, then counts it; a replica finding the row
uncounted (its opener killed between the two) counts it itself (``Horizons.resumed``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kestrel_protocol.store import RuntimeStore
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.store.conftest import horizon_key, raw_sql

SCENARIO = "acme-trend"
WAIT_S = 60


class _Between:
    """A runtime store whose first ``count_session`` first runs ``between``: another
    replica's call landing after this replica decided to count a session (its row
    written, or found uncounted), before it counted it."""

    def __init__(self, store: RuntimeStore, between: Callable[[], object]) -> None:
        self._store = store
        self._between: Callable[[], object] | None = between

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def count_session(self, *args: Any, **kwargs: Any) -> Any:
        between, self._between = self._between, None
        if between is not None:
            between()
        return self._store.count_session(*args, **kwargs)


def _runtime(url: str, between: Callable[[], object] | None = None) -> Runtime:
    store = open_runtime_store(url)
    return Runtime(store=store if between is None else _Between(store, between))


def _sessions(runtime: Runtime, principal: str = "alice") -> int:
    horizon = runtime.store.horizon(principal, horizon_key(SCENARIO))
    return 0 if horizon is None else horizon.sessions


@pytest.fixture
def other(store_url: str) -> Iterator[Runtime]:
    """Another replica on the store."""
    runtime = _runtime(store_url)
    yield runtime
    runtime.shutdown()


def test_one_label_opened_on_two_replicas_at_once_is_one_session(
    store_url: str, other: Runtime
) -> None:
    """The other replica opens the label (finding the row uncounted: it counts it)
    between this one's row and its count (before: 2)."""
    here = _runtime(store_url, lambda: other.open_session("alice", SCENARIO, "race"))
    try:
        sid = here.open_session("alice", SCENARIO, "race").session_id
        assert sid == other.open_session("alice", SCENARIO, "race").session_id
        assert _sessions(here) == 1
    finally:
        here.shutdown()


def _held_count(runtime: Runtime) -> tuple[threading.Event, threading.Event, threading.Event]:
    """``runtime``'s next count waits for ``go`` (``reached`` once it waits; ``done``
    once it counted)."""
    reached, go, done = threading.Event(), threading.Event(), threading.Event()
    store = runtime.store
    count = store.count_session

    def held(*args: Any, **kwargs: Any) -> Any:
        reached.set()
        assert go.wait(WAIT_S)
        try:
            return count(*args, **kwargs)
        finally:
            done.set()

    store.count_session = held  # type: ignore[method-assign]
    return reached, go, done


def _counted_between(go: threading.Event, done: threading.Event) -> Callable[[], None]:
    def between() -> None:
        go.set()
        assert done.wait(WAIT_S)

    return between


def test_a_count_landing_while_another_replica_repairs_is_one_session(
    store_url: str, other: Runtime
) -> None:
    """The reverse order: the other replica wrote the row and is about to count it when
    this one opens the label, finds it uncounted and decides to count it; the other's
    count lands first (before: 2)."""
    reached, go, done = _held_count(other)
    opening = threading.Thread(target=other.open_session, args=("alice", SCENARIO, "race"))
    opening.start()
    assert reached.wait(WAIT_S)  # its row is written, its count held
    here = _runtime(store_url, _counted_between(go, done))
    try:
        sid = here.open_session("alice", SCENARIO, "race").session_id
        opening.join(WAIT_S)
        assert here.store.session(sid or "") is not None
        assert _sessions(here) == 1
    finally:
        go.set()  # released however this one ended
        opening.join(WAIT_S)
        here.shutdown()


# Another process on the store (``argv[1]``) opening ``argv[3]`` for alice, killed
# (SIGKILL) in its store's method ``argv[2]``.
KILLED = """
import os, signal, sys
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
runtime = Runtime(store=open_runtime_store(sys.argv[1]))
setattr(runtime.store, sys.argv[2], lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL))
runtime.open_session("alice", "acme-trend", sys.argv[3])
"""


def test_a_killed_opening_repaired_by_two_replicas_at_once_is_one_session(
    store_url: str, other: Runtime
) -> None:
    """A process killed as it counted the session it had opened (its row written); the
    label is opened again on two replicas at once, the other's repair landing while
    this one is about to count (before: 2). Each later opening counts nothing more."""
    killed = subprocess.run(
        [sys.executable, "-c", KILLED, store_url, "count_session", "trade"],
        timeout=300,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    here = _runtime(store_url, lambda: other.open_session("alice", SCENARIO, "trade"))
    try:
        assert _sessions(here) == 0  # the row, uncounted
        sid = here.open_session("alice", SCENARIO, "trade").session_id
        assert sid is not None
        assert _sessions(here) == 1
        for runtime in (here, other):
            assert runtime.open_session("alice", SCENARIO, "trade").session_id == sid
        assert _sessions(here) == 1
        second = other.open_session("alice", SCENARIO, "scout").session_id
        assert second is not None
        assert _sessions(here) == 2
    finally:
        here.shutdown()


# Another process on the store (``argv[1]``): for each line ``principal label`` read,
# says it is opening that label for that principal, opens it and answers its session id.
RACER = """
import sys
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
runtime = Runtime(store=open_runtime_store(sys.argv[1]))
print("ready", flush=True)
for line in sys.stdin:
    principal, label = line.split()
    print("opening", flush=True)
    print(runtime.open_session(principal, "acme-trend", label).session_id, flush=True)
runtime.shutdown()
"""
ROUNDS = 300


def test_two_processes_racing_one_label_count_it_once_each_time(store_url: str) -> None:
    """Another process and this one open one label at once, each round another
    principal's (before: about one round in four counted twice)."""
    here = _runtime(store_url)
    racer = subprocess.Popen(
        [sys.executable, "-c", RACER, store_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    assert racer.stdin is not None
    assert racer.stdout is not None
    try:
        assert racer.stdout.readline() == "ready\n"
        for n in range(ROUNDS):
            racer.stdin.write(f"p{n} race\n")
            racer.stdin.flush()
            assert racer.stdout.readline() == "opening\n"  # as this process does
            sid = here.open_session(f"p{n}", SCENARIO, "race").session_id
            assert racer.stdout.readline() == f"{sid}\n"
        twice = [n for n in range(ROUNDS) if _sessions(here, f"p{n}") != 1]
        assert twice == []
    finally:
        racer.stdin.close()
        assert racer.wait(WAIT_S) == 0
        here.shutdown()


def test_a_store_from_before_the_flag_is_upgraded_and_keeps_its_counts(store_url: str) -> None:
    """A store of the schema before sessions kept whether they were counted (SQLite's 7,
    PostgreSQL's 3; made here by dropping the column) is upgraded in place when opened
    and keeps its counts: the session whose opening was killed before counting it is
    counted when opened again, once; the others, stepped, closed or never stepped, are
    never counted again, on any replica."""
    first = _runtime(store_url)
    scout = first.open_session("alice", SCENARIO, "scout").session_id
    assert scout is not None
    first.submit("alice", scout, "advance 5")
    first.open_session("alice", SCENARIO, "idle")
    done = first.open_session("bob", SCENARIO, "done").session_id
    assert done is not None
    first.close("bob", done)
    first.shutdown()
    killed = subprocess.run(
        [sys.executable, "-c", KILLED, store_url, "count_session", "trade"],
        timeout=300,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    raw = raw_sql(store_url)
    raw("ALTER TABLE {sessions} DROP COLUMN counted", ())
    raw("ALTER TABLE {sessions} DROP COLUMN lineage", ())
    raw("ALTER TABLE {journal} DROP COLUMN bar", ())
    raw("ALTER TABLE {feed_bars} DROP COLUMN visible_by", ())
    before = ("schema", "7") if store_url.startswith("sqlite:") else ("runtime", "3")
    raw("UPDATE {meta} SET value = ? WHERE key = ?", (before[1], before[0]))

    here, there = _runtime(store_url), _runtime(store_url)
    try:
        assert (_sessions(here), _sessions(here, "bob")) == (2, 1)
        assert here.open_session("alice", SCENARIO, "trade").session_id is not None
        assert _sessions(here) == 3
        for runtime in (here, there, here):
            for label in ("trade", "idle", "scout"):
                runtime.open_session("alice", SCENARIO, label)
            runtime.open_session("bob", SCENARIO, "another")
        assert (_sessions(here), _sessions(here, "bob")) == (3, 2)
        assert there.open_session("alice", SCENARIO, "new").session_id is not None
        assert _sessions(there) == 4
    finally:
        here.shutdown()
        there.shutdown()
