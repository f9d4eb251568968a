"""The blotter is written as canonical text and its object made from that text,
unchecked (engine/blotter.py): its object, root and canonical bytes are exactly what
validating it (``Blotter.with_root``) makes, over sessions with every kind of order
member (aliases, limits and stops, bracket children, OCO groups, trailing stops,
rejections, cancellations, expiries, liquidations), and exactly what building every
order and fill as an object from the engine's own orders and fills makes (the way the
blotter was made before it was written as text), fractional quantities too; and read
mid-session it is the engine's now (a trailing stop ratchets without an event)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from kestrel_protocol import Blotter, BlotterFill, BlotterOrder, canonical_json
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.model import LoadedScenario
from kestrel_sdk.runtime.engine import SessionEngine
from kestrel_sdk.runtime.engine.orders import order_links
from pydantic import BaseModel

from tests.kestrel_sdk.runtime.engine.replay import run_session
from tests.kestrel_sdk.runtime.engine.tapes import daily

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


def _fractional() -> LoadedScenario:
    """Lots of 0.01 (quantities as decimal strings), four-place prices, a fee minimum."""
    rows = [
        (f"{20 + i % 7}.1234", f"{22 + i % 7}.5", f"{19 + i % 7}.0001", f"{21 + i % 5}.25")
        for i in range(60)
    ]
    return daily(
        rows, cash="10000.00", shortable=True, lot="0.01", bps="7.5", minimum="0.35", tick="0.0001"
    )


FRACTIONAL = [
    "buy 1.25 ACME as a\nadvance 2",
    "sell 0.5 ACME limit 30 tif gtc\nbuy 3.01 ACME stop 21.5 tif day\nadvance 5",
    "sell 10.75 ACME\nadvance 10",
    "buy 2 ACME take 40 loss 10\nadvance 20",
]


def _by_objects(engine: SessionEngine, session: str) -> Blotter:
    """The blotter as it was made before the text: each order and fill's members
    computed from the engine's own records, every one validated as an object."""
    terms = engine.terms
    orders = engine._blotter.orders
    fills = engine._blotter.fills
    times = engine._times

    def order(o: Any) -> BlotterOrder:
        avg = terms.price_of(Fraction(o.notional, o.filled)) if o.filled else None
        members: dict[str, Any] = {
            "id": o.id,
            "alias": o.alias,
            "seq": o.seq,
            "line": o.line,
            "side": o.side,
            "qty": terms.quantity(o.qty),
            "symbol": o.symbol,
            "type": o.type,
            "limit": o.limit,
            "stop": o.stop,
            "tif": o.tif,
            "status": o.status,
            "filled": terms.quantity(o.filled),
            "avg_price": avg,
            "submitted_bar": o.submitted_bar,
            "closed_bar": o.closed_bar,
            "reason": o.reason,
        }
        return BlotterOrder.model_validate(members | order_links(o))

    def fill(f: Any) -> BlotterFill:
        return BlotterFill(
            id=f.id,
            order=f.order.id,
            bar=f.bar,
            time=times[f.bar],
            qty=terms.quantity(f.qty),
            price=terms.price(f.price),
            fee=terms.money(f.fee),
        )

    return Blotter.with_root(
        session=session, orders=[order(o) for o in orders], fills=[fill(f) for f in fills]
    )


def _same_models(a: BaseModel, b: BaseModel) -> None:
    """Equal objects with equal fields set and extras, nested models too."""
    assert type(a) is type(b)
    assert a == b
    assert a.model_fields_set == b.model_fields_set
    assert a.model_extra == b.model_extra
    for name in type(a).model_fields:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, list):
            assert len(x) == len(y)
            for p, q in zip(x, y, strict=True):
                if isinstance(p, BaseModel):
                    _same_models(p, q)


CASES = {
    **{name: (name, sources) for name, sources in SESSIONS.items()},
    "fractional": ("fractional", FRACTIONAL),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_written_blotter_is_the_one_built_from_objects(case: str) -> None:
    scenario, sources = CASES[case]
    loaded = _fractional() if scenario == "fractional" else load_catalog([]).get(scenario)
    assert loaded is not None
    engine, _, _ = run_session(loaded, sources)
    expected = _by_objects(engine, "ks_test")
    assert engine.blotter_root() == expected.root
    assert engine.blotter_bytes() == canonical_json(expected)
    _same_models(engine.blotter(), expected)
    assert engine.blotter().orders
    assert engine.blotter().fills
    if scenario == "fractional":  # quantities as decimal strings, averages rounded
        assert any(isinstance(o.qty, str) for o in expected.orders)
        assert any(o.avg_price is not None for o in expected.orders)


def test_a_blotter_read_mid_session_shows_a_trailing_stop_where_it_is_now() -> None:
    """A trailing stop ratchets with the closes, no event saying so: a blotter read after
    it moved shows its stop now (and its root is of that), not the stop of a read before."""
    loaded = load_catalog([]).get("acme-trend")
    assert loaded is not None
    engine = SessionEngine(loaded, "ks_trail")
    engine.submit("buy 10 ACME\nadvance 1")
    engine.submit("sell 10 ACME trail 5% tif gtc\nadvance 1")
    moved = 0
    for _ in range(30):
        before = engine.blotter()
        engine.submit("advance 1")
        stop = next(order.stop for order in engine.orders if order.id == "o2")
        shown = next(order for order in engine.blotter().orders if order.id == "o2")
        assert shown.stop == stop
        if shown.status != "new":
            break
        moved += shown.stop != next(o.stop for o in before.orders if o.id == "o2")
    assert moved  # the stop did move while the order rested
    validated = Blotter.with_root(
        **{k: v for k, v in engine.blotter().to_json().items() if k != "root"}
    )
    assert engine.blotter_root() == validated.root
