"""Time in force (docs/spec.md §5): ioc after its first eligible bar, day at the end of that UTC
date, gtc never."""

from __future__ import annotations

from kestrel_sdk.runtime.engine import SessionEngine

from tests.kestrel_sdk.runtime.engine.tapes import daily, minutes

FLAT = ("100", "100", "100", "100")


def expiries(engine: SessionEngine) -> list[tuple[str | None, int, str | None]]:
    return [(e.order, e.bar, e.reason) for e in engine.frame().events if e.type == "expired"]


def test_ioc_expires_after_its_first_eligible_bar() -> None:
    engine = SessionEngine(minutes(5, 1), "ks_t")
    engine.submit("buy 1 ACME limit 99 tif ioc")
    engine.submit("advance")
    assert expiries(engine) == [("o1", 1, "ioc")]
    assert engine.blotter().orders[0].status == "expired"
    assert engine.blotter().orders[0].closed_bar == 1


def test_ioc_partial_fill_then_the_rest_expires() -> None:
    rows = [FLAT, ("100", "100", "100", "100", 4), FLAT]
    engine = SessionEngine(daily(rows), "ks_t")
    step = engine.submit("buy 10 ACME tif ioc\nadvance")
    assert [(e.type, e.qty) for e in step.frame.events] == [
        ("accepted", 10),
        ("fill", 4),
        ("expired", 6),
    ]
    order = engine.blotter().orders[0]
    assert (order.status, order.filled) == ("expired", 4)


def test_day_on_a_daily_tape_lives_one_bar() -> None:
    engine = SessionEngine(daily([FLAT] * 4), "ks_t")
    step = engine.submit("buy 1 ACME limit 99\nadvance")
    assert [(e.type, e.bar) for e in step.frame.events][-1] == ("expired", 1)
    assert step.frame.orders == []


def test_day_expires_after_the_last_bar_of_its_first_eligible_utc_date() -> None:
    # 3 bars a day for 3 days: bars 0-2 on day 1, 3-5 on day 2, 6-8 on day 3.
    engine = SessionEngine(minutes(3, 3), "ks_t")
    engine.submit("buy 1 ACME limit 99")  # placed at bar 0, eligible bar 1 (day 1)
    engine.submit("advance")
    assert expiries(engine) == []
    engine.submit("advance")  # bar 2: last bar of day 1
    assert expiries(engine) == [("o1", 2, "day")]


def test_day_order_placed_at_the_last_bar_of_a_day_lives_through_the_next_day() -> None:
    engine = SessionEngine(minutes(3, 3), "ks_t")
    engine.submit("advance 2")  # clock at bar 2, the last bar of day 1
    engine.submit("buy 1 ACME limit 99 as next")  # eligible at bar 3 (day 2)
    step = engine.submit("advance 2")
    assert [o.id for o in step.frame.orders] == ["o1"]
    engine.submit("advance")
    assert expiries(engine) == [("o1", 5, "day")]


def test_day_orders_placed_on_each_day_expire_at_their_own_days_end() -> None:
    # the placer finds a day's last bar once per day: each day's orders still get their own
    engine = SessionEngine(minutes(3, 3), "ks_t")
    engine.submit("buy 1 ACME limit 99\nbuy 1 ACME limit 98")  # day 1: bars 0-2
    engine.submit("advance 2")  # bar 2, the last of day 1: o1 and o2 expire
    assert expiries(engine) == [("o1", 2, "day"), ("o2", 2, "day")]
    engine.submit("buy 1 ACME limit 97")  # eligible at bar 3 (day 2)
    engine.submit("advance 1\nbuy 1 ACME limit 96")  # placed at bar 3, eligible at 4 (day 2)
    engine.submit("advance 2")  # bar 5, the last of day 2
    assert expiries(engine) == [("o3", 5, "day"), ("o4", 5, "day")]
    engine.submit("buy 1 ACME limit 95\nadvance 3")  # eligible at bar 6 (day 3)
    assert expiries(engine) == [("o5", 8, "day")]


def test_day_expiry_inside_one_long_advance() -> None:
    engine = SessionEngine(minutes(3, 3), "ks_t")
    step = engine.submit("buy 1 ACME limit 99\nbuy 1 ACME limit 98 tif gtc\nadvance 7")
    assert [(e.order, e.bar) for e in step.frame.events if e.type == "expired"] == [("o1", 2)]
    assert [o.id for o in step.frame.orders] == ["o2"]


def test_gtc_never_expires() -> None:
    engine = SessionEngine(minutes(3, 3), "ks_t")
    step = engine.submit("buy 1 ACME limit 99 tif gtc\nadvance 7")
    assert [o.id for o in step.frame.orders] == ["o1"]
    assert all(e.type != "expired" for e in step.frame.events)


def test_ioc_that_misses_its_one_bar_never_fills_later() -> None:
    # bar 1's low (100) misses the limit; bar 2's low (98) would fill it, too late.
    rows = [FLAT, FLAT, ("100", "100", "98", "99"), FLAT]
    engine = SessionEngine(daily(rows), "ks_t")
    step = engine.submit("buy 1 ACME limit 99 tif ioc\nadvance 2")
    assert [(e.type, e.bar) for e in step.frame.events] == [("accepted", 0), ("expired", 1)]


def test_day_order_fills_on_the_last_bar_of_its_day_but_not_the_next_morning() -> None:
    # minute tape, 3 bars a day; the price dips to 99 only at bars 2 and 3
    tape = minutes(3, 2)
    low = tape.tape.columns["ACME"].low
    low[2] = low[3] = 9_900
    engine = SessionEngine(tape, "ks_t")
    step = engine.submit("buy 1 ACME limit 99\nbuy 1 ACME limit 99\nadvance 3")
    fills = [(e.order, e.bar) for e in step.frame.events if e.type == "fill"]
    assert fills == [("o1", 2), ("o2", 2)]
    low[3] = 9_800  # 98.50 is reachable only on day 2: the day order expired at bar 2
    engine = SessionEngine(tape, "ks_t")
    step = engine.submit("advance\nbuy 1 ACME limit 98.50\nadvance 3")
    assert [(e.type, e.bar) for e in step.frame.events if e.type != "accepted"] == [("expired", 2)]


def test_day_partial_fill_on_the_last_bar_of_its_day_then_the_rest_expires() -> None:
    # 3 bars a day of volume 1000; participation 0.004 takes 4 shares a bar
    tape = minutes(3, 2, participation="0.004")
    engine = SessionEngine(tape, "ks_t")
    step = engine.submit("advance\nbuy 10 ACME\nadvance 3")
    events = [(e.type, e.bar, e.qty) for e in step.frame.events if e.type != "accepted"]
    assert events == [("fill", 2, 4), ("expired", 2, 6)]
