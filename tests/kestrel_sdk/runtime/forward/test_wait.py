"""An opt-in bounded wait at the edge: ``advance 1 wait 30s`` (or the submit's ``wait``)
blocks until the bar is published, by any thread or process on the store, and is refused
``BAR_NOT_PUBLISHED`` when the time runs out; the wait is part of the source and a
replay ignores it."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_sdk.runtime.lang import validate_source
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
from kestrel_sdk.transports.feed_waiter import StoreFeedWaiter

from tests.kestrel_sdk.runtime.forward.scenarios import (
    SCENARIO_ID,
    bar_rows,
    bar_time,
    bars,
    forward_catalog,
)

AT = "2026-12-01T14:31:02Z"


class _Told(StoreFeedWaiter):
    """The default waiter, running ``then`` once a wait has begun (an event, no sleep)."""

    def __init__(self, runtime_store: object, then: Callable[[], object]) -> None:
        super().__init__(runtime_store)  # type: ignore[arg-type]
        self._then = then
        self.waits: list[float] = []
        self.needed: list[int] = []

    def wait(self, scenario_id: str, bars_needed: int, seconds: float) -> bool:
        self.waits.append(seconds)
        self.needed.append(bars_needed)
        threading.Thread(target=self._then).start()
        return super().wait(scenario_id, bars_needed, seconds)


def _session(tmp_path: Path, url: str, then: Callable[[], object]) -> tuple[Runtime, str, _Told]:
    forward_catalog(tmp_path)
    store = open_runtime_store(url)
    waiter = _Told(store, then)
    runtime = Runtime(tmp_path / "home", [tmp_path / "catalog"], store=store, waiter=waiter)
    runtime.append_bars(SCENARIO_ID, bars(0), clock=lambda: AT)
    sid = runtime.open_session("alice", SCENARIO_ID).session_id
    assert sid is not None
    return runtime, sid, waiter


def test_a_wait_is_met_by_an_append_from_another_thread(
    tmp_path: Path, runtime_store_url: str
) -> None:
    holder: list[Runtime] = []
    runtime, sid, waiter = _session(
        tmp_path,
        runtime_store_url,
        lambda: holder[0].append_bars(SCENARIO_ID, bars(1), clock=lambda: AT),
    )
    holder.append(runtime)
    frame = runtime.submit("alice", sid, "advance 1 wait 30s").model().delivery.frame
    assert frame.clock.bar == 1
    assert waiter.waits == [30.0]


OTHER = """
import sys
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
runtime = Runtime(sys.argv[1], [sys.argv[2]], store=open_runtime_store(sys.argv[3]))
runtime.append_bars("fwd-live", sys.stdin.buffer.read(), clock=lambda: "T")
"""


def test_a_wait_is_met_by_an_append_from_another_process(tmp_path: Path, store_url: str) -> None:
    def other() -> None:
        command = [sys.executable, "-c", OTHER, str(tmp_path / "o"), str(tmp_path / "catalog")]
        subprocess.run([*command, store_url], input=bars(1, 2), check=True)

    runtime, sid, waiter = _session(tmp_path, store_url, other)
    frame = (
        runtime.submit("alice", sid, "advance 2", wait=60).model().delivery.frame
    )  # the argument
    assert frame.clock.bar == 2
    assert waiter.waits == [60]


def test_a_freeze_ends_a_wait_and_the_session_stands_down_at_the_tape_s_end(
    tmp_path: Path, runtime_store_url: str
) -> None:
    """An agent waiting at the edge when the operator freezes the feed is answered at
    once: the tape will never hold the bar, so the session stands down ``end-of-tape``
    (was: it waited its whole wait, then was told the bar was "not published yet:
    submit again once it is")."""
    holder: list[Runtime] = []
    runtime, sid, waiter = _session(
        tmp_path, runtime_store_url, lambda: holder[0].freeze_feed(SCENARIO_ID)
    )
    holder.append(runtime)
    answered = runtime.submit("alice", sid, "advance 1 wait 30s").model()
    assert waiter.waits == [30.0]
    assert (answered.delivery.frame.clock.bar, answered.disposition) == (0, "stood-down")
    assert answered.stand_down is not None
    assert answered.stand_down.reason == "end-of-tape"


def test_advance_to_a_later_time_waits_for_its_bar_not_the_next(
    tmp_path: Path, runtime_store_url: str
) -> None:
    """``advance to T wait 30s`` three bars ahead, the feed publishing them one by one:
    the submission waits for the bar at ``T`` and applies there (was: it was refused
    ``BAR_NOT_PUBLISHED`` as soon as the next bar came, its wait unspent)."""
    holder: list[Runtime] = []

    def feed() -> None:
        for index in (1, 2, 3):
            holder[0].append_bars(SCENARIO_ID, bars(index), clock=lambda: AT)

    runtime, sid, waiter = _session(tmp_path, runtime_store_url, feed)
    holder.append(runtime)
    source = f"advance to {bar_time(3)} wait 30s"
    frame = runtime.submit("alice", sid, source).model().delivery.frame
    assert frame.clock.bar == 3
    assert waiter.waits == [30.0]
    assert waiter.needed == [4]  # bars 0 to 3: the bar at T


def test_advance_to_a_time_a_gap_reached_applies_when_its_wait_ends(tmp_path: Path) -> None:
    """The feed skips bars 1 to 4 (a gap: its next bar is bar 5's time): ``advance to``
    bar 2's time is reached by that bar though the tape holds fewer bars than its
    interval counts to it; when the wait ends the edge decides once more, and the
    submission applies (the session stays at bar 0, the last bar up to that time)."""
    holder: list[Runtime] = []
    gap = bar_rows(5).encode()
    runtime, sid, waiter = _session(
        tmp_path,
        "memory:",
        lambda: holder[0].append_bars(SCENARIO_ID, gap, clock=lambda: AT),
    )
    holder.append(runtime)
    answered = runtime.submit("alice", sid, f"advance to {bar_time(2)} wait 100ms").model()
    assert (answered.pentad.seq, answered.delivery.frame.clock.bar) == (1, 0)
    assert waiter.waits == [0.1]


def test_a_wait_that_runs_out_is_refused_retryable(tmp_path: Path) -> None:
    runtime, sid, waiter = _session(tmp_path, "memory:", lambda: None)
    with pytest.raises(KestrelError) as caught:
        runtime.submit("alice", sid, "advance 1 wait 50ms").model()
    assert caught.value.code == RefusalCode.BAR_NOT_PUBLISHED
    assert caught.value.detail == {"bar": 0, "retryable": True}
    assert waiter.waits == [0.05]
    with pytest.raises(KestrelError):  # no wait asked: refused at once, no waiting
        runtime.submit("alice", sid, "advance 1").model()
    assert waiter.waits == [0.05]
    runtime.append_bars(SCENARIO_ID, bars(1), clock=lambda: AT)
    assert runtime.submit("alice", sid, "advance 1 wait 50ms").model().delivery.frame.clock.bar == 1
    # the wait is part of the source: a fresh runtime replays the session identically
    again = Runtime(tmp_path / "home", [tmp_path / "catalog"], store=runtime.store)
    head = runtime.frame("alice", sid).model().frame_root
    assert again.frame("alice", sid).model().frame_root == head


@pytest.mark.parametrize(
    ("source", "ok"),
    [
        ("advance 1 wait 30s", True),
        ("advance wait 500ms", True),
        ("advance to 2026-12-01T15:00:00Z wait 300s", True),
        ("advance 1 wait 301s", False),
        ("advance 1 wait 0s", False),
        ("advance 1 wait soon", False),
        ("advance 1 wait", False),
    ],
)
def test_the_wait_form_is_checked(source: str, ok: bool) -> None:
    report = validate_source(source)
    assert report.ok is ok
    if not ok:
        assert (
            "wait" in report.diagnostics[0].message or "duration" in report.diagnostics[0].message
        )
