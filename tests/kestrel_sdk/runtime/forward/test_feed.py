"""Appending bars to a forward scenario's tape: validated as an import is, all or none,
idempotent by bar time, refused when frozen, and the chain of prefix roots the same in
every process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError, RefusalCode, root_of_bytes
from kestrel_sdk.runtime.catalog.forward_tape import EMPTY_TAPE_TEXT, prefix_link
from kestrel_sdk.runtime.catalog.tapes import HEADER
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.kestrel_sdk.runtime.forward.scenarios import (
    SCENARIO_ID,
    bar_rows,
    bar_time,
    bars,
    forward_catalog,
)

AT = "2026-12-01T14:31:02Z"


@pytest.fixture
def runtime(tmp_path: Path, runtime_store_url: str) -> Runtime:
    catalog = forward_catalog(tmp_path)
    return Runtime(tmp_path / "home", [catalog], store=open_runtime_store(runtime_store_url))


def _refusal(runtime: Runtime, data: bytes) -> KestrelError:
    with pytest.raises(KestrelError) as caught:
        runtime.append_bars(SCENARIO_ID, data, clock=lambda: AT)
    assert caught.value.code == RefusalCode.INVALID_ARGUMENT
    return caught.value


def test_the_catalog_lists_a_forward_scenario_sealed(runtime: Runtime) -> None:
    (entry,) = [s for s in runtime.catalog().scenarios if s.id == SCENARIO_ID]
    assert entry.to_json()["forward"] is True
    assert entry.sealed is True
    assert entry.bars is None
    scenario = runtime.scenario("alice", SCENARIO_ID)
    assert scenario.to_json()["sealed"] is True  # its sealed view: no tape end, no length
    with pytest.raises(KestrelError) as caught:
        runtime.tape("alice", SCENARIO_ID)
    assert caught.value.code == RefusalCode.SCENARIO_SEALED


def test_appends_grow_the_tape_and_chain_every_prefix(runtime: Runtime) -> None:
    first = runtime.append_bars(SCENARIO_ID, bars(0, 2), clock=lambda: AT)
    assert (first.accepted, first.duplicates, first.bars) == (2, 0, 2)
    assert first.last_time == bar_time(1)
    start = "sha256:" + __import__("hashlib").sha256(EMPTY_TAPE_TEXT.encode()).hexdigest()
    root0 = prefix_link(0, start, bar_rows(0))
    assert first.prefix_root == prefix_link(1, root0, bar_rows(1))
    status = runtime.feed_status(SCENARIO_ID)
    assert (status.bars, status.last_time, status.prefix_root) == (
        2,
        bar_time(1),
        first.prefix_root,
    )
    assert (status.frozen, status.unsealed) == (False, False)
    published = runtime.feed_published(SCENARIO_ID)  # the clock read before and after the commit
    assert published == [(0, bar_time(0), AT, AT), (1, bar_time(1), AT, AT)]


def test_the_edge_is_the_count_and_tape_root_of_the_bars_published(
    tmp_path: Path, runtime: Runtime
) -> None:
    """What the door signs as a forward tape's edge: how many bars are published and the
    tape root of their canonical text, the root the tape they make has (every store);
    before any append, the declared prefix's."""
    assert runtime.feed_edge(SCENARIO_ID) == (0, root_of_bytes(EMPTY_TAPE_TEXT.encode()))
    runtime.append_bars(SCENARIO_ID, bars(0, 2), clock=lambda: AT)
    runtime.append_bars(SCENARIO_ID, bars(2, 1), clock=lambda: AT)
    tape = HEADER + "\n" + "".join(bar_rows(k) for k in range(3))
    assert runtime.feed_edge(SCENARIO_ID) == (3, root_of_bytes(tape.encode()))
    prefixed = forward_catalog(tmp_path / "prefixed", prefix=2)
    other = Runtime(tmp_path / "other", [prefixed], store=open_runtime_store("memory:"))
    declared = HEADER + "\n" + "".join(bar_rows(k) for k in range(2))
    assert other.feed_edge(SCENARIO_ID) == (2, root_of_bytes(declared.encode()))
    other.shutdown()


def test_a_tape_grown_batch_by_batch_is_the_tape_read_whole(runtime: Runtime) -> None:
    """Each append reads only its own bars, after what the process read before; the tape
    is the one the bars read whole make (a session traded on it between appends)."""
    runtime.append_bars(SCENARIO_ID, bars(0, 2), clock=lambda: AT)
    session = runtime.open_session("alice", SCENARIO_ID, "between").session_id
    assert session is not None
    runtime.submit("alice", session, "advance 1")
    for first, count in ((2, 3), (5, 1)):
        runtime.append_bars(SCENARIO_ID, bars(first, count), clock=lambda: AT)
    runtime.submit("alice", session, "advance 4")
    runtime.freeze_feed(SCENARIO_ID)
    runtime.unseal_feed(SCENARIO_ID)
    assert runtime.tape("alice", SCENARIO_ID) == bars(0, 6).decode()


def test_the_same_bar_twice_is_accepted_once(runtime: Runtime) -> None:
    runtime.append_bars(SCENARIO_ID, bars(0, 2), clock=lambda: AT)
    again = runtime.append_bars(SCENARIO_ID, bars(1, 2), clock=lambda: "2026-12-01T14:33:00Z")
    assert (again.accepted, again.duplicates, again.bars) == (1, 1, 3)
    published = runtime.feed_published(SCENARIO_ID)
    assert published[1] == (1, bar_time(1), AT, AT)  # its first publication stands
    # rows written otherwise (no header, CRLF, 100.5 for 100.50) are the same bar
    loose = bar_rows(2).replace("\n", "\r\n").encode()
    assert runtime.append_bars(SCENARIO_ID, loose, clock=lambda: AT).duplicates == 1


