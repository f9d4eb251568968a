"""A store from before horizons were keyed by lineage tags is re-keyed when opened
(issue 48, session 15).

Its rows were keyed by a scenario's id, or by the first id of the process's catalog
holding the same bars: two processes with different catalogs left two rows for one
lineage (``acme-trend`` and ``aaa-copy``, an import of its bars). Made here as that code
left it (the store's rows written back by SQL, its schema version set back: SQLite's 8,
PostgreSQL's 4), it is opened by this code: a scout made before the upgrade (a session
run to the tape's end, a tape read) is still judged after it, the two rows joined (the
furthest bar, the sessions added up) once, whichever catalog opens it first.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.kestrel_sdk.runtime.test_horizon_catalogs import (
    COPY,
    SCENARIO,
    _child,
    copy_catalog,
    failed_lookahead,
)
from tests.store.conftest import horizon_key, raw_sql

END = 2519  # acme-trend's last bar
OLD = {"sqlite": ("schema", "8"), "postgresql": ("runtime", "4")}
NEWER = {"sqlite": ("schema", "12"), "postgresql": ("runtime", "8")}


def _kind(url: str) -> str:
    return "sqlite" if url.startswith("sqlite:") else "postgresql"


def _runtime(url: str, home: Path, catalogs: list[Path]) -> Runtime:
    return Runtime(home, catalogs, store=open_runtime_store(url))


def _as_before_lineage(url: str, versions: dict[str, tuple[str, str]]) -> None:
    """The store as the code before lineage keys left it: no session ``lineage``, no
    journal ``bar`` (nor a feed bar's ``visible_by``, kept later still), its schema
    version the one ``versions`` gives its kind."""
    raw = raw_sql(url)
    raw("ALTER TABLE {sessions} DROP COLUMN lineage", ())
    raw("ALTER TABLE {journal} DROP COLUMN bar", ())
    raw("ALTER TABLE {feed_bars} DROP COLUMN visible_by", ())
    key, version = versions[_kind(url)]
    raw("UPDATE {meta} SET value = ? WHERE key = ?", (version, key))


def _old_store(url: str, home: Path, catalog: Path) -> str:
    """alice's scout run to the tape's end (acme-trend, shipped catalog) and an idle
    session opened by a process whose catalog also held ``aaa-copy``, bob's tape read:
    the rows the code before kept for them (the idle session counted apart, under
    ``aaa-copy``); the scout's id."""
    shipped = _runtime(url, home, [])
    scout = shipped.open_session("alice", SCENARIO, "scout").session_id
    assert scout is not None
    shipped.submit("alice", scout, f"advance {END}")
    shipped.tape("bob", SCENARIO)
    shipped.shutdown()
    with_copy = _runtime(url, home, [catalog])
    assert with_copy.open_session("alice", SCENARIO, "idle").session_id is not None
    with_copy.shutdown()
    raw = raw_sql(url)
    raw("DELETE FROM {horizons}", ())
    for row in (
        ("alice", SCENARIO, -1, "", 1),  # a lone session writes no bar
        ("alice", COPY, -1, "", 1),
        ("bob", SCENARIO, END, f"tape {SCENARIO} read", 0),
    ):
        raw(
            "INSERT INTO {horizons} (principal, scenario, bar, what, sessions)"
            " VALUES (?, ?, ?, ?, ?)",
            row,
        )
    raw("DROP TABLE {unkeyed_horizons}", ())
    _as_before_lineage(url, OLD)
    return scout


@pytest.mark.parametrize("first", ["with the copy", "shipped"])
def test_a_scout_made_before_the_upgrade_is_judged_after_it(
    store_url: str, tmp_path: Path, first: str
) -> None:
    home, catalog = tmp_path / "home", copy_catalog(tmp_path / "catalog")
    scout = _old_store(store_url, home, catalog)
    upgrading = _runtime(store_url, home, [catalog] if first == "with the copy" else [])
    other = _runtime(store_url, home, [] if first == "with the copy" else [catalog])
    try:
        key = horizon_key(SCENARIO)
        detail = failed_lookahead(upgrading, "alice")
        assert detail.startswith(  # written as the rows joined, named with the scout's twin
            f"session {scout} on {SCENARIO} of the same principal had reached bar {END} "
            "before submission 1 at bar 0"
        ), detail
        assert failed_lookahead(other, "bob").startswith(
            f"tape {SCENARIO} read before submission 1"
        )
        # the scout, the idle session (counted under aaa-copy) and the trader: once each
        horizon = upgrading.store.horizon("alice", key)
        assert horizon is not None
        assert (horizon.bar, horizon.sessions) == (END, 3)
        again = _runtime(store_url, home, [catalog])  # opened again: nothing adopted twice
        again.shutdown()
        assert upgrading.store.horizon("alice", key) == horizon
        assert upgrading.store.horizon("alice", SCENARIO) is None
        assert upgrading.store.horizon("alice", COPY) is None
    finally:
        upgrading.shutdown()
        other.shutdown()


def test_a_store_newer_than_this_code_is_refused(store_url: str, tmp_path: Path) -> None:
    open_runtime_store(store_url).close()
    key, version = NEWER[_kind(store_url)]
    raw_sql(store_url)("UPDATE {meta} SET value = ? WHERE key = ?", (version, key))
    with pytest.raises(KestrelError) as err:
        open_runtime_store(store_url)
    assert err.value.code == "BACKEND_UNAVAILABLE"
    assert f"schema {version}" in err.value.message


BEFORE_LINEAGE = {"sqlite": ("schema", "9"), "postgresql": ("runtime", "5")}


@pytest.mark.parametrize(
    "case",
    [("closed", True, COPY, False, SCENARIO), ("open", False, SCENARIO, True, COPY)],
    ids=["closed on the copy, traded in the shipped catalog", "open, traded on the copy"],
)
def test_a_lone_scout_made_before_sessions_kept_their_lineage_is_seen(
    store_url: str, tmp_path: Path, case: tuple[str, bool, str, bool, str]
) -> None:
    """A store of the schema before sessions kept their lineage and journal rows their
    clock bar (SQLite's 9, PostgreSQL's 5; made here by dropping the columns) holds
    alice's scout run alone to the tape's end on one twin. Once a runtime holding the
    copy opened the store (the sessions given their lineage, as horizon rows were
    re-keyed), a trade on the other twin fails ``no-lookahead`` naming the scout: a
    closed scout read from its head frame in a runtime whose catalog lacks its twin, an
    open one (its rows without bars) replayed where the catalog holds it."""
    left, scout_has_copy, scouted, trader_has_copy, traded = case
    home, catalog = tmp_path / "home", copy_catalog(tmp_path / "catalog")
    old = _runtime(store_url, home, [catalog] if scout_has_copy else [])
    scout = old.open_session("alice", scouted, "scout").session_id
    assert scout is not None
    old.submit("alice", scout, f"advance {END}")
    if left == "closed":
        old.close("alice", scout)
    old.shutdown()
    _as_before_lineage(store_url, BEFORE_LINEAGE)
    _runtime(store_url, home, [catalog]).shutdown()  # upgraded, its sessions adopted
    trader = _runtime(store_url, home, [catalog] if trader_has_copy else [])
    try:
        detail = failed_lookahead(trader, "alice", traded)
        assert detail.startswith(
            f"session {scout} on {scouted} of the same principal had reached bar {END}"
            " before submission 1 at bar 0"
        ), detail
    finally:
        trader.shutdown()


# Another OS process: the runtime that upgrades the store at argv[1], over the shipped
# catalog and the catalog directory argv[3] (its home argv[2]), started and stopped; its
# warnings printed.
UPGRADE = """
import logging, sys
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
logging.basicConfig(stream=sys.stdout, level=logging.WARNING, format="%(message)s")
url, home, catalog = sys.argv[1:4]
Runtime(home, [catalog], store=open_runtime_store(url)).shutdown()
"""


def _change_in_place(tape: Path) -> None:
    """One digit of ``tape`` changed, its size and times kept: listed from its
    remembered shape, it is refused on first use."""
    stamp, data = tape.stat(), bytearray(tape.read_bytes())
    last = max(i for i, byte in enumerate(data) if chr(byte).isdigit())
    data[last] = ord("1") if data[last] != ord("1") else ord("2")
    tape.write_bytes(bytes(data))
    os.utime(tape, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))


