"""The engine on shipped scenarios: whole-tape runs end at the tape's end and grade."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.engine import SessionEngine, compute_grade

from tests.kestrel_sdk.runtime.engine.replay import run_session


def test_buy_and_hold_on_acme_trend_runs_to_the_end_and_grades() -> None:
    loaded = load_catalog([]).get("acme-trend")
    assert loaded is not None
    bars = len(loaded.tape)
    engine, pentads, record = run_session(loaded, ["buy 100 ACME", f"advance {bars}"])
    assert engine.stand_down is not None
    assert engine.stand_down.reason == "end-of-tape"
    assert engine.clock == bars - 1
    grade = compute_grade(loaded, record, pentads)
    assert grade.passed
    assert grade.metrics.fills == 2
    assert grade.metrics.exposure == "1.00000000"  # held from bar 1 to the last bar


def test_acme_crash_buy_and_hold_hits_max_drawdown() -> None:
    loaded = load_catalog([]).get("acme-crash")
    assert loaded is not None
    engine = SessionEngine(loaded, "ks_crash")
    cash = Decimal(loaded.scenario.account.cash)
    qty = int(cash * Decimal("0.9") / Decimal(engine.frame().marks["ACME"]))
    step = engine.submit(f"buy {qty} ACME\nadvance {len(loaded.tape)}")
    assert step.stand_down is not None
    assert step.stand_down.reason == "max-drawdown"


@pytest.mark.slow
def test_one_long_advance_over_minute_200k_with_resting_orders_is_fast() -> None:
    loaded = load_catalog([]).get("minute-200k")
    assert loaded is not None
    engine = SessionEngine(loaded, "ks_long")
    engine.submit(
        "buy 1 ACME limit 0.01 tif gtc\nbuy 1 ACME stop 99999 tif gtc\n"
        "sell 1 ACME limit 99999 tif gtc\nbuy 1 ACME limit 0.02 tif gtc"
    )
    started = time.perf_counter()
    step = engine.submit("advance 199999")
    elapsed = time.perf_counter() - started
    assert step.frame.clock.bar == 199_999
    assert elapsed < 2.0  # the peer processes ~10^5 bars/s; the target is 10x
