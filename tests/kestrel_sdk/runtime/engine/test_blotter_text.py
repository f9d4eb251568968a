"""The blotter is encoded once and built unchecked (engine/blotter.py): its object, root
and canonical bytes are exactly what validating it (``Blotter.with_root``) makes, over
sessions with every kind of order member (aliases, limits and stops, bracket children,
OCO groups, trailing stops, rejections, cancellations, expiries, liquidations)."""

from __future__ import annotations

import pytest
from kestrel_protocol import Blotter, canonical_json
from kestrel_sdk.runtime.catalog import load_catalog

from tests.kestrel_sdk.runtime.engine.replay import run_session

SESSIONS = {
    "acme-trend": [
        "buy 10 ACME as a\nadvance 3",
        "sell 5 ACME limit 1000.00 tif gtc",
        "buy 10 ACME limit 99 take 110 loss 95 tif gtc\nsell 1 ACME trail 1% oco out",
        "buy 10 ACME take 120 loss trail 2\nadvance 30",
        "sell 10 ACME trail 2 tif gtc\nbuy 3 ACME stop 1.00 tif day\nadvance 20",
        "buy 100000 ACME\nadvance 2",
        'cancel all\nadvance 1\nstand down "done é"',
    ],
    "pairs-kx": [
        "buy 300 KAPPA\nsell 200 XI\nadvance 70",
        "sell 600 KAPPA\nbuy 200 XI limit 1.00 tif gtc\nadvance 90",
        "advance 2519",
    ],
}


@pytest.mark.parametrize("scenario", list(SESSIONS))
def test_the_blotter_is_the_validated_one_byte_for_byte(scenario: str) -> None:
    loaded = load_catalog([]).get(scenario)
    assert loaded is not None
    engine, _, _ = run_session(loaded, SESSIONS[scenario])
    blotter = engine.blotter()
    data = blotter.to_json()
    validated = Blotter.with_root(**{k: v for k, v in data.items() if k != "root"})
    assert blotter == validated
    assert blotter.root == validated.root
    assert engine.blotter_bytes() == canonical_json(validated)
    assert Blotter.parse(engine.blotter_bytes()) == blotter  # its root verifies
    if scenario == "acme-trend":  # every optional member and most reasons were exercised
        links = {k for order in data["orders"] for k in ("parent", "group", "trail") if k in order}
        assert links == {"parent", "group", "trail"}
        reasons = {order["reason"] for order in data["orders"]}
        assert {"statement", "stand-down"} <= reasons, reasons
