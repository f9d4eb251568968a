"""Matching at a bar (docs/spec.md §5): each order type's fill price, slippage, participation."""

from __future__ import annotations

import random
from array import array
from typing import Any

import pytest
from kestrel_sdk.runtime.catalog import build_loaded_scenario
from kestrel_sdk.runtime.engine import SessionEngine
from kestrel_sdk.runtime.engine.fill import first_ge, first_le, trigger_search

from tests.kestrel_sdk.runtime.engine.tapes import daily

OPEN = ("100", "100", "100", "100")
BAR = ("101", "103", "99", "102")  # O, H, L, C of bar 1


def fills_of(engine: SessionEngine) -> list[tuple[str, int, str]]:
    return [
        (e.order or "", e.bar, e.price or "") for e in engine.frame().events if e.type == "fill"
    ]


def fill_price(statement: str, bars: list[Any] | None = None, **terms: Any) -> str | None:
    engine = SessionEngine(daily([OPEN, *(bars or [BAR]), OPEN], **terms), "ks_t")
    engine.submit(f"{statement}\nadvance")
    prices = [e.price for e in engine.frame().events if e.type == "fill"]
    assert len(prices) <= 1
    return prices[0] if prices else None


PRICE_CASES = [
    ("buy 10 ACME", "101.00"),
    ("sell 10 ACME", None),  # flat, not shortable: see the rejection tests
    ("buy 10 ACME limit 101.50", "101.00"),  # O <= L: at the open
    ("buy 10 ACME limit 100", "100.00"),  # Low <= L: at the limit
    ("buy 10 ACME limit 98.50", None),
    ("buy 10 ACME stop 100", "101.00"),  # gap through the stop: at the open
    ("buy 10 ACME stop 102.50", "102.50"),  # inside the bar: at the stop
    ("buy 10 ACME stop 104", None),
    ("buy 10 ACME stop 100 limit 100.50", "100.50"),  # gap: limit rule this bar
    ("buy 10 ACME stop 100 limit 98", None),  # gap, limit not reached
    ("buy 10 ACME stop 102 limit 102.50", "102.00"),  # inside, L >= S: at S
    ("buy 10 ACME stop 102 limit 101.50", None),  # inside, L < S: rests
]


@pytest.mark.parametrize(("statement", "price"), PRICE_CASES)
def test_buy_side_fill_prices(statement: str, price: str | None) -> None:
    assert fill_price(statement) == price


SELL_CASES = [
    ("sell 10 ACME", "101.00"),
    ("sell 10 ACME limit 100.50", "101.00"),  # O >= L
    ("sell 10 ACME limit 102", "102.00"),  # High >= L
    ("sell 10 ACME limit 104", None),
    ("sell 10 ACME stop 102", "101.00"),  # O <= S gap
    ("sell 10 ACME stop 99.50", "99.50"),  # Low <= S
    ("sell 10 ACME stop 98", None),
    ("sell 10 ACME stop 102 limit 101.50", "101.50"),  # gap: limit rule (High >= L)
    ("sell 10 ACME stop 100 limit 99.50", "100.00"),  # inside, L <= S: at S
    ("sell 10 ACME stop 100 limit 100.50", None),  # inside, L > S: rests
]


@pytest.mark.parametrize(("statement", "price"), SELL_CASES)
def test_sell_side_mirrors(statement: str, price: str | None) -> None:
    assert fill_price(statement, shortable=True) == price


# Each rule of docs/spec.md §5 at its boundary, on bar 1 = O 101, H 103, L 99, C 102.
BOUNDARY_CASES = [
    # stop S: "O ≥ S fills at O; else High ≥ S fills at S", equality included
    ("buy 10 ACME stop 103", "103.00"),  # High == S
    ("sell 10 ACME stop 99", "99.00"),  # Low == S
    ("buy 10 ACME stop 101", "101.00"),  # O == S
    ("sell 10 ACME stop 101", "101.00"),
    # limit L: "O ≤ L fills at O; else Low ≤ L fills at L"
    ("buy 10 ACME limit 101", "101.00"),  # O == L
    ("buy 10 ACME limit 99", "99.00"),  # Low == L
    ("sell 10 ACME limit 103", "103.00"),  # High == L
    # stop-limit opening exactly at its stop is a gap: the limit rule applies that bar,
    # even with the limit on the far side of the stop
    ("buy 10 ACME stop 101 limit 100.50", "100.50"),
    ("sell 10 ACME stop 101 limit 101.50", "101.50"),
    ("buy 10 ACME stop 100 limit 101", "101.00"),  # gap and O == L: at the open
    # triggered inside the bar with the limit equal to the stop: L ≥ S holds, fills at S
    ("buy 10 ACME stop 102 limit 102", "102.00"),
    ("sell 10 ACME stop 100 limit 100", "100.00"),
    # triggered inside the bar exactly at the extreme: High == S (buy), Low == S (sell)
    ("buy 10 ACME stop 103 limit 103", "103.00"),
    ("sell 10 ACME stop 99 limit 98.50", "99.00"),
]


