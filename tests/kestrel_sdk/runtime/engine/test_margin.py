"""Margin accounts (issue 49, item 4): buying power by leverage, a crash that calls the
account and the liquidation at the next open (named in the frame, the blotter and the
grade), and interest on cash and borrow cost on shorts accrued exactly as docs/engine.md
("Accounts") says, from the bars' times."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Mapping
from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import anyio
import pytest
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.surface import prompts
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.builder import terms_toml
from kestrel_sdk.runtime.catalog.tape_format import HEADER
from kestrel_sdk.runtime.engine import SessionEngine

YEAR = 365 * 24 * 3600


def _scenario(
    catalog: Path, scenario_id: str, bars: list[tuple[str, str, str, str, str]], **margin: str
) -> None:
    """A one-symbol (CRSH) daily margin scenario: 10000.00 cash, no fees, ``bars`` as
    (time, open, high, low, close)."""
    directory = catalog / scenario_id
    directory.mkdir(parents=True)
    toml = terms_toml(
        scenario_id=scenario_id,
        title="A margin account",
        description="",
        interval="1d",
        bars_per_year=252,
        cash="10000.00",
        shortable=True,
        max_position=100000,
        max_drawdown="1",
        fee_bps="0",
        fee_minimum="0",
        participation="1",
        slippage_bps="0",
        instruments=[{"symbol": "CRSH", "tick": "0.01"}],
        margin=margin,
    )
    (directory / "scenario.toml").write_text(toml, encoding="utf-8")
    rows = [f"{t},CRSH,{o},{h},{lo},{c},1000000" for t, o, h, lo, c in bars]
    (directory / "tape.csv").write_text(HEADER + "\n" + "\n".join(rows) + "\n", encoding="utf-8")


async def _run(catalog: Path, scenario_id: str, sources: list[str]) -> dict[str, Any]:
    async with create_sdk(local_transport(catalog_paths=[catalog])) as sdk:
        session = (await sdk.open_session(scenario_id)).session
        assert session is not None
        frames = [(await session.submit(source)).delivery.frame for source in sources]
        blotter = await session.blotter()
        await session.close()
        grade = await sdk.grade_until_done(session.id)
        assert (await sdk.verify(grade)).ok
        return {"frames": frames, "blotter": blotter, "grade": grade}


CRASH = [
    ("2024-01-01T00:00:00Z", "100", "101", "99", "100"),
    ("2024-01-02T00:00:00Z", "100", "101", "99", "100"),
    ("2024-01-03T00:00:00Z", "100", "100", "70", "75"),
    ("2024-01-04T00:00:00Z", "75", "75", "55", "60"),
    ("2024-01-05T00:00:00Z", "58", "62", "57", "61"),
    ("2024-01-06T00:00:00Z", "61", "63", "60", "62"),
]


def test_a_crash_calls_the_margin_account_and_liquidates_it_at_the_next_open(
    tmp_path: Path,
) -> None:
    catalog = tmp_path / "catalog"
    _scenario(
        catalog,
        "crash",
        CRASH,
        leverage="2",
        maintenance_margin="0.25",
        borrow_rate="0",
        cash_rate="0",
    )
    seen = anyio.run(
        _run,
        catalog,
        "crash",
        [
            "buy 201 CRSH\nadvance",  # 20100 of stock on 10000 of equity: beyond 2x
            "buy 200 CRSH\nadvance",  # 20000: exactly 2x, bought at bar 2's open (100)
            "advance",  # bar 3 closes at 60: equity 2000 < 25% of 12000
            "advance",  # bar 4: liquidated at its open (58)
        ],
    )
    rejected, bought, called, liquidated = seen["frames"]
    assert [(e.type, e.reason) for e in rejected.events if e.type == "rejected"] == [
        ("rejected", "insufficient-margin")
    ]
    assert [(e.type, e.qty, e.price) for e in bought.events if e.type == "fill"] == [
        ("fill", 200, "100.00")
    ]
    assert Decimal(bought.account.cash) == Decimal("-10000.00")  # borrowed to buy
    assert [(e.type, e.bar, e.reason) for e in called.events] == [
        ("margin-call", 3, "equity 2000.00 below the maintenance margin 3000.00")
    ]
    assert [(e.type, e.bar, e.qty, e.price, e.reason) for e in liquidated.events] == [
        ("accepted", 4, 200, None, "margin-call"),
        ("fill", 4, 200, "58.00", None),
    ]
    assert liquidated.positions == []
    assert Decimal(liquidated.account.cash) == Decimal("1600.00")  # -10000 + 200 x 58

    orders = seen["blotter"].orders
    assert [(o.id, o.side, o.qty, o.status, o.reason) for o in orders] == [
        ("o1", "buy", 201, "rejected", "insufficient-margin"),
        ("o2", "buy", 200, "filled", None),
        ("o3", "sell", 200, "filled", "margin-call"),
    ]
    grade = seen["grade"]
    assert grade.passed is False
    check = next(c for c in grade.conformance.checks if c.id == "no-margin-call")
    assert check.passed is False
    assert check.detail == (
        "margin call at bar 3 (2024-01-04T00:00:00Z): equity 2000.00 below the maintenance"
        " margin 3000.00; positions liquidated at bar 4 (2024-01-05T00:00:00Z);"
        " interest 0.00, borrow cost 0.00"
    )


def _seconds(time: str) -> int:
    return int(datetime.fromisoformat(time).timestamp())


def _cent(value: Fraction) -> Fraction:
    cents = Decimal(value.numerator) / Decimal(value.denominator) * 100
    return Fraction(int(cents.to_integral_value(rounding=ROUND_HALF_EVEN)), 100)


def test_an_engine_that_liquidated_a_margin_call_is_freed_as_soon_as_it_is_let_go(
    tmp_path: Path,
) -> None:
    """The bar loop calls its engine back to liquidate (its method, held weakly): no
    reference cycle keeps the engine for the cyclic collector (docs/engine.md, "Memory")."""
    catalog = tmp_path / "catalog"
    margin = {"leverage": "2", "maintenance_margin": "0.25", "borrow_rate": "0", "cash_rate": "0"}
    _scenario(catalog, "crash", CRASH, **margin)
    loaded = load_catalog([catalog]).get("crash")
    assert loaded is not None
    enabled = gc.isenabled()
    gc.disable()
    try:
        engine = SessionEngine(loaded, "ks_t")
        for source in ("buy 200 CRSH\nadvance", "advance", "advance", "advance"):
            engine.submit(source)
        assert [(o.reason, o.status) for o in engine.orders] == [
            (None, "filled"),
            ("margin-call", "filled"),
        ]
        held = weakref.ref(engine)
        del engine
        assert held() is None
    finally:
        if enabled:
            gc.enable()


def test_interest_on_cash_and_borrow_cost_on_a_short_accrue_from_the_bars_times(
    tmp_path: Path,
) -> None:
    # Friday to Monday is three days of interest; the short is held over the weekend
    bars = [
        ("2024-01-04T00:00:00Z", "50", "51", "49", "50"),
        ("2024-01-05T00:00:00Z", "50", "51", "49", "50.50"),
        ("2024-01-08T00:00:00Z", "51", "52", "50", "51.25"),
        ("2024-01-09T00:00:00Z", "51", "52", "49.5", "49.75"),
        ("2024-01-10T00:00:00Z", "50", "51", "49", "50"),
    ]
    catalog = tmp_path / "catalog"
    rates = {"cash_rate": "0.05", "borrow_rate": "0.12"}
    _scenario(catalog, "accrue", bars, leverage="2", maintenance_margin="0.25", **rates)
    seen = anyio.run(
        _run, catalog, "accrue", ["sell 100 CRSH\nadvance", "advance", "advance", "advance"]
    )
    # the documented rule, step by step: before bar j's orders, interest on the cash and
    # borrow on the short at bar j-1's close over the seconds between the bars; the cash
    # moves by each exact sum's change rounded to the cent
    cash = Fraction(10000)
    short = 0
    interest = borrow = Fraction(0)
    posted_interest = posted_borrow = Fraction(0)
    expected = []
    for j in range(1, len(bars)):
        elapsed = _seconds(bars[j][0]) - _seconds(bars[j - 1][0])
        interest += cash * Fraction(rates["cash_rate"]) * elapsed / YEAR
        borrow += short * Fraction(bars[j - 1][4]) * Fraction(rates["borrow_rate"]) * elapsed / YEAR
        cash += _cent(interest) - posted_interest - (_cent(borrow) - posted_borrow)
        posted_interest, posted_borrow = _cent(interest), _cent(borrow)
        if j == 1:  # the short sale at bar 1's open
            cash += 100 * Fraction(bars[1][1])
            short = 100
        if j == len(bars) - 1:  # the tape's end: the short is bought back at the close
            cash -= 100 * Fraction(bars[j][4])
        expected.append(Decimal(cash.numerator) / Decimal(cash.denominator))
    frames = seen["frames"]
    assert [Decimal(f.account.cash) for f in frames] == expected
    assert posted_interest > 0
    assert posted_borrow > 0
    assert expected[-1] != 10000 + 100 * 50 - 100 * 50  # the accruals moved the cash
    check = next(c for c in seen["grade"].conformance.checks if c.id == "no-margin-call")
    assert check.passed is True
    earned = Decimal(posted_interest.numerator) / posted_interest.denominator
    cost = Decimal(posted_borrow.numerator) / posted_borrow.denominator
    assert check.detail == f"no margin call; interest {earned:.2f}, borrow cost {cost:.2f}"


def test_a_cash_account_s_grade_has_no_margin_check(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    directory = catalog / "cash"
    directory.mkdir(parents=True)
    _scenario(catalog, "margined", CRASH, leverage="1", maintenance_margin="0.5",
              borrow_rate="0", cash_rate="0")  # fmt: skip
    toml = (catalog / "margined" / "scenario.toml").read_text(encoding="utf-8")
    cash_toml = "\n".join(
        line
        for line in toml.splitlines()
        if not line.startswith(("kind", "leverage", "maintenance", "borrow", "cash_rate"))
    ).replace('id = "margined"', 'id = "cash"')
    (directory / "scenario.toml").write_text(cash_toml + "\n", encoding="utf-8")
    (directory / "tape.csv").write_bytes((catalog / "margined" / "tape.csv").read_bytes())
    seen = anyio.run(_run, catalog, "cash", ["buy 10 CRSH\nadvance 3", "sell 10 CRSH\nadvance"])
    assert "no-margin-call" not in [c.id for c in seen["grade"].conformance.checks]


async def _brief(catalog: Path, scenario_id: str) -> str:
    """The kestrel_trade_scenario brief of ``scenario_id``, its facts fetched by the SDK."""
    async with create_sdk(local_transport(catalog_paths=[catalog])) as sdk:

        async def fetch(tool: str, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
            if tool == "catalog":
                return (await sdk.catalog()).to_json()
            return (await sdk.scenario(str(arguments["scenario"]))).to_json()

        trade = next(p for p in prompts(()) if p.name == "kestrel_trade_scenario")
        messages = await trade.render(fetch, {"scenario": scenario_id})
        return str(messages[0]["content"]["text"])


def test_the_trading_brief_states_the_margin_terms_and_a_cash_brief_does_not(
    tmp_path: Path,
) -> None:
    catalog = tmp_path / "catalog"
    _scenario(catalog, "crash", CRASH, leverage="2", maintenance_margin="0.25",
              borrow_rate="0.05", cash_rate="0.02")  # fmt: skip
    brief = anyio.run(_brief, catalog, "crash")
    assert (
        "; a margin account: gross exposure at most equity x 2, a close with equity below"
        " 0.25 x gross is a margin call (every position closed at the next open), borrow"
        " 0.05 a year on shorts, interest 0.02 a year on cash" in brief
    )
    assert "margin" not in anyio.run(_brief, Path(tmp_path / "empty"), "acme-trend")


def test_a_call_the_session_ends_at_is_not_reported_as_liquidated_at_the_next_open(
    tmp_path: Path,
) -> None:
    """A session that stands down or closes at the bar of its margin call never reaches
    the next open: its grade says no liquidation followed (it used to name bar 4's)."""
    catalog = tmp_path / "catalog"
    margin = {"leverage": "2", "maintenance_margin": "0.25", "borrow_rate": "0", "cash_rate": "0"}
    _scenario(catalog, "crash", CRASH, **margin)
    called = ["buy 200 CRSH\nadvance", "advance 2"]  # bar 3's close calls the account
    details = {}
    for ending in ('stand down "done"', None):
        seen = anyio.run(_run, catalog, "crash", called + ([ending] if ending else []))
        assert [(e.type, e.bar) for e in seen["frames"][1].events if e.type == "margin-call"] == [
            ("margin-call", 3)
        ]
        assert "margin-call" not in [o.reason for o in seen["blotter"].orders]
        check = next(c for c in seen["grade"].conformance.checks if c.id == "no-margin-call")
        assert check.passed is False
        details[ending] = check.detail
    stood, closed = details.values()
    assert (
        stood
        == closed
        == (
            "margin call at bar 3 (2024-01-04T00:00:00Z): equity 2000.00 below the maintenance"
            " margin 3000.00; no liquidation followed: the session ended at that bar;"
            " interest 0.00, borrow cost 0.00"
        )
    )


def test_an_order_placed_after_an_advance_on_a_margin_account_is_named_by_alias(
    tmp_path: Path,
) -> None:
    """An advance that meets a margin call places the liquidation orders first, and they
    take the next ids: ``cancel o2`` meant the limit buy written above it, but o2 became
    the liquidation and the buy stayed open. Such a reference is K204, naming the way
    out; an alias finds the order whatever its id."""
    catalog = tmp_path / "catalog"
    margin = {"leverage": "2", "maintenance_margin": "0.25", "borrow_rate": "0", "cash_rate": "0"}
    _scenario(catalog, "crash", CRASH, **margin)
    loaded = load_catalog([catalog]).get("crash")
    assert loaded is not None
    engine = SessionEngine(loaded, "ks_ids")
    engine.submit("buy 200 CRSH\nadvance")
    with pytest.raises(KestrelError) as refused:
        engine.submit("advance 3\nbuy 10 CRSH limit 1 tif gtc\ncancel o2")
    assert refused.value.code == RefusalCode.INVALID_SOURCE
    (diagnostic,) = refused.value.detail["diagnostics"]
    assert (diagnostic["code"], diagnostic["line"], diagnostic["column"]) == ("K204", 3, 8)
    assert diagnostic["message"] == (
        "order reference 'o2': on a margin account an order placed after an advance of the"
        " same source has no id known in advance (a margin call's liquidation orders take"
        " the next ids); name it with `as`"
    )
    engine.submit("advance 3\nbuy 10 CRSH limit 1 tif gtc as low\ncancel low")
    assert [(o.id, o.reason, o.status) for o in engine.orders] == [
        ("o1", None, "filled"),
        ("o2", "margin-call", "filled"),
        ("o3", "statement", "cancelled"),
    ]
    # an order placed before the advance keeps the id the source counts on
    again = SessionEngine(loaded, "ks_ids")
    again.submit("buy 200 CRSH\nbuy 10 CRSH limit 1 tif gtc\nadvance 4\ncancel o2")
    assert [(o.id, o.reason, o.status) for o in again.orders][:2] == [
        ("o1", None, "filled"),
        ("o2", "margin-call", "cancelled"),
    ]


def test_a_call_at_the_tape_s_last_bar_is_followed_by_the_end_of_tape_stand_down(
    tmp_path: Path,
) -> None:
    catalog = tmp_path / "catalog"
    margin = {"leverage": "2", "maintenance_margin": "0.25", "borrow_rate": "0", "cash_rate": "0"}
    late = [*CRASH[:2], *[(t, "100", "101", "99", "100") for t, *_ in CRASH[2:5]]]
    late.append(("2024-01-06T00:00:00Z", "100", "100", "55", "60"))  # the last bar crashes
    _scenario(catalog, "late", late, **margin)
    seen = anyio.run(_run, catalog, "late", ["buy 200 CRSH\nadvance", "advance 10"])
    assert [(e.type, e.bar) for e in seen["frames"][1].events if e.type != "fill"] == [
        ("margin-call", 5),
        ("accepted", 5),
        ("stood-down", 5),
    ]
    check = next(c for c in seen["grade"].conformance.checks if c.id == "no-margin-call")
    assert check.detail == (
        "margin call at bar 5 (2024-01-06T00:00:00Z): equity 2000.00 below the maintenance"
        " margin 3000.00; the tape ended there; interest 0.00, borrow cost 0.00"
    )
