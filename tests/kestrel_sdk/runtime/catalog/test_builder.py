"""build_loaded_scenario: literal bars become a scenario the engine can trade."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from kestrel_protocol import Scenario, root_of_bytes
from kestrel_sdk.runtime.catalog import build_loaded_scenario, tape_csv


def test_single_symbol_bars_get_daily_times_and_default_terms() -> None:
    loaded = build_loaded_scenario(
        [("100", "101.5", "99", "100.25", 10), (Decimal("100.25"), 102, 100, "101", 0)]
    )
    tape = loaded.tape
    assert tape.times == ("2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z")
    assert tape.days[1] == tape.days[0] + 1
    assert tape.columns["ACME"].open.tolist() == [10000, 10025]
    assert tape.columns["ACME"].high.tolist() == [10150, 10200]
    assert tape.columns["ACME"].volume.tolist() == [10, 0]
    scenario = Scenario.parse(loaded.scenario.canonical())
    assert scenario.id == "test-scenario"
    assert scenario.account.cash == "100000.00"
    assert scenario.account.shortable is False
    assert scenario.fees.bps == "10"
    assert scenario.tape.bars == 2
    assert scenario.tape.bars_per_year == 252
    assert scenario.tape.root == root_of_bytes(tape_csv(loaded).encode())
    assert loaded.origin is None


def test_terms_are_passed_through() -> None:
    loaded = build_loaded_scenario(
        [("10.00", "10.00", "10.00", "10.00", 5)] * 3,
        scenario_id="tiny",
        interval="1m",
        start="2024-03-01T20:59:00Z",
        cash="500",
        shortable=True,
        max_position=7,
        max_drawdown="0.5",
        fee_bps="0",
        fee_minimum="1.00",
        participation="0.5",
        slippage_bps="5",
        tick="0.05",
        lot=10,
    )
    scenario = loaded.scenario
    assert scenario.id == "tiny"
    assert scenario.tape.interval == "1m"
    assert scenario.tape.bars_per_year == 98280
    assert loaded.tape.times == (
        "2024-03-01T20:59:00Z",
        "2024-03-01T21:00:00Z",
        "2024-03-01T21:01:00Z",
    )
    assert scenario.account.cash == "500.00"
    assert scenario.account.shortable is True
    assert scenario.account.max_position == 7
    assert scenario.account.max_drawdown == "0.5"
    assert (scenario.fees.bps, scenario.fees.minimum) == ("0", "1.00")
    assert (scenario.fill.participation, scenario.fill.slippage_bps) == ("0.5", "5")
    assert [(i.symbol, i.tick, i.lot) for i in scenario.instruments] == [("ACME", "0.05", 10)]


def test_full_rows_build_a_multi_symbol_tape() -> None:
    loaded = build_loaded_scenario(
        [
            ("2024-01-02T00:00:00Z", "XI", "20", "21", "19", "20.5", 3),
            ("2024-01-02T00:00:00Z", "KAPPA", "10", "11", "9", "10.5", 2),
            ("2024-01-03T00:00:00Z", "KAPPA", "10.5", "11", "10", "11", 2),
            ("2024-01-03T00:00:00Z", "XI", "20.5", "21", "20", "21", 3),
        ],
        instruments=[
            {"symbol": "XI", "tick": "0.5", "lot": 1},
            {"symbol": "KAPPA", "tick": "0.5", "lot": 5},
        ],
    )
    assert loaded.tape.symbols == ("KAPPA", "XI")
    assert loaded.tape.scale == 1
    assert loaded.tape.columns["XI"].close.tolist() == [205, 210]
    assert loaded.tape.price_text(205) == "20.5"
    assert [i.symbol for i in loaded.scenario.instruments] == ["XI", "KAPPA"]


@pytest.mark.parametrize(
    ("bars", "phrase"),
    [
        ([("100", "99", "98", "100", 1)], "bar 0: prices are inconsistent"),
        ([("100", "101", "99", "100", 1), ("100", "101", "99", "100.001", 1)], "bar 1: close"),
        ([("100", "101", "99", "100", -1)], "bar 0: volume '-1'"),
        ([], "no bars"),
        ([("100", "101", "99")], "expected 5 or 7"),
    ],
)
def test_invalid_bars_raise_naming_the_bar(bars: list[tuple[str, ...]], phrase: str) -> None:
    with pytest.raises(ValueError, match=re.escape(phrase)):
        build_loaded_scenario(bars)


def test_invalid_terms_raise() -> None:
    with pytest.raises(ValueError, match="max_drawdown must be at most 1"):
        build_loaded_scenario([("1", "1", "1", "1", 1)], max_drawdown="2")
    with pytest.raises(ValueError, match="interval"):
        build_loaded_scenario([("1", "1", "1", "1", 1)], interval="1w")