def test_a_different_bar_at_a_published_time_is_refused_naming_it(runtime: Runtime) -> None:
    runtime.append_bars(SCENARIO_ID, bars(0, 2), clock=lambda: AT)
    changed = bar_rows(1, acme_close="100.50") + bar_rows(2)
    refusal = _refusal(runtime, changed.encode())
    assert bar_time(1) in refusal.message
    assert "100.50" in refusal.message
    assert runtime.feed_status(SCENARIO_ID).bars == 2  # bar 2 was not written either


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (bar_rows(0).splitlines()[0] + "\n", "no bar for BETA"),  # an instrument missing
        (bar_rows(0).replace("1000", "-5"), "volume"),
        (bar_rows(0).replace("20.05", "20.07"), "tick"),  # BETA's tick is 0.05
        (bar_rows(1) + bar_rows(0), "not after"),  # times must increase
        (bar_rows(0).replace("1000", "1000.5"), "decimal places"),  # whole volumes here
        # a header other than the tape's is named as the header (was: read as a row,
        # "time 'time' is not an ISO-8601 UTC time")
        (HEADER.replace(",", ", ") + "\n" + bar_rows(0), "the header must be exactly"),
        (HEADER.upper() + "\n" + bar_rows(0), "the header must be exactly"),
    ],
)
def test_a_bad_append_is_refused_and_writes_nothing(runtime: Runtime, data: str, says: str) -> None:
    refusal = _refusal(runtime, data.encode())
    assert says in refusal.message
    assert runtime.feed_status(SCENARIO_ID).bars == 0


def test_a_bar_off_the_interval_or_before_the_last_is_refused(runtime: Runtime) -> None:
    runtime.append_bars(SCENARIO_ID, bars(0, 2), clock=lambda: AT)
    off = bar_rows(3).replace(":33:00Z", ":33:30Z")
    assert "interval" in _refusal(runtime, off.encode()).message
    early = bar_rows(1).replace(":31:00Z", ":30:30Z")
    assert "not after" in _refusal(runtime, early.encode()).message


def test_a_frozen_feed_takes_no_bar(runtime: Runtime) -> None:
    runtime.append_bars(SCENARIO_ID, bars(0), clock=lambda: AT)
    with pytest.raises(KestrelError, match="freeze it"):
        runtime.unseal_feed(SCENARIO_ID)
    assert runtime.freeze_feed(SCENARIO_ID).frozen
    assert "frozen" in _refusal(runtime, bars(1)).message
    assert runtime.unseal_feed(SCENARIO_ID).unsealed


def test_only_a_forward_scenario_has_a_feed(runtime: Runtime) -> None:
    with pytest.raises(KestrelError) as caught:
        runtime.append_bars("acme-trend", bars(0), clock=lambda: AT)
    assert caught.value.code == RefusalCode.INVALID_ARGUMENT
    assert "not a forward scenario" in caught.value.message
    with pytest.raises(KestrelError) as unknown:
        runtime.feed_status("no-such-scenario")
    assert unknown.value.code == RefusalCode.UNKNOWN_SCENARIO


OTHER = """
import sys
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
runtime = Runtime(sys.argv[1], [sys.argv[2]], store=open_runtime_store(sys.argv[3]))
print(runtime.append_bars("fwd-live", sys.stdin.buffer.read(), clock=lambda: "T").prefix_root)
"""


def test_a_prefix_root_is_the_same_in_every_process(tmp_path: Path, store_url: str) -> None:
    catalog = forward_catalog(tmp_path)
    here = Runtime(tmp_path / "home", [catalog], store=open_runtime_store(store_url))
    mine = here.append_bars(SCENARIO_ID, bars(0, 3), clock=lambda: AT).prefix_root
    theirs = (
        subprocess.run(
            [sys.executable, "-c", OTHER, str(tmp_path / "home"), str(catalog), store_url],
            input=bars(3, 2),
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    status = here.feed_status(SCENARIO_ID)  # this process sees the other's bars at once
    assert (status.bars, status.prefix_root) == (5, theirs)
    expected = mine
    for index in (3, 4):
        expected = prefix_link(index, expected, bar_rows(index))
    assert theirs == expected


def test_a_declared_prefix_starts_the_chain(tmp_path: Path) -> None:
    runtime = Runtime(tmp_path / "home", [forward_catalog(tmp_path, prefix=3)])
    head = runtime.loaded(SCENARIO_ID).scenario.forward_tape
    assert head is not None
    assert head.bars == 3
    assert runtime.feed_status(SCENARIO_ID).bars == 3
    assert "declared prefix" in _refusal(runtime, bars(2)).message
    added = runtime.append_bars(SCENARIO_ID, bars(3), clock=lambda: AT)
    assert added.prefix_root == prefix_link(3, head.head, bar_rows(3))
    assert runtime.feed_published(SCENARIO_ID)[:4] == [
        (0, bar_time(0), "", ""),
        (1, bar_time(1), "", ""),
        (2, bar_time(2), "", ""),
        (3, bar_time(3), AT, AT),
    ]
