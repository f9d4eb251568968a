from __future__ import annotations

from kestrel_protocol import SessionFrame
from kestrel_sdk import render_frame


def _frame(**over: object) -> SessionFrame:
    data: dict[str, object] = {
        "kind": "kestrel.frame",
        "session": "ks_abc",
        "seq": 3,
        "scenario": {"id": "acme-trend", "root": "sha256:" + "a" * 64},
        "clock": {"bar": 12, "time": "2024-01-13T00:00:00Z", "remaining": 88},
        "status": "open",
        "marks": {"ACME": "101.20"},
        "bars": {
            "ACME": {
                "open": "100.10",
                "high": "101.40",
                "low": "100.00",
                "close": "101.20",
                "volume": 51000,
            }
        },
        "account": {
            "cash": "98988.00",
            "equity": "100000.00",
            "realized": "0.00",
            "unrealized": "12.00",
            "fees": "1.00",
            "peak": "100010.00",
            "drawdown": "0.00009999",
        },
        "positions": [{"symbol": "ACME", "qty": 10, "avgPrice": "100.00", "unrealized": "12.00"}],
        "orders": [
            {
                "id": "o2",
                "alias": "guard",
                "side": "sell",
                "qty": 10,
                "filled": 0,
                "symbol": "ACME",
                "type": "stop-limit",
                "limit": "94.00",
                "stop": "95.00",
                "tif": "gtc",
                "status": "new",
            }
        ],
        "events": [
            {"type": "fill", "order": "o1", "bar": 12, "qty": 10, "price": "100.00", "fee": "1.00"}
        ],
    }
    data.update(over)
    return SessionFrame.parse(data)


def test_render_shows_clock_status_marks_account_positions_orders_events() -> None:
    text = render_frame(_frame())
    lines = text.splitlines()
    assert lines[0] == "ks_abc seq 3 · acme-trend · open"
    assert "bar 12 2024-01-13T00:00:00Z (88 bars remaining)" in lines[1]
    assert "ACME 101.20" in text
    assert "equity 100000.00" in text
    assert "cash 98988.00" in text
    assert "ACME +10 @ 100.00" in text
    assert "o2 sell 10 ACME stop-limit stop 95.00 limit 94.00 tif gtc as guard [new]" in text
    assert "bar 12: fill o1 10 @ 100.00 fee 1.00" in text


def test_render_flat_and_quiet_frame() -> None:
    text = render_frame(_frame(positions=[], orders=[], events=[], status="stood-down"))
    assert "positions  flat" in text
    assert "open orders" not in text
    assert "events" not in text
    assert "stood-down" in text.splitlines()[0]
