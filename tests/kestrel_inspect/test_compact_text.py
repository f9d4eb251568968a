"""The compact text of a session's results, on frames the demo never shows: a sealed
tape (no bars remaining told), a stop-limit order partly filled, two symbols, events with
reasons. Every figure an agent trades on is there, no root is, and the offline agents
read it back."""

from __future__ import annotations

from typing import Any

from kestrel_inspect.scripted import read_frame
from kestrel_protocol import SessionResponse
from kestrel_protocol.surface import COMPACT_TEXT

ROOT = "sha256:" + "ab" * 32


def _frame(**changes: Any) -> dict[str, Any]:
    bar = {"open": "10.00", "high": "10.50", "low": "9.90", "close": "10.20", "volume": 1200}
    frame: dict[str, Any] = {
        "kind": "kestrel.frame",
        "session": "ks_x",
        "seq": 7,
        "scenario": {"id": "two-sealed", "root": ROOT},
        "clock": {"bar": 41, "time": "2024-03-01T14:31:00Z"},
        "status": "open",
        "marks": {"AAA": "10.20", "BBB": "55.5"},
        "bars": {"AAA": bar, "BBB": {**bar, "close": "55.5"}},
        "account": {
            "cash": "1000.00",
            "equity": "2345.60",
            "realized": "-3.00",
            "unrealized": "1.20",
            "fees": "0.80",
            "peak": "2400.00",
            "drawdown": "0.02266667",
        },
        "positions": [
            {"symbol": "AAA", "qty": -20, "avgPrice": "10.26", "unrealized": "1.20"},
            {"symbol": "BBB", "qty": 4, "avgPrice": "55.5", "unrealized": "0.00"},
        ],
        "orders": [
            {
                "id": "o3",
                "alias": "guard",
                "side": "buy",
                "qty": 20,
                "filled": 5,
                "symbol": "AAA",
                "type": "stop-limit",
                "limit": "10.60",
                "stop": "10.50",
                "tif": "gtc",
                "status": "partially_filled",
            }
        ],
        "events": [
            {"type": "fill", "order": "o3", "bar": 41, "qty": 5, "price": "10.55", "fee": "0.05"},
            {"type": "rejected", "order": "o4", "bar": 41, "reason": "max position"},
        ],
    }
    frame.update(changes)
    return frame


def _response(frame: dict[str, Any]) -> dict[str, Any]:
    pentad = {
        "root": ROOT,
        "session": "ks_x",
        "seq": 7,
        "prev": ROOT,
        "body": {"mediaType": "text/x-kestrel", "bytes": "advance\n"},
    }
    return {
        "ok": True,
        "disposition": "applied",
        "pentad": pentad,
        "delivery": {"frame": frame, "frameRoot": ROOT},
    }


def test_a_sealed_two_symbol_frame_reads_whole_and_rootless() -> None:
    data = _response(_frame())
    text = COMPACT_TEXT[SessionResponse](data)
    assert text.splitlines() == [
        "submission 7 applied",
        "frame 7 of ks_x on two-sealed: open, bar 41 (2024-03-01T14:31:00Z)",
        "marks: AAA 10.20, BBB 55.5",
        "bars: AAA o 10.00 h 10.50 l 9.90 c 10.20 v 1200; BBB o 10.00 h 10.50 l 9.90 c 55.5 v 1200",
        "account: equity 2345.60, cash 1000.00, realized -3.00, unrealized 1.20, fees 0.80, "
        "peak 2400.00, drawdown 0.02266667",
        "positions: AAA -20 @ 10.26 (unrealized 1.20); BBB 4 @ 55.5 (unrealized 0.00)",
        "orders: o3 (guard): buy 20 AAA stop 10.50 limit 10.60 tif gtc, filled 5, partially_filled",
        "events: bar 41 fill o3 5 @ 10.55 fee 0.05; bar 41 rejected o4 (max position)",
    ]
    assert "sha256:" not in text
    assert "remaining" not in text  # a sealed tape's length is not told, here either


def test_the_offline_agents_read_what_the_text_says() -> None:
    text = COMPACT_TEXT[SessionResponse](_response(_frame(status="stood-down")))
    assert read_frame(text) == {
        "status": "stood-down",
        "bar": 41,
        "marks": {"AAA": "10.20", "BBB": "55.5"},
        "account": {"equity": "2345.60"},
        "positions": [{"symbol": "AAA", "qty": "-20"}, {"symbol": "BBB", "qty": "4"}],
        "news": [],
    }
    flat = COMPACT_TEXT[SessionResponse](_response(_frame(positions=[], orders=[], events=[])))
    assert "positions: none\norders: none\nevents: none" in flat
    read = read_frame(flat)
    assert read is not None
    assert read["positions"] == []
    assert read_frame('{"refusal": {"code": "UNKNOWN_SESSION"}}') is None
