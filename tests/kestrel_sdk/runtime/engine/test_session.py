"""The session's contract with the service: checks, atomic submissions, ids, cancels,
frames and blotters, determinism."""

from __future__ import annotations

import pytest
from kestrel_protocol import Blotter, KestrelError, SessionFrame, canonical_json, root_of
from kestrel_sdk.runtime.engine import SessionEngine

from tests.kestrel_sdk.runtime.engine.tapes import daily, minutes, scenario

FLAT = ("100", "100", "100", "100")


def test_opening_frame_shows_bar_zero_closes() -> None:
    rows = [("99", "101", "98", "100.50"), FLAT, FLAT]
    frame = SessionEngine(daily(rows), "ks_t").frame()
    assert (frame.seq, frame.clock.bar, frame.clock.remaining) == (0, 0, 2)
    assert frame.clock.time == "2024-01-01T00:00:00Z"
    assert frame.marks == {"ACME": "100.50"}
    assert frame.events == []
    assert frame.account.equity == "100000.00"


def test_orders_placed_at_bar_t_fill_from_bar_t_plus_one() -> None:
    rows = [FLAT, ("101", "101", "101", "101"), ("102", "102", "102", "102"), FLAT]
    engine = SessionEngine(daily(rows), "ks_t")
    step = engine.submit("buy 1 ACME")
    assert [e.type for e in step.frame.events] == ["accepted"]  # nothing fills at bar 0
    step = engine.submit("advance\nbuy 1 ACME\nadvance")
    fills = [(e.order, e.bar, e.price) for e in step.frame.events if e.type == "fill"]
    assert fills == [("o1", 1, "101.00"), ("o2", 2, "102.00")]


def test_advance_n_and_advance_to() -> None:
    engine = SessionEngine(minutes(10, 1), "ks_t")
    assert engine.submit("advance 3").frame.clock.bar == 3
    assert engine.submit("advance").frame.clock.bar == 4
    frame = engine.submit("advance to 2024-01-01T14:37:00Z").frame
    assert (frame.clock.bar, frame.clock.time) == (7, "2024-01-01T14:37:00Z")
    # between bars: to the last bar at or before the time
    assert engine.submit("advance to 2024-01-01T14:38:30Z").frame.clock.bar == 8


def test_invalid_source_is_refused_whole_with_diagnostics() -> None:
    engine = SessionEngine(daily([FLAT] * 4), "ks_t")
    before = root_of(engine.frame())
    with pytest.raises(KestrelError) as err:
        engine.submit("buy 1 ACME\nadvance\nbuy 1 XYZ")
    assert err.value.code == "INVALID_SOURCE"
    assert err.value.detail["diagnostics"] == [
        {
            "line": 3,
            "column": 7,
            "code": "K201",
            "severity": "error",
            "message": err.value.detail["diagnostics"][0]["message"],
        }
    ]
    assert engine.seq == 0
    assert root_of(engine.frame()) == before
    assert engine.blotter().orders == []


def test_check_uses_session_state() -> None:
    engine = SessionEngine(daily([FLAT] * 6), "ks_t")
    engine.submit("buy 1 ACME limit 90 tif gtc as dip\nadvance 2")
    for source, code in [
        ("cancel o2", "K204"),
        ("buy 1 ACME as dip", "K105"),
        ("advance to 2024-01-02T00:00:00Z", "K205"),
    ]:
        with pytest.raises(KestrelError) as err:
            engine.check(source)
        assert err.value.detail["diagnostics"][0]["code"] == code
    assert engine.check("cancel dip\ncancel o1").statements


def test_oversized_source_is_limit_exceeded() -> None:
    engine = SessionEngine(daily([FLAT] * 3), "ks_t")
    with pytest.raises(KestrelError) as err:
        engine.check("#" * (64 * 1024 + 1))
    assert err.value.code == "LIMIT_EXCEEDED"


