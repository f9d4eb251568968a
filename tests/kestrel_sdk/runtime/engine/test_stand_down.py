"""Stand-down (docs/spec.md §5): by statement, by max drawdown, at the end of the tape; and what a
stood-down or closed session still allows."""

from __future__ import annotations

import pytest
from kestrel_protocol import KestrelError
from kestrel_sdk.runtime.engine import SessionEngine

from tests.kestrel_sdk.runtime.engine.tapes import daily, scenario, two_symbols_peak_then_crash

FLAT = ("100", "100", "100", "100")


def test_stand_down_statement_cancels_and_liquidates_at_the_mark() -> None:
    rows = [FLAT, FLAT, ("100", "105", "100", "104"), FLAT]
    engine = SessionEngine(daily(rows, bps="10"), "ks_t")
    engine.submit("buy 10 ACME\nbuy 5 ACME limit 90 tif gtc as dip\nadvance 2")
    step = engine.submit('stand down "enough"')
    assert step.stand_down is not None
    assert (step.stand_down.reason, step.stand_down.detail) == ("statement", "enough")
    frame = step.frame
    assert frame.status == "stood-down"
    assert [(e.type, e.order, e.bar, e.qty, e.price, e.fee, e.reason) for e in frame.events] == [
        ("cancelled", "o2", 2, 5, None, None, "stand-down"),
        ("accepted", "o3", 2, 10, None, None, "stand-down"),
        ("fill", "o3", 2, 10, "104.00", "1.04", None),
        ("stood-down", None, 2, None, None, None, "statement"),
    ]
    assert frame.positions == []
    assert frame.orders == []
    # bought 10 @ 100 (fee 1.00), sold 10 @ 104 (fee 1.04)
    assert (frame.account.cash, frame.account.realized, frame.account.fees) == (
        "100037.96",
        "40.00",
        "2.04",
    )
    liquidation = engine.blotter().orders[2]
    assert (liquidation.id, liquidation.side, liquidation.type, liquidation.reason) == (
        "o3",
        "sell",
        "market",
        "stand-down",
    )
    assert (liquidation.seq, liquidation.line, liquidation.status) == (2, 0, "filled")
    assert engine.blotter().orders[1].status == "cancelled"


def test_stand_down_liquidates_shorts_with_a_buy() -> None:
    engine = SessionEngine(daily([FLAT] * 4, shortable=True), "ks_t")
    engine.submit("sell 3 ACME\nadvance")
    step = engine.submit("stand down")
    assert step.stand_down is not None
    assert step.stand_down.detail == "stand down on line 1"
    assert [(o.side, o.qty) for o in engine.blotter().orders] == [("sell", 3), ("buy", 3)]


def test_max_drawdown_stands_down_at_the_bar_it_is_reached() -> None:
    rows = [
        FLAT,
        FLAT,
        ("100", "100", "90", "90"),
        ("90", "90", "70", "70"),
        ("70", "70", "60", "60"),
        FLAT,
    ]
    engine = SessionEngine(daily(rows, max_drawdown="0.25"), "ks_t")
    step = engine.submit("buy 900 ACME\nadvance 4\nbuy 1 ACME")
    # equity 100000 → 91000 (9 %) → 73000 (27 % ≥ 25 %): stand down at bar 3
    assert step.stand_down is not None
    assert step.stand_down.reason == "max-drawdown"
    assert "bar 3" in step.stand_down.detail
    frame = step.frame
    assert (frame.clock.bar, frame.status) == (3, "stood-down")
    fills = [(e.order, e.bar, e.price) for e in frame.events if e.type == "fill"]
    assert fills == [("o1", 1, "100.00"), ("o2", 3, "70.00")]
    assert frame.events[-1].reason == "max-drawdown"
    assert frame.account.equity == "73000.00"
    assert [o.id for o in engine.blotter().orders] == ["o1", "o2"]  # the later buy never ran
    assert engine.skipped == 1


def test_drawdown_below_the_limit_does_not_stand_down() -> None:
    rows = [FLAT, FLAT, ("100", "100", "76", "76"), FLAT]
    engine = SessionEngine(daily(rows, max_drawdown="0.25"), "ks_t")
    step = engine.submit("buy 1000 ACME\nadvance 2")  # equity 100000 → 76000: 24 %
    assert step.stand_down is None
    assert engine.status == "open"


