"""One horizon per principal across processes on one home (issue 45).

A process keeps the sessions it has touched in memory; another process on the same
store may move them on or close them meanwhile. The attack: process B reads the scout
session at bar 0 (caching it), the scout runs to the tape's end through process A, then
the trading session is opened through B. Its horizon must be the scout's clock in the
store (bar 2519), not B's copy (bar 0): the trader fails ``no-lookahead`` naming the
scout, in every order of those steps and whichever process opens the trader.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol import GradeResult
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.store.conftest import horizon_key

SCENARIO = "acme-trend"
END = 2519  # acme-trend's last bar
TRADE = "buy 10 ACME\nadvance 1"


def _check(grade: GradeResult | object) -> tuple[bool, str]:
    assert isinstance(grade, GradeResult)
    found = next(c for c in grade.conformance.checks if c.id == "no-lookahead")
    return found.passed, found.detail


def _assert_behind_scout(grade: GradeResult | object, scout: str) -> None:
    """``grade`` (the trader's) fails ``no-lookahead`` naming ``scout``, at the tape's end
    before the trader's first submission."""
    passed, detail = _check(grade)
    assert not passed
    assert detail.startswith(
        f"session {scout} of the same principal had reached bar {END} before submission 1"
    )


def _open(rt: Runtime, label: str, principal: str = "alice") -> str:
    sid = rt.open_session(principal, SCENARIO, label).session_id
    assert sid is not None
    return sid


def _orders() -> list[tuple[str, ...]]:
    """Every order of: the scout opened through A, read through B (B caches it), run to
    the end through A, and the trader opened; the scout is opened before it is read or
    run."""
    steps = ("scout opened", "scout read", "scout run", "trader opened")
    return [
        order
        for order in itertools.permutations(steps)
        if order.index("scout opened") < min(order.index("scout read"), order.index("scout run"))
    ]


def _pair(request: pytest.FixtureRequest, kind: str, home: Path) -> tuple[Runtime, Runtime]:
    """Runtimes A and B on one store: the SQLite file of ``home``, or a PostgreSQL
    schema (as two door replicas share it), each with its own connection."""
    if kind == "sqlite":
        return Runtime(home, sealed=[SCENARIO]), Runtime(home, sealed=[SCENARIO])
    dsn = request.getfixturevalue("postgres_dsn")
    a, b = (open_runtime_store(dsn) for _ in range(2))
    return Runtime(home, sealed=[SCENARIO], store=a), Runtime(home, sealed=[SCENARIO], store=b)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
@pytest.mark.parametrize("trader_side", ["B", "A"])
@pytest.mark.parametrize("order", _orders(), ids=" > ".join)
def test_every_order_of_scout_and_trader_across_two_runtimes(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    order: tuple[str, ...],
    trader_side: str,
    kind: str,
) -> None:
    a, b = _pair(request, kind, tmp_path)
    opener = b if trader_side == "B" else a
    made: dict[str, str] = {}
    steps: dict[str, Callable[[], Any]] = {
        "scout opened": lambda: made.setdefault("scout", _open(a, "scout")),
        "scout read": lambda: b.frame("alice", made["scout"]),
        "scout run": lambda: a.submit("alice", made["scout"], f"advance {END}"),
        "trader opened": lambda: made.setdefault("trader", _open(opener, "trade")),
    }
    for step in order:
        steps[step]()
    b.submit("alice", made["trader"], TRADE)  # the trader's first decision, through B
    passed, detail = _check(b.grade("alice", made["trader"]))
    assert not passed
    assert detail.startswith(
        f"session {made['scout']} of the same principal had reached bar {END} "
        "before submission 1 at bar 0"
    )
    a.shutdown()
    b.shutdown()


def test_a_scout_run_and_closed_by_another_os_process_is_seen_by_the_one_that_cached_it(
    tmp_path: Path,
) -> None:
    """B (this process) holds the scout open at bar 0; ``kestrel run`` in another OS
    process resumes it by label, runs it to the end, closes and grades it; B then opens
    the trading session: it fails naming the scout and the bar it closed at."""
    home = tmp_path / "home"
    b = Runtime(home, sealed=[SCENARIO])
    scout = _open(b, "scout", principal="local")  # the CLI's principal
    assert b.frame("local", scout).model().frame.clock.bar == 0  # B now holds the scout at bar 0
    program = tmp_path / "scout.kes"
    program.write_text(f"advance {END}\n")
    kestrel = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()"]
    scouting = ["run", str(program), "--scenario", SCENARIO, "--label", "scout", "--json"]
    run = subprocess.run(
        [*kestrel, "--home", str(home), *scouting],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert GradeResult.model_validate_json(run.stdout).session == scout
    trader = _open(b, "trade", principal="local")
    b.submit("local", trader, TRADE)
    _assert_behind_scout(b.grade("local", trader), scout)
    b.shutdown()


def test_a_session_served_by_two_processes_has_the_record_one_process_gives(
    tmp_path: Path,
) -> None:
    """The trading session, behind its scout, is served by A then B: its record (and so
    its grade root) is the one a single process makes of the same steps, naming the
    first submission made behind the horizon and no other."""

    def trade(first: Runtime, second: Runtime) -> GradeResult:
        scout = _open(first, "scout")
        first.submit("alice", scout, f"advance {END}")
        trader = _open(first, "trade")
        first.submit("alice", trader, TRADE)
        second.submit("alice", trader, "sell 10 ACME\nadvance 1")
        grade = second.grade("alice", trader)
        assert isinstance(grade, GradeResult)
        return grade

    alone = Runtime(tmp_path / "one")
    single = trade(alone, alone)
    alone.shutdown()
    a, b = Runtime(tmp_path / "two"), Runtime(tmp_path / "two")
    shared = trade(a, b)
    a.shutdown()
    b.shutdown()
    assert _check(shared) == _check(single)
    assert "more such event" not in _check(shared)[1]
    assert shared.root == single.root


def test_two_sessions_of_a_principal_stepping_at_once_on_two_replicas_both_go_on(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """PostgreSQL: two sessions of one principal on one scenario, stepped at once through
    two replicas, each step raising the horizon row it read (locked until its commit):
    every step is accepted (none fails on a lock the other holds, as two steps sharing
    the row and then raising it would) and the row ends at the furthest clock."""
    a, b = _pair(request, "postgresql", tmp_path)
    one, two = _open(a, "one"), _open(b, "two")
    steps = 60
    together = threading.Barrier(2)

    def run(rt: Runtime, sid: str) -> int:
        together.wait()
        for _ in range(steps):
            rt.submit("alice", sid, "advance 1")
        return rt.frame("alice", sid).model().frame.clock.bar

    with ThreadPoolExecutor(2) as pool:
        ran = [pool.submit(run, rt, sid) for rt, sid in ((a, one), (b, two))]
        assert [future.result(timeout=120) for future in ran] == [steps, steps]
    horizon = a.store.horizon("alice", horizon_key(SCENARIO))
    assert horizon is not None
    assert (horizon.bar, horizon.sessions) == (steps, 2)
    a.shutdown()
    b.shutdown()


class _MarkingWith:
    """A runtime store whose steps, as they mark (in the step's transaction on
    PostgreSQL), first run ``during(store)``."""

    def __init__(self, inner: Any, during: Callable[[Any], None]) -> None:
        self._inner = inner
        self._during = during

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def append(self, *args: Any, marks: Any = None, **kwargs: Any) -> Any:
        if marks is None:
            return self._inner.append(*args, **kwargs)
        during, inner = self._during, self._inner

        class Marking:
            def due(self, horizon: Any) -> bool:
                return bool(marks.due(horizon))

            def mark(self, horizon: Any) -> None:
                during(inner)
                marks.mark(horizon)

        return self._inner.append(*args, marks=Marking(), **kwargs)


def test_a_trader_opened_on_another_replica_while_the_scout_steps_sees_that_step(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """PostgreSQL: the scout's run to the tape's end has read its horizon row (one
    session) and not yet committed when the trader is opened through another replica.
    The opener's count waits for the scout's commit (the step's read locks the row), then
    reads the scout's clock: the trader fails ``no-lookahead`` naming the scout at bar
    2519 (unlocked, the opener read the scout at bar 1, before its commit, and the
    scout's step saw one session: the horizon stayed at bar 1)."""
    import psycopg

    dsn = request.getfixturevalue("postgres_dsn")
    b = Runtime(tmp_path, sealed=[SCENARIO], store=open_runtime_store(dsn))
    opened: list[str] = []
    openers: list[threading.Thread] = []

    def open_trader_meanwhile(store: Any) -> None:
        if not openers:
            return  # armed below
        with store._connection() as conn:  # the step's own transaction
            step = conn.execute("SELECT pg_backend_pid()").fetchone()
        opener = openers[0]
        opener.start()
        with psycopg.connect(dsn, autocommit=True) as watch:
            while opener.is_alive():  # until the opener waits for the step, or is done
                if watch.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))", step
                ).fetchone():
                    return
                opener.join(0.01)

    a = Runtime(
        tmp_path,
        sealed=[SCENARIO],
        store=_MarkingWith(open_runtime_store(dsn), open_trader_meanwhile),
    )
    scout = _open(a, "scout")
    a.submit("alice", scout, "advance 1")  # seq 1 written; the run below is a plain step
    openers.append(threading.Thread(target=lambda: opened.append(_open(b, "trade"))))
    a.submit("alice", scout, f"advance {END - 1}")
    openers[0].join(60)
    trader = opened[0]
    b.submit("alice", trader, TRADE)
    _assert_behind_scout(b.grade("alice", trader), scout)
    a.shutdown()
    b.shutdown()


class _CountingStore:
    """A runtime store that counts the calls made to it, by method name."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._inner, name)
        if not callable(found):
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            return found(*args, **kwargs)

        return counted


def test_a_submission_and_a_read_cost_the_same_store_calls_however_long_the_sessions(
    tmp_path: Path,
) -> None:
    """Two sessions of one principal on a scenario (each step may move the horizon): a
    submission, and a frame read of the other session, make the same store calls at
    step 10 as at step 400, and none reads a journal."""
    store = _CountingStore(open_runtime_store(None, tmp_path))
    rt = Runtime(tmp_path, store=store)
    scout, trader = _open(rt, "scout"), _open(rt, "trade")

    def step_cost(sid: str) -> dict[str, int]:
        store.calls.clear()
        rt.submit("alice", sid, "advance 1")
        rt.frame("alice", trader)
        return dict(store.calls)

    rt.frame("alice", trader)  # in memory from here on
    for _ in range(9):
        rt.submit("alice", scout, "advance 1")
    early = step_cost(scout)
    for _ in range(390):
        rt.submit("alice", scout, "advance 1")
    late = step_cost(scout)
    assert early == late
    assert "journal" not in late
    assert sum(late.values()) <= 6, late
    rt.shutdown()


# Another process: its runtime's store (``$KESTREL_STORE``, else the home's SQLite file)
# killed (SIGKILL) in the method named, then one submission (session, source) or the
# trading session opened (label).
KILLED = """
import os, signal, sys
from kestrel_sdk.runtime import Runtime
runtime = Runtime(sys.argv[1])
setattr(runtime.store, sys.argv[2], lambda *args: os.kill(os.getpid(), signal.SIGKILL))
if len(sys.argv) > 4:
    runtime.submit("alice", sys.argv[3], sys.argv[4])
else:
    runtime.open_session("alice", "acme-trend", sys.argv[3])
"""


def _killing(
    request: pytest.FixtureRequest, kind: str, home: Path
) -> tuple[Runtime, dict[str, str]]:
    """This process's runtime on the store of ``kind`` (the SQLite file of ``home``, or a
    PostgreSQL schema) and the environment of another process on the same store."""
    env = dict(os.environ)
    env.pop("KESTREL_STORE", None)
    if kind == "sqlite":
        return Runtime(home), env
    dsn = request.getfixturevalue("postgres_dsn")
    env["KESTREL_STORE"] = dsn
    return Runtime(home, store=open_runtime_store(dsn)), env


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
@pytest.mark.parametrize("killed_in", ["add_read", "raise_horizon"])
def test_a_process_killed_as_its_step_marks_the_horizon_leaves_the_step_marked_or_undone(
    request: pytest.FixtureRequest, tmp_path: Path, killed_in: str, kind: str
) -> None:
    """The scout reaches the tape's end; a step (the trader's first decision behind the
    scout, or the scout's run while the trader is open) is made by a process killed as it
    writes what the step marks. Its journal row must not outlive the mark: the agent
    submits again what was never acknowledged, and the trader fails ``no-lookahead``
    naming the scout, as it would had nobody been killed (before: the row was committed
    alone, and the trader passed; on PostgreSQL until the step became one transaction)."""
    home = tmp_path / "home"
    here, env = _killing(request, kind, home)
    scout, trader = _open(here, "scout"), _open(here, "trade")
    run = f"advance {END}"
    if killed_in == "add_read":
        here.submit("alice", scout, run)
        killed = (trader, TRADE)
    else:
        killed = (scout, run)
    child = subprocess.run(
        [sys.executable, "-c", KILLED, str(home), killed_in, *killed],
        env=env,
        timeout=300,
        check=False,
    )
    assert child.returncode == -9
    sid, source = killed
    if here.frame("alice", sid).model().frame.seq == 0:  # not acknowledged: submitted again
        here.submit("alice", sid, source)
    if killed_in == "raise_horizon":
        here.submit("alice", trader, TRADE)
    _assert_behind_scout(here.grade("alice", trader), scout)
    here.shutdown()


@pytest.mark.parametrize("killed_in", ["count_session", "raise_horizon"])
def test_a_process_killed_as_it_opens_the_trader_leaves_it_checked_against_the_scout(
    tmp_path: Path, killed_in: str
) -> None:
    """The scout at the tape's end; the trading session is opened by a process killed
    after its row was written, as it counts the session or writes the scout's clock. The
    agent opens it again by its label (the open was never answered) and trades: it fails
    ``no-lookahead`` naming the scout (before: the trader was never counted, or the
    scout's clock never written, and it passed)."""
    home = tmp_path / "home"
    here = Runtime(home)
    scout = _open(here, "scout")
    here.submit("alice", scout, f"advance {END}")
    child = subprocess.run(
        [sys.executable, "-c", KILLED, str(home), killed_in, "trade"], timeout=300, check=False
    )
    assert child.returncode == -9
    trader = _open(here, "trade")
    assert here.store.session(trader) is not None  # the killed process had written its row
    here.submit("alice", trader, TRADE)
    _assert_behind_scout(here.grade("alice", trader), scout)
    here.shutdown()