def test_ids_cancel_by_id_alias_all_and_symbol() -> None:
    rows = [
        (f"2024-01-0{d}T00:00:00Z", {"AAA": (*FLAT, 10), "BBB": (*FLAT, 10)}) for d in (1, 2, 3)
    ]
    engine = SessionEngine(scenario(rows), "ks_t")
    step = engine.submit(
        "buy 1 AAA limit 90 tif gtc\n"
        "buy 1 BBB limit 90 tif gtc as b\n"
        "buy 1 AAA limit 91 tif gtc\n"
        "buy 1 BBB limit 91 tif gtc\n"
        "buy 1 AAA limit 92 tif gtc\n"
        "cancel o1\ncancel b\ncancel all BBB\n"
    )
    assert [o.id for o in step.frame.orders] == ["o3", "o5"]
    assert [(e.order, e.reason) for e in step.frame.events if e.type == "cancelled"] == [
        ("o1", "statement"),
        ("o2", "statement"),
        ("o4", "statement"),
    ]
    step = engine.submit("cancel o1\ncancel all")
    assert [(e.type, e.order, e.reason) for e in step.frame.events] == [
        ("cancel-rejected", "o1", "cancelled"),
        ("cancelled", "o3", "statement"),
        ("cancelled", "o5", "statement"),
    ]


def test_an_alias_that_begins_with_o_cancels_its_own_order() -> None:
    # `oco` is an alias, not an order id: `cancel oco` cancels the order named so, and
    # the id `o2` still names the second order.
    engine = SessionEngine(daily([FLAT] * 3), "ks_t")
    step = engine.submit(
        "buy 1 ACME limit 90 tif gtc\nbuy 1 ACME limit 91 tif gtc as oco\ncancel oco"
    )
    assert [(e.type, e.order) for e in step.frame.events][-1] == ("cancelled", "o2")
    assert [o.id for o in step.frame.orders] == ["o1"]


def test_cancelling_an_order_no_longer_open_says_why_in_the_frame() -> None:
    # The order fills on the bar the source's own `advance` processes, so no check made
    # before the source is applied could have known the cancel comes too late.
    engine = SessionEngine(daily([FLAT] * 6), "ks_t")
    step = engine.submit("buy 1 ACME as entry\nadvance\ncancel entry")
    assert [(e.type, e.order, e.qty, e.reason) for e in step.frame.events][-1] == (
        "cancel-rejected",
        "o1",
        None,
        "filled",
    )
    assert engine.blotter().orders[0].status == "filled"
    before = engine.blotter()
    step = engine.submit("cancel o1")
    assert [(e.type, e.reason) for e in step.frame.events] == [("cancel-rejected", "filled")]
    assert engine.blotter() == before


def test_frame_events_are_only_those_since_the_previous_frame() -> None:
    engine = SessionEngine(daily([FLAT] * 5), "ks_t")
    engine.submit("buy 1 ACME\nadvance")
    step = engine.submit("advance")
    assert step.frame.events == []
    assert engine.frame() is step.frame


def test_frame_and_blotter_are_valid_protocol_objects() -> None:
    engine = SessionEngine(daily([FLAT] * 5, bps="10"), "ks_t")
    engine.submit(
        "buy 3 ACME limit 100 tif gtc as a\nbuy 1 ACME stop 150 limit 151 tif gtc\nadvance"
    )
    frame = engine.frame()
    data = frame.to_json()
    assert canonical_json(SessionFrame.parse(data)) == canonical_json(data)
    assert data["orders"][0] == {
        "id": "o2",
        "alias": None,
        "side": "buy",
        "qty": 1,
        "filled": 0,
        "symbol": "ACME",
        "type": "stop-limit",
        "limit": "151.00",
        "stop": "150.00",
        "tif": "gtc",
        "status": "new",
    }
    blotter = engine.blotter()
    assert Blotter.parse(blotter.to_json()).root == blotter.root
    assert blotter.fills[0].time == "2024-01-02T00:00:00Z"


SOURCES = [
    "buy 10 ACME limit 100.50 tif gtc as a\nadvance 3",
    "sell 4 ACME stop 99\nbuy 2 ACME\nadvance 2",
    "cancel all\nadvance to 2024-01-09T00:00:00Z",
    'stand down "done"',
]


