"""The orders traders use (docs/engine.md "Order forms"): brackets, one-cancels-other
groups, trailing stops by price and by percent, and target orders by position and by
weight of equity, each rule at the bar where it acts."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from kestrel_protocol import Blotter, KestrelError, SessionFrame, root_of
from kestrel_protocol.surface.compact import frame_text
from kestrel_sdk import render_frame
from kestrel_sdk.runtime.engine import SessionEngine

from tests.kestrel_sdk.runtime.engine.tapes import Bar, daily, scenario

FLAT = ("100", "100", "100", "100")


def session(rows: Sequence[tuple[str, ...]], **terms: Any) -> SessionEngine:
    return SessionEngine(daily([FLAT, *rows, FLAT, FLAT], **terms), "ks_t")


def fills(engine: SessionEngine) -> list[tuple[str, int, str, int | str]]:
    """(order, bar, price, qty) of every fill so far."""
    blotter = engine.blotter()
    return [(f.order, f.bar, f.price, f.qty) for f in blotter.fills]


def orders(engine: SessionEngine) -> dict[str, tuple[str, str | None]]:
    """Each order's (status, reason)."""
    return {o.id: (o.status, o.reason) for o in engine.blotter().orders}


# -- brackets ------------------------------------------------------------------------


def test_bracket_children_wait_for_the_entry_then_the_take_profit_cancels_the_stop_loss() -> None:
    engine = session([("101", "102", "100", "101"), ("102", "111", "101", "110")])
    frame = engine.submit("buy 10 ACME limit 99 take 110 loss 95 tif gtc as entry").frame
    shown = {o.id: (o.status, o.parent, o.type, o.side) for o in frame.orders}
    # the stop-loss first (matched first: pessimistic when both are reached in one bar)
    assert shown == {
        "o1": ("new", None, "limit", "buy"),
        "o2": ("held", "o1", "stop", "sell"),
        "o3": ("held", "o1", "limit", "sell"),
    }
    engine.submit("advance 2")
    assert fills(engine) == []  # the entry never reached 99: the children never acted
    assert orders(engine)["o2"] == ("held", None)
    engine.submit("cancel entry")
    assert orders(engine) == {
        "o1": ("cancelled", "statement"),
        "o2": ("cancelled", "parent"),
        "o3": ("cancelled", "parent"),
    }


def test_market_entry_children_act_on_the_entry_bar_as_backtesting_py() -> None:
    # bar 1 opens at 101 (the entry), then trades down to 94: the stop-loss at 95 fills
    # on the entry's own bar; the take-profit is cancelled by its sibling's fill
    engine = session([("101", "102", "94", "96"), ("96", "120", "96", "119")])
    engine.submit("buy 10 ACME take 110 loss 95\nadvance 2")
    assert fills(engine) == [("o1", 1, "101.00", 10), ("o2", 1, "95.00", 10)]
    assert orders(engine) == {
        "o1": ("filled", None),
        "o2": ("filled", None),
        "o3": ("cancelled", "oco"),
    }
    events = [(e.type, e.order) for e in engine.frame().events]
    assert ("activated", "o2") in events
    assert ("activated", "o3") in events
    assert engine.account.position("ACME") == 0


def test_limit_entry_children_act_from_the_next_bar() -> None:
    # bar 1 fills the limit at 99 and reaches 94 later in the bar: the order of prices in
    # a bar is unknown, so the stop-loss waits for bar 2 (it gaps through: at the open)
    engine = session([("100", "101", "94", "97"), ("93", "98", "92", "97")])
    engine.submit("buy 10 ACME limit 99 take 110 loss 95\nadvance 2")
    assert fills(engine) == [("o1", 1, "99.00", 10), ("o2", 2, "93.00", 10)]


def test_take_profit_wins_when_only_it_is_reached() -> None:
    engine = session([("101", "102", "100", "101"), ("104", "112", "103", "111")])
    engine.submit("buy 10 ACME take 110 loss 95\nadvance 2")
    assert fills(engine) == [("o1", 1, "101.00", 10), ("o3", 2, "110.00", 10)]
    assert orders(engine)["o2"] == ("cancelled", "oco")


def test_stop_loss_wins_when_one_bar_reaches_both() -> None:
    engine = session([("101", "102", "100", "101"), ("101", "112", "94", "100")])
    engine.submit("buy 10 ACME take 110 loss 95\nadvance 2")
    assert fills(engine) == [("o1", 1, "101.00", 10), ("o2", 2, "95.00", 10)]
    assert orders(engine)["o3"] == ("cancelled", "oco")


