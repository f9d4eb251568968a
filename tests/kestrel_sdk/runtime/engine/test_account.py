"""Cash, shortability and position limits as rejection events; fees; equity, peak,
drawdown; realized P&L and average price (docs/spec.md §5)."""

from __future__ import annotations

from typing import Any

from kestrel_sdk.runtime.engine import SessionEngine

from tests.kestrel_sdk.runtime.engine.tapes import daily

FLAT = ("100", "100", "100", "100")


def engine_on(rows: list[Any] | None = None, **terms: Any) -> SessionEngine:
    return SessionEngine(daily(rows or [FLAT] * 10, **terms), "ks_t")


def outcome(engine: SessionEngine, source: str) -> list[tuple[str, int | str | None, str | None]]:
    step = engine.submit(source)
    return [(e.type, e.qty, e.reason) for e in step.frame.events if e.type != "accepted"]


def test_buy_that_cash_cannot_cover_including_fee_is_rejected() -> None:
    engine = engine_on(cash="1000.00", bps="10")
    # 10 × 100 = 1000.00 notional + 1.00 fee > 1000.00 cash
    assert outcome(engine, "buy 10 ACME\nadvance") == [("rejected", 10, "insufficient-cash")]
    assert engine.frame().account.cash == "1000.00"
    order = engine.blotter().orders[0]
    assert (order.status, order.reason, order.closed_bar) == ("rejected", "insufficient-cash", 1)


def test_buy_exactly_covered_with_its_fee_fills() -> None:
    engine = engine_on(cash="1001.00", bps="10")
    assert outcome(engine, "buy 10 ACME\nadvance") == [("fill", 10, None)]
    assert engine.frame().account.cash == "0.00"


def test_sell_beyond_the_position_is_rejected_unless_shortable() -> None:
    engine = engine_on()
    assert outcome(engine, "buy 5 ACME\nadvance") == [("fill", 5, None)]
    assert outcome(engine, "sell 10 ACME\nadvance") == [("rejected", 10, "not-shortable")]
    assert outcome(engine, "sell 5 ACME\nadvance") == [("fill", 5, None)]
    short = engine_on(shortable=True)
    assert outcome(short, "sell 10 ACME\nadvance") == [("fill", 10, None)]
    assert short.frame().positions[0].qty == -10


def test_fill_beyond_max_position_is_rejected() -> None:
    engine = engine_on(max_position=10, shortable=True)
    assert outcome(engine, "buy 11 ACME\nadvance") == [("rejected", 11, "max-position")]
    assert outcome(engine, "buy 10 ACME\nadvance") == [("fill", 10, None)]
    assert outcome(engine, "buy 1 ACME\nadvance") == [("rejected", 1, "max-position")]
    assert outcome(engine, "sell 20 ACME\nadvance") == [("fill", 20, None)]  # to -10
    assert outcome(engine, "sell 1 ACME\nadvance") == [("rejected", 1, "max-position")]


def test_rejections_are_events_not_refusals() -> None:
    engine = engine_on()
    step = engine.submit("sell 1 ACME\nadvance")
    assert step.frame.seq == 1
    assert engine.status == "open"


def test_fee_is_bps_of_notional_rounded_half_even_to_the_cent() -> None:
    engine = engine_on(bps="0.5")  # fee = notional × 0.00005
    fees = []
    for qty in (1, 3, 5):  # 0.005 → 0.00, 0.015 → 0.02, 0.025 → 0.02
        step = engine.submit(f"buy {qty} ACME\nadvance")
        fees += [e.fee for e in step.frame.events if e.type == "fill"]
    assert fees == ["0.00", "0.02", "0.02"]
    assert engine.frame().account.fees == "0.04"


def test_fee_minimum_applies_per_fill() -> None:
    engine = engine_on(bps="10", minimum="5.00")
    step = engine.submit("buy 1 ACME\nadvance")
    assert [e.fee for e in step.frame.events if e.type == "fill"] == ["5.00"]
    assert step.frame.account.cash == "99895.00"


def test_equity_peak_and_drawdown_at_each_processed_close() -> None:
    rows = [FLAT, ("100", "110", "100", "110"), ("110", "115", "90", "90"), FLAT]
    engine = engine_on(rows)
    engine.submit("buy 10 ACME\nadvance 2")
    account = engine.frame().account
    # cash 99000; closes 110 then 90: equity 100100 (the peak) then 99900
    assert (account.cash, account.equity, account.peak) == ("99000.00", "99900.00", "100100.00")
    assert account.drawdown == "0.00199800"  # 200 / 100100
    assert engine.frame().marks == {"ACME": "90.00"}


def test_peak_counts_a_bar_inside_a_long_advance() -> None:
    rows = [FLAT, FLAT, ("100", "150", "100", "150"), FLAT, FLAT]
    engine = engine_on(rows)
    engine.submit("buy 10 ACME\nadvance")
    engine.submit("advance 2")
    assert engine.frame().account.peak == "100500.00"


