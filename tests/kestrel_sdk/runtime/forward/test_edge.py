"""Sessions on a forward scenario trade at the edge: an advance past the last published
bar is refused BAR_NOT_PUBLISHED (retryable, nothing journaled, nothing said of what
comes next), a bar appended through any runtime on the store is tradable at once, the
edge never stands a session down before the freeze, and every frame binds the prefix
it was shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.kestrel_sdk.runtime.forward.scenarios import (
    SCENARIO_ID,
    bar_time,
    bars,
    forward_catalog,
)

AT = "2026-12-01T14:31:02Z"


def _runtime(tmp_path: Path, url: str, *, prefix: int = 0) -> Runtime:
    catalog = tmp_path / "catalog"
    if not catalog.exists():
        forward_catalog(tmp_path, prefix=prefix)
    return Runtime(tmp_path / "home", [catalog], store=open_runtime_store(url))


def _refused(runtime: Runtime, sid: str, source: str) -> KestrelError:
    with pytest.raises(KestrelError) as caught:
        runtime.submit("alice", sid, source).model()
    assert caught.value.code == RefusalCode.BAR_NOT_PUBLISHED
    return caught.value


def test_no_session_opens_before_the_first_bar(tmp_path: Path, runtime_store_url: str) -> None:
    runtime = _runtime(tmp_path, runtime_store_url)
    with pytest.raises(KestrelError) as caught:
        runtime.open_session("alice", SCENARIO_ID)
    assert caught.value.code == RefusalCode.BAR_NOT_PUBLISHED
    assert caught.value.detail == {"bar": 0, "retryable": True}
    runtime.append_bars(SCENARIO_ID, bars(0), clock=lambda: AT)
    assert runtime.open_session("alice", SCENARIO_ID).session_id is not None


def test_an_advance_past_the_edge_is_refused_and_journals_nothing(
    tmp_path: Path, runtime_store_url: str
) -> None:
    runtime = _runtime(tmp_path, runtime_store_url)
    runtime.append_bars(SCENARIO_ID, bars(0, 2), clock=lambda: AT)
    sid = runtime.open_session("alice", SCENARIO_ID).session_id
    assert sid is not None
    assert (
        runtime.submit("alice", sid, "buy 5 ACME\nadvance 1").model().delivery.frame.clock.bar == 1
    )
    before = runtime.frame("alice", sid).model()
    for source in ("advance 1", "advance 3", "sell 5 ACME\nadvance 1", f"advance to {bar_time(2)}"):
        refusal = _refused(runtime, sid, source)
        assert refusal.detail == {"bar": 1, "retryable": True}
        assert bar_time(2) not in refusal.message or source.startswith("advance to")
    after = runtime.frame("alice", sid).model()
    assert after.frame_root == before.frame_root  # nothing applied, nothing journaled
    assert after.frame.status == "open"  # the edge is "now", not the end of the tape
    assert len(runtime.store.journal(sid)) == 1
    assert len(runtime.blotter("alice", sid).orders) == 1  # the sell was not placed


def test_a_published_bar_is_tradable_at_once_and_each_frame_binds_its_prefix(
    tmp_path: Path, runtime_store_url: str
) -> None:
    runtime = _runtime(tmp_path, runtime_store_url)
    first = runtime.append_bars(SCENARIO_ID, bars(0), clock=lambda: AT)
    sid = runtime.open_session("alice", SCENARIO_ID).session_id
    assert sid is not None
    opening = runtime.frame("alice", sid).model().frame
    assert opening.tape_prefix == first.prefix_root
    _refused(runtime, sid, "advance 1")
    added = runtime.append_bars(SCENARIO_ID, bars(1), clock=lambda: AT)
    step = runtime.submit("alice", sid, "advance 1").model().delivery.frame
    assert (step.clock.bar, step.tape_prefix) == (1, added.prefix_root)
    assert step.marks["ACME"] == "100.01"


def test_a_bar_appended_through_one_runtime_is_tradable_through_another(
    tmp_path: Path, store_url: str
) -> None:
    a = _runtime(tmp_path, store_url)
    b = _runtime(tmp_path, store_url)
    a.append_bars(SCENARIO_ID, bars(0), clock=lambda: AT)
    sid = b.open_session("alice", SCENARIO_ID).session_id
    assert sid is not None
    assert b.submit("alice", sid, "buy 1 ACME").model().delivery.frame.clock.bar == 0
    _refused(b, sid, "advance 1")  # B holds the session at the edge
    for index in range(1, 4):
        a.append_bars(SCENARIO_ID, bars(index), clock=lambda: AT)
        assert b.submit("alice", sid, "advance 1").model().delivery.frame.clock.bar == index
        # and A, which never served this session, picks it up where B left it
        assert a.frame("alice", sid).model().frame.clock.bar == index
    a.append_bars(SCENARIO_ID, bars(4), clock=lambda: AT)
    assert a.submit("alice", sid, "advance 1").model().delivery.frame.clock.bar == 4
    assert b.frame("alice", sid).model().frame.clock.bar == 4


def test_a_day_order_at_the_edge_replays_identically_after_the_day_ends(
    tmp_path: Path, store_url: str
) -> None:
    """A ``tif day`` order placed at the edge, when whether its day goes on is not
    known: its session, rebuilt on the grown tape, reproduces every frame root."""
    runtime = _runtime(tmp_path, store_url, prefix=569)  # bars 0-568; 570 is the next day
    runtime.append_bars(SCENARIO_ID, bars(569), clock=lambda: AT)
    sid = runtime.open_session("alice", SCENARIO_ID).session_id
    assert sid is not None
    runtime.submit("alice", sid, f"advance to {bar_time(568)}").model()
    # placed for bar 569, the edge: whether its day goes on past it is not known yet
    source = "buy 1 ACME limit 1.00\nbuy 2 ACME\nadvance 1"
    placed = runtime.submit("alice", sid, source).model().delivery.frame
    assert placed.clock.bar == 569
    assert [(o.id, o.status) for o in placed.orders] == [("o1", "new")]
    assert placed.positions[0].qty == 2
    runtime.append_bars(SCENARIO_ID, bars(570, 4), clock=lambda: AT)  # 570: the next day
    moved = runtime.submit("alice", sid, "advance 2").model().delivery.frame
    expired = [e for e in moved.events if e.type == "expired"]
    assert [(e.order, e.bar) for e in expired] == [("o1", 569)]  # at its day's last bar
    assert moved.orders == []
    head = runtime.frame("alice", sid).model().frame_root
    runtime.freeze_feed(SCENARIO_ID)
    # a fresh runtime replays the journal on the frozen tape: every root as served
    again = _runtime(tmp_path, store_url)
    assert again.frame("alice", sid).model().frame_root == head
    # after the freeze the session may advance to the end and stands down there
    last = again.submit("alice", sid, "advance 5").model().delivery.frame
    assert (last.clock.bar, last.status) == (573, "open")
    ended = again.submit("alice", sid, "advance 1").model()
    assert ended.disposition == "stood-down"
    assert ended.stand_down is not None
    assert ended.stand_down.reason == "end-of-tape"


def test_a_forward_session_is_served_sealed_up_to_its_clock(tmp_path: Path) -> None:
    runtime = _runtime(tmp_path, "memory:")
    runtime.append_bars(SCENARIO_ID, bars(0, 3), clock=lambda: AT)
    sid = runtime.open_session("alice", SCENARIO_ID).session_id
    assert sid is not None
    runtime.submit("alice", sid, "advance 1").model()
    assert runtime.sealed(SCENARIO_ID)
    assert "remaining" not in runtime.frame("alice", sid).model().frame.clock.to_json()
    shown = runtime.history("alice", sid, 100).to_json()
    assert bar_time(1) in str(shown)
    assert bar_time(2) not in str(shown)