def test_a_bracket_after_plain_trades_acts_and_each_event_shows_before_what_it_causes() -> None:
    # the links act from the session's first linked order on, whatever was traded before;
    # the frame and the blotter see a fill before the activations and the cancel it causes
    engine = session([FLAT, ("101", "102", "94", "96"), ("96", "120", "96", "119")])
    engine.submit("buy 1 ACME\nadvance")
    frame = engine.submit("sell 1 ACME\nbuy 10 ACME take 110 loss 95\nadvance").frame
    assert [(e.type, e.order) for e in frame.events] == [
        ("accepted", "o2"),
        ("accepted", "o3"),
        ("accepted", "o4"),
        ("accepted", "o5"),
        ("fill", "o2"),
        ("fill", "o3"),
        ("activated", "o4"),
        ("activated", "o5"),
        ("fill", "o4"),
        ("cancelled", "o5"),
    ]
    assert fills(engine)[1:] == [
        ("o2", 2, "101.00", 1),
        ("o3", 2, "101.00", 10),
        ("o4", 2, "95.00", 10),
    ]
    assert orders(engine)["o5"] == ("cancelled", "oco")


def test_bracket_ids_count_in_the_session_checks() -> None:
    engine = session([])
    engine.submit("buy 10 ACME take 110 loss 95\ncancel o3")
    with pytest.raises(KestrelError) as refused:
        engine.submit("cancel o4")
    assert "K204" in str(refused.value)


# -- one-cancels-other ---------------------------------------------------------------


def test_oco_group_first_fill_cancels_the_other_members() -> None:
    engine = session([("100", "100", "100", "100"), ("100", "106", "99", "105")])
    engine.submit(
        "buy 10 ACME\nadvance\n"
        "sell 10 ACME limit 105 oco exit tif gtc\n"
        "sell 10 ACME stop 90 oco exit tif gtc\n"
        "advance"
    )
    assert fills(engine) == [("o1", 1, "100.00", 10), ("o2", 2, "105.00", 10)]
    assert orders(engine)["o3"] == ("cancelled", "oco")
    assert {o.id: o.group for o in engine.blotter().orders} == {
        "o1": None,
        "o2": "exit",
        "o3": "exit",
    }


# -- trailing stops ------------------------------------------------------------------


def test_trailing_stop_by_price_ratchets_on_closes_and_never_falls() -> None:
    rows = [
        ("100", "104", "99", "103"),  # bar 1: buy at 100; close 103 -> stop 101 for bar 2
        ("103", "106", "102", "105"),  # bar 2: low 102 > 101; close 105 -> stop 103
        ("105", "105", "103.50", "104"),  # bar 3: low 103.50 > 103; close 104: stays 103
        ("104", "104", "102", "102"),  # bar 4: low 102 <= 103: fills at 103
    ]
    engine = session(rows)
    engine.submit("buy 10 ACME\nsell 10 ACME trail 2 tif gtc")
    first = {o.id: (o.type, o.stop, o.trail) for o in engine.frame().orders}
    assert first["o2"] == ("trailing-stop", "98.00", "2")  # bar 0's close 100 - 2
    engine.submit("advance 3")
    assert {o.id: o.stop for o in engine.frame().orders} == {"o2": "103.00"}
    engine.submit("advance")
    assert fills(engine) == [("o1", 1, "100.00", 10), ("o2", 4, "103.00", 10)]


def test_trailing_stop_gapped_through_fills_at_the_open() -> None:
    rows = [("100", "110", "100", "110"), ("90", "95", "89", "92")]
    engine = session(rows)
    engine.submit("buy 10 ACME\nsell 10 ACME trail 5 tif gtc\nadvance 2")
    assert fills(engine) == [("o1", 1, "100.00", 10), ("o2", 2, "90.00", 10)]


def test_trailing_stop_by_percent_rounds_away_from_the_market_to_the_tick() -> None:
    rows = [("100", "101", "99", "100.33"), ("100", "100.5", "95.30", "96")]
    engine = session(rows)
    engine.submit("buy 10 ACME\nsell 10 ACME trail 5% tif gtc\nadvance")
    # 100.33 x 0.95 = 95.3135: down to the tick, 95.31
    assert {o.id: (o.stop, o.trail) for o in engine.frame().orders} == {"o2": ("95.31", "5%")}
    engine.submit("advance")
    assert fills(engine) == [("o1", 1, "100.00", 10), ("o2", 2, "95.31", 10)]


def test_trailing_buy_stop_follows_the_lowest_close() -> None:
    rows = [("100", "100", "95", "95"), ("95", "96", "90", "90"), ("90", "99", "90", "98")]
    engine = session(rows, shortable=True)
    engine.submit("sell 10 ACME\nbuy 10 ACME trail 3 tif gtc\nadvance 3")
    # stop 103 after bar 0, 98 after bar 1, 93 after bar 2: bar 3's high 99 reaches it
    assert fills(engine) == [("o1", 1, "100.00", 10), ("o2", 3, "93.00", 10)]