@pytest.mark.parametrize("scouted", [COPY, SCENARIO])
def test_an_open_session_an_upgraded_store_kept_is_given_its_bar_by_the_runtime_adopting_it(
    store_url: str, tmp_path: Path, scouted: str
) -> None:
    """alice's scout, run to the tape's end in a store of the schema before journal rows
    kept their clock bar (SQLite's 9, PostgreSQL's 5) and left open there, has no bar
    in its journal. The runtime that re-keys it (in another OS process, its catalog
    holding the copy) replays it once and keeps its bar in its last journal row: the
    store lists it with that bar, so no runtime replays it to know its clock, and a
    trade on acme-trend in a runtime whose catalog lacks the scout's twin fails
    ``no-lookahead`` naming it.

    Was: no bar kept; the scout was read by replay where the catalog held its twin and
    missed where it did not (on aaa-copy, a trade on acme-trend in the shipped catalog
    alone passed ``no-lookahead``)."""
    home, catalog = tmp_path / "home", copy_catalog(tmp_path / "catalog")
    old = _runtime(store_url, home, [catalog])
    scout = old.open_session("alice", scouted, "scout").session_id
    assert scout is not None
    old.submit("alice", scout, f"advance {END}")
    old.shutdown()
    _as_before_lineage(store_url, BEFORE_LINEAGE)
    env = {k: v for k, v in os.environ.items() if k != "KESTREL_STORE"}
    _child(env, UPGRADE, store_url, str(home), str(catalog))  # upgraded, adopted

    store = open_runtime_store(store_url)
    try:
        [kept] = store.reached("alice", horizon_key(SCENARIO))
    finally:
        store.close()
    assert (kept.session, kept.closed, kept.bar) == (scout, False, END)  # was: bar None
    trader = _runtime(store_url, home, [])  # the shipped catalog alone
    try:
        detail = failed_lookahead(trader, "alice", SCENARIO)
        on = "" if scouted == SCENARIO else f" on {COPY}"
        assert detail.startswith(
            f"session {scout}{on} of the same principal had reached bar {END}"
            " before submission 1 at bar 0"
        ), detail
    finally:
        trader.shutdown()


