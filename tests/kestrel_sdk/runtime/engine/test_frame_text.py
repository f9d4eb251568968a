"""The frame's text, written by the engine from integers on every step, against two
oracles on cases the pinned sessions of ``test_frame`` do not reach: two symbols, one
of them in fractional lots; shorts (negative quantities, unrealized and realized
amounts); fractional volumes; news whose text needs escaping; a sealed session (no
``remaining``); resting, linked and cancelled orders.

Every frame's text must be (1) the canonical JSON of the object pydantic validates
from it, byte for byte (key order, escaping, number forms), rooted as ``root_of`` roots
that object; and (2) the canonical JSON of the frame computed here from the engine's
state with ``Decimal`` arithmetic (every amount, price, quantity and event member
rounded and written independently of the engine's integer texts).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction
from typing import Any

import pytest
from kestrel_protocol import KestrelError, SessionFrame, canonical_json, root_of
from kestrel_sdk.runtime.catalog.builder import build_loaded_scenario
from kestrel_sdk.runtime.catalog.model import LoadedScenario
from kestrel_sdk.runtime.engine import SessionEngine
from kestrel_sdk.runtime.engine.bus import Event
from kestrel_sdk.runtime.engine.orders import LiveOrder, order_links
from kestrel_sdk.runtime.frame_values import FrameValues

_START = datetime(2024, 1, 1, tzinfo=UTC)
_HALF = Decimal("50.5")
_TIMES = [(_START + timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%SZ") for day in range(90)]


def _scenario() -> LoadedScenario:
    """ACME (whole lots, cent ticks) and BTC (0.01 lots, half-unit ticks), shortable,
    fees with a minimum and slippage; BTC's volumes fractional; news that needs
    escaping (quotes, backslashes, a control character, non-ASCII)."""
    rows: list[tuple[str, ...]] = []
    for index, time in enumerate(_TIMES):
        acme = Decimal(100) + Decimal(index * 37 % 23) - Decimal(index % 7) / 4
        rows.append((time, "ACME", str(acme), str(acme + 2), str(acme - 3), str(acme + 1), "5000"))
        btc = Decimal(40000) + Decimal(index * 311 % 997) - index * 40
        volume = f"{3 + index % 4}.{index * 7 % 100:02d}"
        rows.append(
            (
                time,
                "BTC",
                str(btc),
                str(btc + 200),
                str(btc - 150),
                str(btc + _HALF),
                volume,
            )
        )
    news = [
        {
            "time": (_START + timedelta(days=day, hours=12)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "symbol": "ACME" if day % 2 else "BTC",
            "headline": f'Day {day}: "quoted" \\ back\tslash, caf\u00e9 \u2014 {day}',
            "body": ('Long body \u00e9 "x" \\ ' * (40 if day % 3 == 0 else 1)).strip(),
        }
        for day in range(0, 80, 3)
    ]
    return build_loaded_scenario(
        rows,
        shortable=True,
        fee_bps="10",
        fee_minimum="1.00",
        slippage_bps="5",
        instruments=[
            {"symbol": "ACME", "tick": "0.01", "lot": 1},
            {"symbol": "BTC", "tick": "0.5", "lot": "0.01"},
        ],
        news=news,
        news_in_frame=3,
    )


def _sources(seed: int) -> list[str]:
    """A seeded mix after a fixed start: market buys and sells past flat (shorts),
    fractional quantities, resting limits and stops, OCO pairs, brackets, trailing stops,
    targets, cancels, advances of 1-2 bars."""
    rng = random.Random(seed)
    # first a position left and taken again at the same size and another price
    out = ["buy 5 ACME\nadvance 1", "sell 5 ACME\nadvance 2", "buy 5 ACME\nadvance 1"]
    for i in range(45):
        kind = rng.randrange(11)
        if kind == 0:
            order = f"buy {rng.randrange(1, 40)} ACME"
        elif kind == 1:
            order = f"sell {rng.randrange(1, 60)} ACME"
        elif kind == 2:
            order = f"buy 0.{rng.randrange(1, 99):02d} BTC"
        elif kind == 3:
            order = f"sell {rng.randrange(0, 2)}.{rng.randrange(1, 99):02d} BTC"
        elif kind == 4:
            order = f"buy 3 ACME limit 90.{rng.randrange(10, 99)} tif gtc as a{i}"
        elif kind == 5:
            order = f"sell 0.25 BTC stop 3{rng.randrange(7000, 9999)}.5 tif gtc"
        elif kind == 6:
            order = f"sell 2 ACME limit 140 tif gtc oco g{i}\nsell 2 ACME stop 80 tif gtc oco g{i}"
        elif kind == 7:
            order = f"buy 4 ACME limit 9{rng.randrange(0, 9)} take 150 loss 80 tif gtc"
        elif kind == 8:
            order = f"sell 0.{rng.randrange(10, 50)} BTC trail {rng.randrange(1, 9)}% tif gtc"
        elif kind == 9:
            order = f"buy ACME to {rng.randrange(-20, 30)}"
        else:
            order = "cancel all"
        out.append(f"{order}\nadvance {rng.randrange(1, 3)}")
    return out


def _rounded(value: Decimal, places: int) -> str:
    """``value`` half-even to ``places``, as fixed-point text without a negative zero."""
    with localcontext() as ctx:
        ctx.prec = 80
        text = format(value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN), "f")
    return text.lstrip("-") if set(text) <= set("-0.") else text


def _exact(value: Fraction | int, scale: int) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 80
        value = Fraction(value)
        return Decimal(value.numerator) / Decimal(value.denominator) / Decimal(10) ** scale


def _plain(value: Decimal) -> int | str:
    """A fractional quantity or volume as the protocol writes it: the integer when
    whole, else its decimal text without trailing zeros."""
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text if "." in text else int(text)


class Oracle:
    """The frame the engine's state shows, computed with Decimal arithmetic."""

    def __init__(self, engine: SessionEngine, loaded: LoadedScenario, *, sealed: bool) -> None:
        self.engine = engine
        self.loaded = loaded
        self.sealed = sealed
        self.terms = engine.terms
        self.events: list[dict[str, Any]] = []
        # the engine's own event bus (as test_frame), right after the frame's subscriber:
        # events a later subscriber publishes (a bracket's children cancelled with their
        # entry) then reach both in the same order
        engine._bus._subscribers.insert(1, self._event)

    def money(self, value: Fraction | int) -> str:
        return _rounded(_exact(value, self.terms.money_scale), 2)

    def price(self, value: int) -> str:
        """A P-unit price cut to the price scale (prices are never rounded up)."""
        scale, shown = self.terms.scale, self.terms.price_scale
        return _rounded(Decimal(value // 10 ** (scale - shown)).scaleb(-shown), shown)

    def qty(self, units: int) -> int | str:
        """An integer when every lot is whole, else every quantity a decimal text."""
        shown = _plain(Decimal(units).scaleb(-self.terms.qty_scale))
        return str(shown) if self.terms.qty_scale else shown

    def _event(self, event: Event) -> None:
        member: dict[str, Any] = {"type": event.type, "bar": event.bar}
        if event.order is not None:
            member["order"] = event.order.id
        if event.qty is not None:
            member["qty"] = self.qty(event.qty)
        if event.fill is not None:
            member["price"] = self.price(event.fill.price)
            member["fee"] = self.money(event.fill.fee)
        if event.reason is not None:
            member["reason"] = event.reason
        self.events.append(member)

    def _order(self, order: LiveOrder) -> dict[str, Any]:
        return {
            "id": order.id,
            "alias": order.alias,
            "side": order.side,
            "qty": self.qty(order.qty),
            "filled": self.qty(order.filled),
            "symbol": order.symbol,
            "type": order.type,
            "limit": None if order.limit is None else self.price(order.limit_p),
            "stop": None if order.stop is None else self.price(order.stop_p),
            "tif": order.tif,
            "status": order.status,
            **order_links(order),
        }

    def frame(self, news: Any) -> dict[str, Any]:
        engine, tape, terms = self.engine, self.loaded.tape, self.terms
        clock = engine.clock
        factor = terms.tape_factor
        bars: dict[str, Any] = {}
        marks: dict[str, str] = {}
        equity: Fraction | int = engine.account.cash
        unrealized_total: Fraction | int = 0
        positions = []
        for symbol in tape.symbols:
            cols = tape.columns[symbol]
            o, h, lo, c, v = (
                col[clock] for col in (cols.open, cols.high, cols.low, cols.close, cols.volume)
            )
            volume = _plain(Decimal(v).scaleb(-tape.volume_scale))
            bars[symbol] = {
                "open": self.price(o * factor),
                "high": self.price(h * factor),
                "low": self.price(lo * factor),
                "close": self.price(c * factor),
                "volume": str(volume) if tape.volume_scale else volume,
            }
            marks[symbol] = bars[symbol]["close"]
            held = engine.account.holdings.get(symbol)
            if held is None:
                continue
            value = held.qty * c * factor
            unrealized = value - held.basis
            equity += value
            unrealized_total += unrealized
            average = _exact(Fraction(held.basis) / held.qty, terms.scale)
            positions.append(
                {
                    "symbol": symbol,
                    "qty": self.qty(held.qty),
                    "avgPrice": _rounded(average, terms.price_scale),
                    "unrealized": self.money(unrealized),
                }
            )
        peak = engine._loop.peak  # the engine's own peak (the loop's: when it is one is its)
        drawdown = Fraction(peak - equity, peak) if equity < peak else Fraction(0)
        account = engine.account
        frame: dict[str, Any] = {
            "kind": "kestrel.frame",
            "session": "ks_text",
            "seq": engine.seq,
            "scenario": {"id": self.loaded.scenario.id, "root": self.loaded.scenario.root},
            "clock": {"bar": clock, "time": tape.times[clock]},
            "status": engine.status,
            "marks": marks,
            "bars": bars,
            "account": {
                "cash": self.money(account.cash),
                "equity": self.money(equity),
                "realized": self.money(account.realized),
                "unrealized": self.money(unrealized_total),
                "fees": self.money(account.fees),
                "peak": self.money(peak),
                "drawdown": _rounded(_exact(drawdown, 0), 8),
            },
            "positions": positions,
            "orders": [self._order(o) for o in engine.open_orders],
            "events": self.events,
            "news": news,
        }
        if not self.sealed:
            frame["clock"]["remaining"] = len(tape) - 1 - clock
        self.events = []
        return frame


@pytest.mark.parametrize("sealed", [False, True], ids=["open", "sealed"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_frame_text_is_canonical_and_the_frame_of_the_engines_state(
    seed: int, sealed: bool
) -> None:
    loaded = _scenario()
    engine = SessionEngine(loaded, "ks_text", sealed=sealed)
    oracle = Oracle(engine, loaded, sealed=sealed)
    seen = dict.fromkeys(("short", "negative", "fraction", "orders", "links", "news"), False)
    fills = 0
    for source in _sources(seed):
        if engine.status != "open":
            break
        try:
            step = engine.submit(source)
        except KestrelError:
            oracle.events = []  # a refused source changes nothing
            continue
        text = step.text
        validated = SessionFrame.model_validate_json(text)
        assert canonical_json(validated).decode() == text
        assert engine.frame_root() == root_of(validated)
        news = [json.loads(canonical_json(item)) for item in validated.news or []]
        expected = oracle.frame(news)
        assert text == canonical_json(expected).decode(), f"step {engine.seq}: {source!r}"
        assert step.values() == FrameValues.of(validated)
        assert step.frame == validated
        seen["short"] |= any(str(p.qty).startswith("-") for p in validated.positions)
        amounts = [validated.account.realized, *(p.unrealized for p in validated.positions)]
        seen["negative"] |= any(amount.startswith("-") for amount in amounts)
        seen["fraction"] |= any(isinstance(p.qty, str) for p in validated.positions)
        seen["orders"] |= bool(validated.orders)
        seen["links"] |= any(o.parent or o.group or o.trail for o in validated.orders)
        seen["news"] |= bool(validated.news)
        fills += sum(event.type == "fill" for event in validated.events)
    assert all(seen.values()), seen
    assert fills > 10
    closed = engine.close()
    assert canonical_json(closed).decode() == engine.frame_text()


def test_values_a_caller_changes_stay_its_own() -> None:
    """A training loop may write into the values it read (their dicts are plain): the
    next frame of the same bar still gives its own marks and positions, those its text
    shows, and so does every later bar."""
    engine = SessionEngine(_scenario(), "ks_text")
    engine.submit("buy 2 ACME\nadvance 1\n")
    read = engine.submit("advance 1\n").values()
    assert list(read.positions) == ["ACME"]
    read.marks["ACME"] = "0.00"
    read.marks["BTC"] = "1.00"
    read.positions["ACME"] = 99
    for source in ("buy 1 BTC\n", "advance 1\n"):  # the same bar, then the next
        step = engine.submit(source)
        assert step.values() == FrameValues.of(SessionFrame.model_validate_json(step.text))
