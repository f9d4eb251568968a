"""The grade's trade statistics equal backtesting.py's ``stats`` on one strategy.

SMA(20) cross on ``acme-trend`` (2,520 daily bars), 200 shares long-only: buy when the
close crosses above its 20-close mean, sell when it crosses below, close any position
two bars before the tape ends (so neither side has a trade open at the end). Both sides
decide on the same exact integer comparison (close × 20 against the 20-close sum, in
cents), and orders fill at the next bar's open. backtesting.py's commission is 0.001
of notional (Kestrel's 10 bps, which Kestrel rounds to the cent per fill), and its
indicator has no warm-up bars so its buy-and-hold starts at bar 0 like Kestrel's.

Tolerances: trade returns, win rate and the geometric average differ only by the
per-fill fee rounding (≤ half a cent on ≥ 8,000 of notional): 1e-6 absolute. Profit
factor, expectancy, Sortino and Calmar: 1e-5 relative. Buy and hold: 1e-9 (floats on the
peer's side). Exposure is defined differently (Kestrel counts the processed bars 1…T
closed holding; backtesting.py the bars from each entry bar to each exit bar inclusive,
over bars 0…T), so the test checks the exact reconciliation
``peer bars = Kestrel bars + trades``.
"""

from __future__ import annotations

import math
import warnings
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]
from backtesting import Backtest, Strategy  # type: ignore[import-untyped]
from backtesting.lib import crossover  # type: ignore[import-untyped]
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.model import Tape
from kestrel_sdk.runtime.engine import compute_grade

from tests.kestrel_sdk.runtime.engine.replay import run_session

WINDOW = 20
QTY = 200
SYMBOL = "ACME"


def _signals(closes: list[int]) -> list[tuple[int, str]]:
    """(clock bar, "buy" | "sell") decisions, exactly as the peer's strategy makes them."""
    last = len(closes) - 1
    out: list[tuple[int, str]] = []
    long = False
    for t in range(WINDOW, last):
        if t == last - 1:
            if long:
                out.append((t, "sell"))
            break
        prev = (closes[t - 1] * WINDOW, sum(closes[t - WINDOW : t]))
        now = (closes[t] * WINDOW, sum(closes[t - WINDOW + 1 : t + 1]))
        if prev[0] < prev[1] and now[0] > now[1] and not long:
            out.append((t, "buy"))
            long = True
        elif prev[0] > prev[1] and now[0] < now[1] and long:
            out.append((t, "sell"))
            long = False
    return out


def _source(signals: list[tuple[int, str]]) -> str:
    lines: list[str] = []
    clock = 0
    for bar, side in signals:
        if bar > clock:
            lines.append(f"advance {bar - clock}")
            clock = bar
        lines.append(f"{side} {QTY} {SYMBOL}")
    lines.append("advance 100000")
    return "\n".join(lines) + "\n"


def _frame(tape: Tape) -> pd.DataFrame:
    cols = tape.columns[SYMBOL]
    unit = 10**tape.scale
    return pd.DataFrame(
        {
            "Open": [v / unit for v in cols.open],
            "High": [v / unit for v in cols.high],
            "Low": [v / unit for v in cols.low],
            "Close": [v / unit for v in cols.close],
            "Volume": list(cols.volume),
        },
        index=pd.DatetimeIndex([t.rstrip("Z") for t in tape.times]),
    )


def _scaled(values: Any) -> Any:
    return np.round(np.asarray(values, dtype=float) * 100) * WINDOW


def _window_sum(values: Any) -> Any:
    """The 20-close sum in cents; before the window fills it equals the scaled close
    (no crossing there, and no warm-up NaN, so buy-and-hold starts at bar 0)."""
    cents = pd.Series(np.round(np.asarray(values, dtype=float) * 100))
    total = cents.rolling(WINDOW).sum()
    return total.fillna(cents * WINDOW).to_numpy()


