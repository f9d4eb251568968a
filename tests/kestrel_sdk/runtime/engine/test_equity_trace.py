"""The equity series and holdings a grade measures (docs/spec.md §6), read while a session
steps: a read between two steps shows every bar traced so far and no other, stepping on
after a read traces what never reading would, and a stand-down restates its bar."""

from __future__ import annotations

from kestrel_sdk.runtime.engine import SessionEngine

from tests.kestrel_sdk.runtime.engine.tapes import daily

ROWS = [
    ("100", "100", "100", "100"),
    ("100", "102", "99", "101"),
    ("101", "104", "100", "103"),
    ("103", "103", "97", "98"),
    ("98", "99", "95", "96"),
    ("96", "100", "96", "99"),
]
SOURCES = ["advance 1", "buy 10 ACME\nadvance 1", "advance 1", "sell 10 ACME\nadvance 2"]
# cents: bought 10 @ 101.00 at bar 2 (fee 1.01), marked 103 and 98, sold 10 @ 98.00 at
# bar 4 (fee 0.98); the tape ends at bar 5
SERIES = [10_000_000, 10_000_000, 10_001_899, 9_996_899, 9_996_801, 9_996_801]
HELD = b"\x00\x00\x01\x01\x00\x00"


def test_a_series_read_between_steps_is_the_whole_ones_prefix() -> None:
    read = SessionEngine(daily(ROWS, bps="10"), "ks_read")
    unread = SessionEngine(daily(ROWS, bps="10"), "ks_unread")
    seen = []
    for source in SOURCES:
        read.submit(source)
        unread.submit(source)
        seen.append((read.clock, read.series(), bytes(read.holding())))
    assert (unread.series(), bytes(unread.holding())) == (SERIES, HELD)
    assert (read.series(), bytes(read.holding())) == (SERIES, HELD)
    assert [(series, holding) for _, series, holding in seen] == [
        (SERIES[: clock + 1], HELD[: clock + 1]) for clock, _, _ in seen
    ]


def test_a_stand_down_restates_the_bar_it_liquidates_at() -> None:
    rows = [ROWS[0], ("100", "105", "100", "104"), ROWS[0]]
    engine = SessionEngine(daily(rows, bps="10"), "ks_t")
    engine.submit("buy 10 ACME\nadvance 1")  # 10 @ 100.00 (fee 1.00), marked 104
    assert (engine.series(), bytes(engine.holding())) == ([10_000_000, 10_003_900], b"\x00\x01")
    engine.submit("stand down")  # sold at bar 1's close, 104.00 (fee 1.04); held at its close
    assert (engine.series(), bytes(engine.holding())) == ([10_000_000, 10_003_796], b"\x00\x01")