@pytest.mark.parametrize(("statement", "price"), BOUNDARY_CASES)
def test_matching_rules_at_their_boundaries(statement: str, price: str | None) -> None:
    assert fill_price(statement, shortable=True) == price


@pytest.mark.parametrize(
    ("statement", "gap", "later", "price"),
    [
        # gaps through the stop, but the open and the low are above the limit: no fill
        (
            "buy 10 ACME stop 102 limit 101.50 tif gtc",
            ("103", "104", "102.50", "103"),
            ("101.80", "101.90", "101.20", "101.50"),
            "101.50",
        ),
        (
            "sell 10 ACME stop 98 limit 98.50 tif gtc",
            ("97", "97.50", "96", "97"),
            ("98.20", "98.80", "98.10", "98.50"),
            "98.50",
        ),
    ],
)
def test_gap_triggered_stop_limit_that_cannot_fill_rests_as_a_limit(
    statement: str, gap: tuple[str, ...], later: tuple[str, ...], price: str
) -> None:
    # The next bar never reaches the stop again; the order fills there as a plain limit.
    engine = SessionEngine(daily([OPEN, gap, later, OPEN], shortable=True), "ks_t")
    step = engine.submit(f"{statement}\nadvance")
    assert fills_of(engine) == []
    assert step.frame.orders[0].status == "new"
    engine.submit("advance")
    assert fills_of(engine) == [("o1", 2, price)]


def test_intrabar_stop_limit_rests_as_a_limit_from_the_next_bar() -> None:
    engine = SessionEngine(
        daily([OPEN, BAR, ("101.40", "101.60", "101.30", "101.50"), OPEN]), "ks_t"
    )
    step = engine.submit("buy 10 ACME stop 102 limit 101.50 tif gtc\nadvance")
    assert fills_of(engine) == []
    assert step.frame.orders[0].status == "new"
    engine.submit("advance")
    assert fills_of(engine) == [("o1", 2, "101.40")]  # limit rule: O <= L


def test_untriggered_stop_limit_does_not_fill_as_a_limit() -> None:
    # Low 99 would fill a limit at 101.50, but the stop at 104 never triggers.
    assert fill_price("buy 10 ACME stop 104 limit 101.50") is None


def test_orders_fill_in_id_order_within_a_bar() -> None:
    engine = SessionEngine(daily([OPEN, BAR, OPEN], cash="1000.00"), "ks_t")
    engine.submit("buy 5 ACME limit 100\nbuy 5 ACME\nadvance")
    events = [(e.type, e.order) for e in engine.frame().events if e.type != "accepted"]
    # o1 (limit 100) takes 500.00 first; o2 at 101 then lacks cash.
    assert events == [("fill", "o1"), ("rejected", "o2")]


SLIPPAGE_CASES = [
    ("buy 10 ACME", "50", "0.01", "101.51"),  # 101 × 1.005 = 101.505 → up to the tick
    ("sell 10 ACME", "50", "0.01", "100.49"),  # 101 × 0.995 = 100.495 → down to the tick
    ("buy 10 ACME", "50", "0.05", "101.55"),  # coarser tick, still against the order
    ("buy 10 ACME", "300", "0.01", "103.00"),  # 104.03 capped at the High
    ("sell 10 ACME", "300", "0.01", "99.00"),  # 97.97 capped at the Low
    ("buy 10 ACME stop 102.50", "50", "0.01", "103.00"),  # 103.0125 → 103.02 → High
    ("buy 10 ACME stop 100", "10", "0.01", "101.11"),  # gap fill slips too: 101.101
    ("buy 10 ACME limit 100", "50", "0.01", "100.00"),  # limits never slip
    ("buy 10 ACME stop 102 limit 102.50", "50", "0.01", "102.00"),  # nor stop-limits
]


@pytest.mark.parametrize(("statement", "bps", "tick", "price"), SLIPPAGE_CASES)
def test_slippage_against_the_order_on_the_tick_capped_at_the_bar(
    statement: str, bps: str, tick: str, price: str
) -> None:
    assert fill_price(statement, slippage_bps=bps, tick=tick, shortable=True) == price


def test_the_bar_search_finds_the_first_bar_across_chunks_or_returns_minus_one() -> None:
    col = array("q", [500] * 600)
    col[300] = col[555] = 100
    assert (first_le(col, 100, 0, 599), first_le(col, 100, 301, 599)) == (300, 555)
    assert (first_le(col, 99, 0, 599), first_le(col, 100, 556, 599)) == (-1, -1)
    high = array("q", [100] * 600)
    high[299] = high[520] = 500
    assert (first_ge(high, 500, 0, 599), first_ge(high, 500, 300, 599)) == (299, 520)
    assert (first_ge(high, 501, 0, 599), first_ge(high, 500, 521, 599)) == (-1, -1)