# -- targets ---------------------------------------------------------------------------


def test_target_position_trades_the_difference_on_its_own_side() -> None:
    engine = session([FLAT, FLAT, FLAT])
    engine.submit("buy 20 ACME\nadvance\nbuy ACME to 50\nadvance")
    assert fills(engine)[-1] == ("o2", 2, "100.00", 30)
    engine.submit("buy ACME to 40\nsell ACME to 0\nadvance")
    assert orders(engine)["o3"] == ("cancelled", "at-target")  # a buy never sells
    assert fills(engine)[-1] == ("o4", 3, "100.00", 50)
    assert engine.account.position("ACME") == 0
    assert {o.id: o.target for o in engine.blotter().orders}["o4"] == "0"


def test_target_weight_of_equity_at_the_clock_close_rounded_down_to_the_lot() -> None:
    rows = [("102", "103", "101", "103")]
    engine = session(rows, lot=5)
    engine.submit("buy ACME to 10%")  # clock bar 0 closes at 100: 10,000 / 100 = 100
    assert engine.frame().orders[0].qty == 100
    engine.submit("advance")
    # bought 100 at 102 (0 bps): equity at bar 1's close 103 is 89,800 + 10,300 =
    # 100,100 -> 10,010 / 103 = 97.2 -> 95 in lots of 5 -> sell 5
    engine.submit("sell ACME to 10%\nadvance")
    assert fills(engine) == [("o1", 1, "102.00", 100), ("o2", 2, "100.00", 5)]
    assert engine.blotter().orders[1].target == "10%"


# -- what the frame and the blotter show ---------------------------------------------------


def test_links_are_in_the_frame_s_canonical_text_and_absent_from_a_plain_order() -> None:
    engine = session([("101", "102", "100", "101"), FLAT])
    engine.submit(
        "buy 1 ACME\n"
        "buy 10 ACME limit 99 take 110 loss 95 tif gtc\n"
        "sell 1 ACME trail 1% oco out tif gtc\n"
        "sell 1 ACME limit 200 oco out tif gtc\n"
        "buy ACME to 5"
    )
    frame = engine.frame()
    # the hand-built canonical text is the model's: the root an agent can recompute
    assert engine.frame_root() == root_of(frame)
    assert root_of(SessionFrame.model_validate_json(engine.frame_text())) == engine.frame_root()
    shown = {o["id"]: o for o in frame.to_json()["orders"]}
    assert set(shown["o1"]) == PLAIN_ORDER_KEYS  # no link member, not even null
    assert shown["o3"]["parent"] == "o2"
    assert (shown["o5"]["group"], shown["o5"]["trail"], shown["o5"]["stop"]) == (
        "out",
        "1%",
        "99.00",
    )
    assert shown["o7"]["target"] == "5"
    engine.submit("advance 2")
    assert engine.frame_root() == root_of(engine.frame())
    blotter = engine.blotter().to_json()
    assert root_of(Blotter.model_validate(blotter)) == blotter["root"]
    orders_shown = {o["id"]: o for o in blotter["orders"]}
    assert "parent" not in orders_shown["o1"]
    assert orders_shown["o4"]["parent"] == "o2"


PLAIN_ORDER_KEYS = {
    "alias",
    "filled",
    "id",
    "limit",
    "qty",
    "side",
    "status",
    "stop",
    "symbol",
    "tif",
    "type",
}


def test_a_model_and_a_person_read_the_links_in_the_text_renderings() -> None:
    engine = session([])
    engine.submit("buy 10 ACME limit 99 take 110 loss 95 tif gtc\nsell 1 ACME trail 1% oco out")
    frame = engine.frame()
    text = frame_text(frame.to_json())  # what an MCP host's model reads
    assert "o2: sell 10 ACME stop 95.00 of o1 tif gtc, held" in text
    assert "o4: sell 1 ACME stop 99.00 trail 1% oco out tif day, new" in text
    shown = render_frame(frame)  # what a person reads
    assert "o3 sell 10 ACME limit limit 110.00 of o1 tif gtc [held]" in shown
    assert "o4 sell 1 ACME trailing-stop trail 1% stop 99.00 oco out tif day [new]" in shown