def test_peak_inside_one_advance_is_the_best_close_for_a_single_share_and_a_short() -> None:
    # Spec §5: peak tracks equity at each processed close, also for bars an `advance`
    # passes with nothing to match. Closes 120, 110, 90, 95 after the fill at 100: one
    # share long peaks at the 120 close, one share short at the 90 close.
    rows = [FLAT, FLAT, *((c,) * 4 for c in ("120", "110", "90", "95"))]
    for side, shortable, peak in (("buy", False, "100020.00"), ("sell", True, "100010.00")):
        engine = engine_on(rows, shortable=shortable)
        engine.submit(f"{side} 1 ACME\nadvance")
        engine.submit("advance 4")
        assert engine.frame().account.peak == peak, side


def test_average_price_realized_pnl_and_flip() -> None:
    rows = [FLAT, FLAT, ("110", "110", "110", "110"), FLAT, FLAT, FLAT]
    engine = engine_on(rows, shortable=True)
    engine.submit("buy 10 ACME\nadvance")  # 10 @ 100
    engine.submit("buy 10 ACME\nadvance")  # 10 @ 110 → avg 105
    position = engine.frame().positions[0]
    assert (position.qty, position.avg_price, position.unrealized) == (20, "105.00", "100.00")
    engine.submit("sell 25 ACME\nadvance")  # closes 20 @ 100: -100; opens -5 @ 100
    frame = engine.frame()
    assert frame.account.realized == "-100.00"
    assert (frame.positions[0].qty, frame.positions[0].avg_price) == (-5, "100.00")
    assert frame.account.unrealized == "0.00"
    assert frame.account.equity == "99900.00"


def test_fractional_average_rounds_for_display_only() -> None:
    rows = [FLAT, FLAT, ("100.01", "100.01", "100.01", "100.01"), FLAT, FLAT]
    engine = engine_on(rows)
    engine.submit("buy 2 ACME\nadvance")
    engine.submit("buy 1 ACME\nadvance")  # avg (200 + 100.01) / 3 = 100.00333…
    assert engine.frame().positions[0].avg_price == "100.00"
    engine.submit("sell 3 ACME\nadvance")  # at 100: realized = 300 − 300.01
    assert engine.frame().account.realized == "-0.01"
    assert engine.frame().account.equity == "99999.99"


def test_fee_minimum_against_bps_at_the_boundary() -> None:
    # 10 bps with a 1.00 minimum: 990.00 of notional pays the minimum, 1000.00 pays
    # exactly the minimum either way, 1010.00 pays its bps (1.01).
    rows = [FLAT, ("110", "110", "110", "110"), FLAT, ("101", "101", "101", "101"), FLAT]
    engine = engine_on(rows, bps="10", minimum="1.00")
    fees = []
    for source in ("buy 9 ACME\nadvance", "buy 10 ACME\nadvance", "buy 10 ACME\nadvance"):
        step = engine.submit(source)
        fees += [(e.price, e.fee) for e in step.frame.events if e.type == "fill"]
    assert fees == [("110.00", "1.00"), ("100.00", "1.00"), ("101.00", "1.01")]
    assert engine.frame().account.fees == "3.01"


def test_a_partial_close_keeps_an_average_of_half_a_cent_exact() -> None:
    rows = [FLAT, FLAT, ("100.01", "100.01", "100.01", "100.01"), FLAT, FLAT]
    engine = engine_on(rows)
    engine.submit("buy 1 ACME\nadvance")  # 1 @ 100.00
    engine.submit("buy 1 ACME\nadvance")  # 1 @ 100.01: avg 100.005, basis 200.01
    engine.submit("sell 1 ACME\nadvance")  # at 100.00: realized -0.005, 1 left @ 100.005
    frame = engine.frame()
    assert (frame.positions[0].qty, frame.positions[0].avg_price) == (1, "100.00")  # half-even
    assert frame.account.realized == "0.00"  # -0.005 rounds half-even to the even cent
    assert frame.positions[0].unrealized == "0.00"  # 100.00 - 100.005 = -0.005 likewise
    engine.submit("sell 1 ACME\nadvance")  # the second half-cent makes a whole one
    assert engine.frame().account.realized == "-0.01"
    assert engine.frame().account.equity == "99999.99"


def test_selling_down_to_one_share_keeps_the_average_of_the_buys() -> None:
    rows = [FLAT, FLAT, ("110", "110", "110", "110"), FLAT]
    engine = engine_on(rows)
    engine.submit("buy 3 ACME\nadvance")  # 3 @ 100
    engine.submit("sell 2 ACME\nadvance")  # 2 @ 110: realized 20, 1 left, still @ 100
    frame = engine.frame()
    assert (frame.positions[0].qty, frame.positions[0].avg_price) == (1, "100.00")
    assert (frame.account.realized, frame.account.unrealized) == ("20.00", "10.00")
