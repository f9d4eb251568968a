"""Fractional lots in the engine (docs/engine.md, *Accounts*): a partial fill capped by a
fractional volume, and target orders (to a position, to a weight of equity) rounded to
the lot, every quantity exact."""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal

from kestrel_protocol.surface.compact import frame_text
from kestrel_sdk import render_frame
from kestrel_sdk.runtime.catalog.builder import build_loaded_scenario
from kestrel_sdk.runtime.engine import SessionEngine

BARS = [
    ("40000", "40100", "39900", "40000", "12.5"),
    ("40010", "40200", "39950", "40100", "12.5"),
    ("40120", "40300", "40000", "40250", "12.5"),
    ("40250", "40400", "40100", "40300", "12.5"),
    ("40300", "40500", "40200", "40400", "12.5"),
]


def _engine(participation: str = "1") -> SessionEngine:
    loaded = build_loaded_scenario(
        BARS, symbol="BTC", lot="0.01", fee_bps="0", participation=participation
    )
    return SessionEngine(loaded, "ks_lots")


def test_a_fractional_volume_caps_a_fill_exactly_and_the_rest_fills_next() -> None:
    engine = _engine(participation="0.1")  # 10% of 12.5 BTC: 1.25 a bar
    first = engine.submit("buy 2 BTC tif gtc\nadvance")
    assert [(e.type, e.qty) for e in first.frame.events] == [("accepted", "2"), ("fill", "1.25")]
    second = engine.submit("advance")
    assert [(e.type, e.qty) for e in second.frame.events] == [("fill", "0.75")]
    assert [(p.symbol, p.qty) for p in second.frame.positions] == [("BTC", "2")]
    # 1.25 x 40010 + 0.75 x 40120, exactly
    assert Decimal(second.frame.account.cash) == Decimal(100000) - Decimal("50012.50") - Decimal(
        "30090.00"
    )


def test_targets_trade_to_a_position_and_to_a_weight_in_whole_lots() -> None:
    engine = _engine()
    to_position = engine.submit("buy BTC to 0.37\nadvance")
    assert [(e.type, e.qty) for e in to_position.frame.events if e.type == "fill"] == [
        ("fill", "0.37")
    ]
    equity = Decimal(to_position.frame.account.equity)
    close = Decimal(to_position.frame.marks["BTC"])
    weighted = engine.submit("buy BTC to 50%\nadvance")
    # 50% of the equity at the clock's close, in whole 0.01 lots toward zero
    wanted = (equity / 2 / close).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
    assert [(p.symbol, Decimal(p.qty)) for p in weighted.frame.positions] == [("BTC", wanted)]
    assert wanted == Decimal("1.24")


def test_a_resting_fractional_order_reads_unfilled_in_the_frame_texts() -> None:
    engine = _engine()
    frame = engine.submit("buy 0.5 BTC limit 30000 tif gtc\nadvance").frame
    assert [(o.qty, o.filled, o.status) for o in frame.orders] == [("0.5", "0", "new")]
    shown = render_frame(frame)  # the CLI's and notebooks' text
    assert "o1 buy 0.5 BTC limit" in shown
    assert "filled" not in shown
    compact = frame_text(frame.to_json())  # what an MCP host's model reads
    assert "buy 0.5 BTC limit 30000" in compact
    assert "filled" not in compact