def test_a_basket_rebalances_by_weight_one_line_per_symbol_and_deterministically() -> None:
    def bar(day: int, aaa: str, bbb: str) -> Bar:
        return (
            f"2024-01-0{day}T00:00:00Z",
            {"AAA": (aaa, aaa, aaa, aaa, 10**6), "BBB": (bbb, bbb, bbb, bbb, 10**6)},
        )

    bars = [bar(1, "50", "20"), bar(2, "50", "20"), bar(3, "100", "20"), bar(4, "100", "20")]
    bars.append(bar(5, "100", "20"))
    roots = set()
    for _ in range(2):
        engine = SessionEngine(scenario(bars), "ks_basket")
        # 40% of 100,000 each: 800 AAA at 50, 2,000 BBB at 20
        engine.submit("buy AAA to 40%\nbuy BBB to 40%\nadvance")
        assert [(f.order, f.qty) for f in engine.blotter().fills] == [("o1", 800), ("o2", 2000)]
        # AAA doubles: equity 140,000; 40% is 560 AAA (sell 240) and 2,800 BBB (buy 800);
        # the sell comes first so its cash pays for the buy
        engine.submit("advance\nsell AAA to 40%\nbuy BBB to 40%\nadvance")
        assert [(f.order, f.qty) for f in engine.blotter().fills][2:] == [("o3", 240), ("o4", 800)]
        assert (engine.account.position("AAA"), engine.account.position("BBB")) == (560, 2800)
        roots.add(engine.blotter().root)
    assert len(roots) == 1


def test_a_trailing_stop_loss_starts_at_the_entry_s_fill_and_ratchets_on_closes() -> None:
    rows = [
        ("100", "101", "99", "101"),  # bar 1: entry at 100 (stop 98 this bar), close 101
        ("101", "105", "100", "104"),  # bar 2: stop 99; close 104 -> 102
        ("104", "104", "101", "103"),  # bar 3: low 101 <= 102: the stop-loss fills at 102
    ]
    engine = session(rows)
    engine.submit("buy 10 ACME take 120 loss trail 2\nadvance 3")
    assert fills(engine) == [("o1", 1, "100.00", 10), ("o2", 3, "102.00", 10)]
    assert orders(engine)["o3"] == ("cancelled", "oco")
    shown = {o.id: (o.type, o.trail, o.parent) for o in engine.blotter().orders}
    assert shown["o2"] == ("trailing-stop", "2", "o1")


def test_a_trailing_stop_is_matched_at_its_own_bar_s_stop_when_another_order_acts_first() -> None:
    rows = [
        ("101", "101.50", "100.60", "101"),  # bar 1: the buy fills at 101; stop 98 this bar
        ("101", "110", "100.50", "110"),  # bar 2: stop 99 (the limit buy acts here)
        ("109", "109", "107", "108"),  # bar 3: stop 108: the trailing stop fills at 108
    ]
    engine = session(rows)
    engine.submit("buy 10 ACME\nsell 10 ACME trail 2 tif gtc\nbuy 1 ACME limit 100.50 tif gtc")
    engine.submit("advance 3")
    assert fills(engine) == [
        ("o1", 1, "101.00", 10),
        ("o3", 2, "100.50", 1),
        ("o2", 3, "108.00", 10),
    ]


@pytest.mark.parametrize("seed", range(40))
def test_a_trailing_stop_fills_where_a_bar_by_bar_reading_of_the_rule_does(seed: int) -> None:
    """Random tapes, and limit orders acting at random bars in between: the event-driven
    loop's trailing stop fills at the bar and price of the rule read bar by bar."""
    rng = random.Random(seed)
    cents = [10_000]
    for _ in range(80):
        cents.append(max(1_000, cents[-1] + rng.randint(-300, 320)))
    rows = []
    for close in cents[1:]:
        opened = close + rng.randint(-150, 150)
        rows.append((opened, max(opened, close) + rng.randint(0, 200), close))
    bars = [(c, c, c, c) for c in cents[:1]]
    bars += [(o, h, min(o, c) - rng.randint(0, 200), c) for o, h, c in rows]
    text = [tuple(f"{v // 100}.{v % 100:02d}" for v in bar) for bar in bars]
    offset = rng.randint(100, 600)
    engine = SessionEngine(daily([*text, text[-1]], shortable=True), "ks_t")
    low_, high_ = min(cents), max(cents)
    others = "\n".join(
        f"{side} 1 ACME limit {p // 100}.{p % 100:02d} tif gtc"
        for side, p in ((rng.choice(("buy", "sell")), rng.randint(low_, high_)) for _ in range(12))
    )
    engine.submit(f"buy 10 ACME\nsell 10 ACME trail {offset // 100}.{offset % 100:02d} tif gtc")
    engine.submit(f"{others}\nadvance {len(bars) - 1}")
    found = [(bar, price) for order, bar, price, _ in fills(engine) if order == "o2"]
    expected: list[tuple[int, str]] = []
    best = bars[0][3]
    for k in range(1, len(bars)):
        o, _, low, close = bars[k]
        stop = best - offset
        if low <= stop:
            price = o if o <= stop else stop
            expected = [(k, f"{price // 100}.{price % 100:02d}")]
            break
        best = max(best, close)
    assert found == expected