def test_end_of_tape_stands_down_and_skips_the_rest_of_the_source() -> None:
    engine = SessionEngine(daily([FLAT] * 3, bps="10"), "ks_t")
    step = engine.submit("buy 1 ACME\nadvance 5\nbuy 2 ACME\nadvance")
    assert step.stand_down is not None
    assert step.stand_down.reason == "end-of-tape"
    assert step.frame.clock.bar == 2
    assert step.frame.clock.remaining == 0
    assert [o.id for o in engine.blotter().orders] == ["o1", "o2"]
    assert engine.blotter().orders[1].reason == "stand-down"
    assert step.frame.positions == []
    assert engine.skipped == 2


def test_reaching_the_last_bar_exactly_is_the_end_of_the_tape() -> None:
    engine = SessionEngine(daily([FLAT] * 3), "ks_t")
    step = engine.submit("advance 2")
    assert step.stand_down is not None
    assert step.stand_down.reason == "end-of-tape"
    assert step.stand_down.detail == "the tape ended at bar 2 (2024-01-03T00:00:00Z)"


def test_stood_down_session_refuses_submits_but_reads_and_closes() -> None:
    engine = SessionEngine(daily([FLAT] * 3), "ks_t")
    engine.submit("stand down")
    for attempt in (engine.submit, engine.check):  # a check is refused as the submit is
        with pytest.raises(KestrelError) as err:
            attempt("advance")
        assert err.value.code == "SESSION_STOOD_DOWN"
    assert engine.frame().status == "stood-down"
    assert engine.blotter().orders == []
    closed = engine.close()
    assert (closed.status, [e.type for e in closed.events]) == ("closed", ["closed"])
    assert closed.seq == 1


def test_a_program_checked_before_a_stand_down_or_close_is_refused_when_applied() -> None:
    # check and apply are two calls: a program checked while the session was open must
    # not be applied once the session has stood down or closed (docs/spec.md §5: refused, and
    # nothing in the session moves).
    for end, code in (("stand down", "SESSION_STOOD_DOWN"), ("close", "SESSION_CLOSED")):
        engine = SessionEngine(daily([FLAT] * 4), "ks_t")
        program = engine.check("buy 1 ACME\nadvance")
        if end == "close":
            engine.close()
        else:
            engine.submit(end)
        before = (engine.seq, engine.clock, engine.frame())
        with pytest.raises(KestrelError) as err:
            engine.apply(program)
        assert err.value.code == code
        assert (engine.seq, engine.clock, engine.frame()) == before
        assert engine.blotter().orders == []


def test_close_cancels_open_orders_and_then_refuses() -> None:
    engine = SessionEngine(daily([FLAT] * 4), "ks_t")
    engine.submit("buy 1 ACME limit 90 tif gtc")
    closed = engine.close()
    assert [(e.type, e.order, e.reason) for e in closed.events] == [
        ("cancelled", "o1", "closed"),
        ("closed", None, None),
    ]
    assert closed.orders == []
    for call in (lambda: engine.submit("advance"), engine.close):
        with pytest.raises(KestrelError) as err:
            call()
        assert err.value.code == "SESSION_CLOSED"


def test_max_drawdown_on_the_bar_of_a_fill() -> None:
    rows = [FLAT, ("100", "100", "70", "70"), FLAT, FLAT]
    engine = SessionEngine(daily(rows, max_drawdown="0.25"), "ks_t")
    step = engine.submit("buy 900 ACME\nadvance 2")
    assert step.stand_down is not None
    assert step.stand_down.reason == "max-drawdown"
    assert step.frame.clock.bar == 1
    assert [(e.order, e.price) for e in step.frame.events if e.type == "fill"] == [
        ("o1", "100.00"),
        ("o2", "70.00"),
    ]


def test_statements_after_a_max_drawdown_on_a_fill_bar_are_not_applied() -> None:
    # Spec §5: a stand-down ends the source; what follows the `advance` that stood the
    # session down is counted as skipped, never placed on the stood-down session.
    rows = [FLAT, ("100", "100", "70", "70"), FLAT, FLAT]
    engine = SessionEngine(daily(rows, max_drawdown="0.25"), "ks_t")
    step = engine.submit("buy 900 ACME\nadvance 2\nbuy 1 ACME\nadvance")
    assert step.stand_down is not None
    assert step.stand_down.reason == "max-drawdown"
    assert (step.frame.clock.bar, engine.skipped) == (1, 2)
    assert [o.id for o in engine.blotter().orders] == ["o1", "o2"]