def test_the_bar_search_agrees_with_a_plain_loop_once_blocks_are_remembered() -> None:
    """Whole blocks of 256 bars are screened by a minimum or maximum found the first
    time a search crosses them; later searches (other orders, other sessions on the
    tape) trust it. The same answers as a plain loop, first search or later."""
    rng = random.Random(11)
    col = array("q", [rng.randrange(-500, 500) for _ in range(3000)])
    for _ in range(2000):
        start = rng.randrange(0, 3000)
        end = rng.randrange(start - 1, 3000)
        x = rng.randrange(-520, 520)
        span = range(start, end + 1)
        assert first_le(col, x, start, end) == next((k for k in span if col[k] <= x), -1)
        assert first_ge(col, x, start, end) == next((k for k in span if col[k] >= x), -1)


def test_the_trigger_search_of_an_empty_range_finds_nothing() -> None:
    engine = SessionEngine(daily([OPEN, BAR, OPEN]), "ks_t")
    engine.submit("buy 1 ACME limit 100 tif gtc")
    (order,) = engine.orders
    low = array("q", [9_900, 9_900, 9_900])
    assert trigger_search(order, low, low, 1, 2) == 1
    assert trigger_search(order, low, low, 2, 1) == -1


def test_participation_caps_each_fill_and_the_rest_stays_open() -> None:
    rows = [OPEN] + [("100", "100", "100", "100", 55)] * 3 + [OPEN]
    engine = SessionEngine(daily(rows, participation="0.1"), "ks_t")
    step = engine.submit("buy 12 ACME tif gtc\nadvance")
    assert [(e.type, e.qty) for e in step.frame.events] == [("accepted", 12), ("fill", 5)]
    assert [(o.status, o.filled) for o in step.frame.orders] == [("partially_filled", 5)]
    step = engine.submit("advance 2")
    assert [(e.bar, e.qty) for e in step.frame.events] == [(2, 5), (3, 2)]
    assert step.frame.orders == []
    assert engine.blotter().orders[0].status == "filled"
    assert engine.blotter().orders[0].avg_price == "100.00"


def test_participation_rounds_down_to_the_lot() -> None:
    rows = [OPEN, ("100", "100", "100", "100", 75), OPEN]
    engine = SessionEngine(daily(rows, participation="0.5", lot=10), "ks_t")
    step = engine.submit("buy 100 ACME\nadvance")
    assert [(e.type, e.qty) for e in step.frame.events if e.type == "fill"] == [("fill", 30)]


def test_zero_volume_bar_fills_nothing() -> None:
    rows = [OPEN, ("100", "100", "100", "100", 0), OPEN]
    engine = SessionEngine(daily(rows), "ks_t")
    step = engine.submit("buy 1 ACME tif gtc\nadvance")
    assert [e.type for e in step.frame.events] == ["accepted"]
    assert step.frame.orders[0].status == "new"


def test_participation_of_fractional_volumes_is_exact_and_floors_to_whole_shares() -> None:
    # a crypto tape: volumes of fractions of a coin; quantities stay whole, so the cap is
    # floor(participation × volume) computed exactly (no float can round 12.99999999 up)
    bars = [
        ("100", "100", "100", "100", "3"),
        ("100", "100", "100", "100", "55.5"),  # 0.1 × 55.5 = 5.55: 5
        ("100", "100", "100", "100", "9.99999999"),  # 0.999999999: nothing
        ("100", "100", "100", "100", "129.99999999"),  # 12.999999999: 12
        ("100", "100", "100", "100", "0.00000001"),
    ]
    loaded = build_loaded_scenario(bars, participation="0.1")
    assert loaded.tape.volume_scale == 8
    engine = SessionEngine(loaded, "ks_t")
    step = engine.submit("buy 20 ACME tif gtc\nadvance 3")
    assert [(e.bar, e.qty) for e in step.frame.events if e.type == "fill"] == [(1, 5), (3, 12)]
    assert [(o.status, o.filled) for o in step.frame.orders] == [("partially_filled", 17)]
    assert step.frame.bars["ACME"].volume == "129.99999999"


def test_a_tick_finer_than_the_tape_scales_the_bars_to_it() -> None:
    # tape in cents, tick 0.005: bars are compared and marked at three places
    engine = SessionEngine(
        daily([OPEN, ("101", "103", "99.99", "102"), OPEN], tick="0.005"), "ks_t"
    )
    step = engine.submit("buy 10 ACME limit 99.995\nadvance")
    assert fills_of(engine) == [("o1", 1, "99.995")]
    assert (step.frame.account.cash, step.frame.marks) == ("99000.05", {"ACME": "102.000"})