def test_a_runtime_adopting_a_session_whose_tape_changed_since_still_starts(
    store_url: str, tmp_path: Path
) -> None:
    """The scout's tape (aaa-copy's) was changed in place since it was listed (its size
    and time kept: listed from its remembered shape, refused on first use): the runtime
    adopting the upgraded store cannot replay the scout, keeps no bar for it and starts
    all the same (in another OS process, whose memory holds no copy of the tape)."""
    home, catalog = tmp_path / "home", copy_catalog(tmp_path / "catalog")
    old = _runtime(store_url, home, [catalog])
    scout = old.open_session("alice", COPY, "scout").session_id
    assert scout is not None
    old.submit("alice", scout, f"advance {END}")
    old.shutdown()
    _as_before_lineage(store_url, BEFORE_LINEAGE)
    _change_in_place(catalog / COPY / "tape.csv")
    env = {k: v for k, v in os.environ.items() if k != "KESTREL_STORE"}
    _child(env, UPGRADE, store_url, str(home), str(catalog))  # started and stopped

    store = open_runtime_store(store_url)
    try:
        [left] = store.reached("alice", horizon_key(SCENARIO))
    finally:
        store.close()
    assert (left.session, left.bar) == (scout, None)


def test_a_runtime_joining_rows_with_a_session_whose_tape_changed_since_still_starts(
    store_url: str, tmp_path: Path
) -> None:
    """alice's rows kept apart under acme-trend and aaa-copy (one session counted on
    each) join as the store is upgraded, so her sessions on the lineage are compared and
    their clocks written. Her scout on aaa-copy (open, run to the tape's end, its rows
    without bars) cannot be replayed: its tape was changed in place since it was listed.
    The runtime adopting the store (in another OS process) starts all the same, logs the
    scout once and keeps no bar for it, and writes the clock her other session (closed
    at bar 100 on acme-trend, read from its head frame) reached.

    Was: the joined rows' clocks replayed the scout again and its error left
    ``Runtime()`` (BACKEND_UNAVAILABLE): the runtime did not start."""
    home, catalog = tmp_path / "home", copy_catalog(tmp_path / "catalog")
    old = _runtime(store_url, home, [catalog])
    scout = old.open_session("alice", COPY, "scout").session_id
    other = old.open_session("alice", SCENARIO, "other").session_id
    assert scout is not None
    assert other is not None
    old.submit("alice", scout, f"advance {END}")
    old.submit("alice", other, "advance 100")
    old.close("alice", other)
    old.shutdown()
    raw = raw_sql(store_url)
    raw("DELETE FROM {horizons}", ())
    for row in (("alice", SCENARIO, -1, "", 1), ("alice", COPY, -1, "", 1)):
        raw(
            "INSERT INTO {horizons} (principal, scenario, bar, what, sessions)"
            " VALUES (?, ?, ?, ?, ?)",
            row,
        )
    raw("DROP TABLE {unkeyed_horizons}", ())
    _as_before_lineage(store_url, OLD)
    _change_in_place(catalog / COPY / "tape.csv")
    env = {k: v for k, v in os.environ.items() if k != "KESTREL_STORE"}
    printed = _child(env, UPGRADE, store_url, str(home), str(catalog))  # was: failed
    assert printed.count(f"session {scout}: no clock bar kept") == 1, printed

    store = open_runtime_store(store_url)
    try:
        reached = {s.session: s.bar for s in store.reached("alice", horizon_key(SCENARIO))}
        horizon = store.horizon("alice", horizon_key(SCENARIO))
    finally:
        store.close()
    assert reached == {scout: None, other: None}  # the closed one's bar is its head frame's
    assert horizon is not None
    assert (horizon.bar, horizon.sessions) == (100, 2)
    assert horizon.what == (
        f"session {other} on {SCENARIO} of the same principal had reached bar 100"
    )