def test_a_one_cent_account_stands_down_at_max_drawdown() -> None:
    # The smallest peak there is (one cent): a short of one share at 0.01 loses it all
    # when the close doubles, and 100 % of the peak reaches max_drawdown 0.5.
    cent, two = ("0.01",) * 4, ("0.02",) * 4
    engine = SessionEngine(
        daily([cent, cent, two, two], cash="0.01", shortable=True, max_drawdown="0.5"), "ks_t"
    )
    step = engine.submit("sell 1 ACME\nadvance 3")
    assert step.stand_down is not None
    assert step.stand_down.reason == "max-drawdown"
    assert step.frame.clock.bar == 2
    assert step.frame.account.equity == "0.00"


def test_max_drawdown_with_two_symbols_held() -> None:
    def bar(day: int, a: str, b: str) -> tuple[str, dict[str, tuple[str, str, str, str, int]]]:
        return (
            f"2024-01-0{day}T00:00:00Z",
            {"AAA": (a, a, a, a, 10**6), "BBB": (b, b, b, b, 10**6)},
        )

    loaded = scenario(
        [
            bar(1, "100", "100"),
            bar(2, "100", "100"),
            bar(3, "90", "95"),
            bar(4, "60", "70"),
            bar(5, "50", "50"),
        ],
        max_drawdown="0.2",
    )
    engine = SessionEngine(loaded, "ks_t")
    step = engine.submit("buy 500 AAA\nbuy 400 BBB\nadvance 3")
    # equity 100000 → 93000 (7 %) → 68000 (32 %): stand down at bar 3, both liquidated
    assert step.stand_down is not None
    assert step.frame.clock.bar == 3
    sells = [(e.order, e.qty, e.price) for e in step.frame.events if e.type == "fill"][2:]
    assert sells == [("o3", 500, "60.00"), ("o4", 400, "70.00")]
    assert step.frame.account.equity == "68000.00"


def test_stand_down_liquidates_every_held_symbol_past_a_flat_one() -> None:
    # Spec §5: every position is liquidated, in the tape's symbol order; AAA (first)
    # is flat, BBB is held.
    engine = SessionEngine(two_symbols_peak_then_crash(), "ks_t")
    engine.submit("buy 3 BBB\nadvance")
    step = engine.submit("stand down")
    assert [(e.type, e.order, e.qty, e.price) for e in step.frame.events][-2:] == [
        ("fill", "o2", 3, "100.00"),
        ("stood-down", None, None, None),
    ]
    assert step.frame.positions == []


def test_max_drawdown_with_two_symbols_is_measured_from_a_peak_inside_the_advance() -> None:
    engine = SessionEngine(two_symbols_peak_then_crash(), "ks_t")
    step = engine.submit("buy 500 AAA\nbuy 400 BBB\nadvance 3")
    # equity 100000 → 109000 (the peak, bar 2) → 82000 (bar 3): 27000 / 109000 ≥ 0.2
    assert step.stand_down is not None
    assert step.stand_down.detail.startswith("drawdown 0.24770642 of peak")
    assert (step.frame.clock.bar, step.frame.account.peak) == (3, "109000.00")


@pytest.mark.parametrize(
    "source",
    [
        "buy 1000 ACME\nadvance 3",  # bar 2 passes with no order working
        "buy 1000 ACME\nsell 1 ACME limit 200 tif gtc\nadvance 3",  # bar 2 matches an order
    ],
)
def test_drawdown_exactly_at_max_drawdown_stands_down(source: str) -> None:
    rows = [FLAT, FLAT, ("100", "100", "75", "75"), FLAT, FLAT]
    engine = SessionEngine(daily(rows, max_drawdown="0.25"), "ks_t")
    step = engine.submit(source)  # equity 100000 → 75000: exactly 25 %
    assert step.stand_down is not None
    assert step.stand_down.reason == "max-drawdown"
    assert (step.frame.clock.bar, step.frame.account.equity) == (2, "75000.00")


def test_max_drawdown_of_one_never_stands_down_even_at_zero_equity() -> None:
    rows = [FLAT, FLAT, ("200", "200", "200", "200"), FLAT]
    engine = SessionEngine(daily(rows, cash="1000.00", shortable=True, max_drawdown="1.0"), "ks_t")
    step = engine.submit("sell 10 ACME\nadvance 2")  # short 10 @ 100, marked at 200
    assert step.frame.account.equity == "0.00"  # a 100 % drawdown
    assert (step.stand_down, engine.status) == (None, "open")