def _run() -> list[bytes]:
    rows = [
        (f"{100 + i % 3}", f"{102 + i % 4}", f"{98 + i % 2}", f"{100 + (i * 7) % 5}")
        for i in range(12)
    ]
    engine = SessionEngine(daily(rows, bps="10", slippage_bps="5"), "ks_det")
    out = []
    for source in SOURCES:
        out.append(canonical_json(engine.submit(source).frame))
    out.append(canonical_json(engine.blotter()))
    out.append(canonical_json(engine.close()))
    return out


def test_same_sources_give_byte_identical_objects() -> None:
    first, second = _run(), _run()
    assert first == second
    assert len(set(first)) == len(first)


def test_fast_frame_root_is_the_protocol_root() -> None:
    rows = [
        (f"{100 + i % 5}", f"{103 + i % 5}", f"{97 + i % 5}", f"{101 + i % 3}") for i in range(9)
    ]
    engine = SessionEngine(daily(rows, bps="10", shortable=True), "ks_ü")
    frames = [(engine.frame_root(), engine.frame())]
    for source in [
        "buy 5 ACME tif gtc as a",
        "sell 9 ACME stop 99\nadvance 2",
        "buy 1 ACME limit 96 tif gtc\nadvance 3",
        'stand down "done"',
    ]:
        frame = engine.submit(source).frame
        frames.append((engine.frame_root(), frame))
    closed = engine.close()
    frames.append((engine.frame_root(), closed))
    for root, frame in frames:
        assert root == root_of(frame)


def test_a_repeated_source_is_checked_against_the_session_it_meets() -> None:
    """Sources are remembered once checked, but never past what the session changes:
    a reused alias, an order reference and ``advance to`` are judged anew each time."""
    engine = SessionEngine(minutes(10, 1), "ks_t")
    for _ in range(3):
        assert engine.submit("buy 1 ACME\nadvance").frame.events[0].type == "accepted"
    engine.submit("buy 1 ACME as a")
    with pytest.raises(KestrelError) as err:
        engine.submit("buy 1 ACME as a")
    assert err.value.detail["diagnostics"][0]["code"] == "K105"
    with pytest.raises(KestrelError) as err:
        engine.submit("cancel o5")
    assert err.value.detail["diagnostics"][0]["code"] == "K204"
    engine.submit("buy 1 ACME tif gtc")
    assert engine.submit("cancel o5").frame.events[0].type == "cancelled"
    to = "advance to 2024-01-01T14:36:00Z"
    assert engine.submit(to).frame.clock.bar == 6
    with pytest.raises(KestrelError) as err:
        engine.submit(to)
    assert err.value.detail["diagnostics"][0]["code"] == "K205"
    engine.submit("stand down")
    with pytest.raises(KestrelError) as err:
        engine.submit("buy 1 ACME\nadvance")
    assert err.value.code == "SESSION_STOOD_DOWN"


def test_cancelling_a_partially_filled_order_cancels_its_remainder() -> None:
    rows = [FLAT, (*FLAT, 55), FLAT, FLAT]
    engine = SessionEngine(daily(rows, participation="0.1"), "ks_t")
    engine.submit("buy 12 ACME tif gtc\nadvance")
    step = engine.submit("cancel o1\nadvance")
    assert [(e.type, e.qty, e.reason) for e in step.frame.events] == [("cancelled", 7, "statement")]
    order = engine.blotter().orders[0]
    assert (order.status, order.filled) == ("cancelled", 5)


def test_a_source_with_an_alias_is_checked_again_on_every_submit() -> None:
    engine = SessionEngine(daily([FLAT] * 5), "ks_t")
    engine.submit("buy 1 ACME limit 90 tif gtc as dip\nadvance")
    with pytest.raises(KestrelError) as err:
        engine.submit("buy 1 ACME limit 90 tif gtc as dip\nadvance")
    assert err.value.detail["diagnostics"][0]["code"] == "K105"