class SmaCross(Strategy):  # type: ignore[misc]
    bars = 0  # the tape's length, a strategy parameter given to ``run``

    def init(self) -> None:
        self.total = self.I(_window_sum, self.data.Close)
        self.scaled = self.I(_scaled, self.data.Close)

    def next(self) -> None:
        t = len(self.data) - 1
        last = self.bars - 1
        if t >= last:
            return
        if t == last - 1:
            if self.position:
                self.position.close()
            return
        if crossover(self.scaled, self.total):
            if not self.position:
                self.buy(size=QTY)
        elif crossover(self.total, self.scaled) and self.position:
            self.position.close()


def _peer(df: pd.DataFrame) -> Any:
    bt = Backtest(df, SmaCross, cash=100_000, commission=0.001, finalize_trades=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bt.run(bars=len(df))


def test_trade_statistics_match_backtesting_py_on_an_sma_cross() -> None:
    loaded = load_catalog([]).get("acme-trend")
    assert loaded is not None
    tape = loaded.tape
    closes = list(tape.columns[SYMBOL].close)
    assert tape.scale == 2
    signals = _signals(closes)
    _, pentads, record = run_session(loaded, [_source(signals)])
    m = compute_grade(loaded, record, pentads).metrics
    stats = _peer(_frame(tape))

    def pct(key: str) -> float:
        return float(stats[key]) / 100

    def dec(value: str | None) -> float:
        assert value is not None
        return float(Decimal(value))

    bars = len(closes) - 1
    rows: list[tuple[str, str, float, float, float, float]] = [
        # (statistic, peer key, Kestrel, peer, absolute tolerance, relative tolerance)
        ("trades", "# Trades", float(m.trades), float(stats["# Trades"]), 0, 0),
        ("winRate", "Win Rate [%]", dec(m.win_rate), pct("Win Rate [%]"), 1e-6, 0),
        ("bestTrade", "Best Trade [%]", dec(m.best_trade), pct("Best Trade [%]"), 1e-6, 0),
        ("worstTrade", "Worst Trade [%]", dec(m.worst_trade), pct("Worst Trade [%]"), 1e-6, 0),
        ("avgTrade", "Avg. Trade [%]", dec(m.avg_trade), pct("Avg. Trade [%]"), 1e-6, 0),
        ("profitFactor", "Profit Factor", dec(m.profit_factor), stats["Profit Factor"], 0, 1e-5),
        ("expectancy", "Expectancy [%]", dec(m.expectancy), pct("Expectancy [%]"), 1e-8, 1e-5),
        ("sortino", "Sortino Ratio", dec(m.sortino), stats["Sortino Ratio"], 0, 1e-5),
        ("calmar", "Calmar Ratio", dec(m.calmar), stats["Calmar Ratio"], 0, 1e-5),
        (
            "buyAndHold",
            "Buy & Hold Return [%]",
            dec(m.buy_and_hold),
            pct("Buy & Hold Return [%]"),
            1e-8,
            0,
        ),
        ("return", "Return [%]", dec(m.return_), pct("Return [%]"), 1e-6, 0),
        (
            "maxDrawdown",
            "Max. Drawdown [%]",
            dec(m.max_drawdown),
            -pct("Max. Drawdown [%]"),
            1e-6,
            0,
        ),
    ]
    print()
    failures = []
    for name, key, ours, theirs, absolute, relative in rows:
        ok = math.isclose(ours, float(theirs), abs_tol=absolute, rel_tol=relative)
        print(
            f"{name:>12}  kestrel {ours:>16.10f}  backtesting.py {float(theirs):>16.10f}"
            f"  ({key}; tolerance abs {absolute:g} rel {relative:g}) {'ok' if ok else 'DIFFERS'}"
        )
        if not ok:
            failures.append(name)
    ours_bars = round(dec(m.exposure) * bars)
    theirs_bars = round(pct("Exposure Time [%]") * (bars + 1))
    print(
        f"{'exposure':>12}  kestrel {ours_bars} of {bars} bars + {m.trades} exit bars"
        f" = backtesting.py {theirs_bars} of {bars + 1} bars (exact)"
    )
    assert m.trades >= 20, "the strategy should trade enough to compare"
    assert not failures, failures
    assert ours_bars + m.trades == theirs_bars
