"""The shipped tapes have the character their ids promise (docs/spec.md §4 table)."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Sequence
from datetime import date
from itertools import pairwise

from kestrel_sdk.runtime.catalog import LoadedScenario, Tape, load_catalog

SHIPPED_IDS = ("acme-chop", "acme-crash", "acme-trend", "basket-20", "minute-200k", "pairs-kx")


def shipped(scenario_id: str) -> LoadedScenario:
    loaded = load_catalog([]).get(scenario_id)
    assert loaded is not None
    return loaded


def ols(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, list[float], float]:
    """Slope, intercept, residuals and the slope's t statistic."""
    n = len(x)
    mean_x, mean_y = sum(x) / n, sum(y) / n
    sxx = sum((a - mean_x) ** 2 for a in x)
    slope = sum((a - mean_x) * (b - mean_y) for a, b in zip(x, y, strict=True)) / sxx
    intercept = mean_y - slope * mean_x
    residuals = [b - (intercept + slope * a) for a, b in zip(x, y, strict=True)]
    variance = sum(r * r for r in residuals) / (n - 2)
    return slope, intercept, residuals, slope / math.sqrt(variance / sxx)


def adf_t(series: Sequence[float]) -> float:
    """Dickey-Fuller t statistic (with constant); below about -3.4 means stationary at 1 %."""
    changes = [series[i] - series[i - 1] for i in range(1, len(series))]
    return ols(series[:-1], changes)[3]


def variance_ratio(series: Sequence[float], k: int) -> float:
    """Var of k-bar changes over k times var of 1-bar changes: 1 for a random walk."""

    def var(values: list[float]) -> float:
        mean = sum(values) / len(values)
        return sum((v - mean) ** 2 for v in values) / len(values)

    one = [series[i] - series[i - 1] for i in range(1, len(series))]
    many = [series[i] - series[i - k] for i in range(k, len(series))]
    return var(many) / (k * var(one))


def closes(tape: Tape, symbol: str = "ACME") -> list[float]:
    return [value / 100 for value in tape.columns[symbol].close]


def test_every_shipped_bar_is_well_formed() -> None:
    for scenario_id in SHIPPED_IDS:
        tape = shipped(scenario_id).tape
        assert tape.scale == 2
        for symbol in tape.symbols:
            col = tape.columns[symbol]
            assert min(col.volume) > 0
            assert min(col.low) > 0
            for o, h, low, c in zip(col.open, col.high, col.low, col.close, strict=True):
                assert low <= min(o, c)
                assert h >= max(o, c)
        assert list(tape.times) == sorted(set(tape.times))


def test_daily_tapes_have_2520_weekday_bars() -> None:
    for scenario_id in ("acme-chop", "acme-crash", "acme-trend", "pairs-kx"):
        tape = shipped(scenario_id).tape
        assert len(tape) == 2520
        days = [date.fromisoformat(time[:10]) for time in tape.times]
        assert all(day.weekday() < 5 for day in days)
        assert len(set(tape.days)) == len(tape)
        assert [day.toordinal() for day in days] == tape.days.tolist()


def test_acme_trend_drifts_up() -> None:
    prices = closes(shipped("acme-trend").tape)
    slope, _, _, t_stat = ols(range(len(prices)), [math.log(p) for p in prices])
    assert slope * 252 > 0.08  # more than 8 % a year, log scale
    assert t_stat > 20
    assert prices[-1] > 3 * prices[0]
    yearly = [prices[i + 252] / prices[i] for i in range(0, len(prices) - 252, 252)]
    assert sum(ratio > 1 for ratio in yearly) >= 7


def test_acme_chop_mean_reverts_without_trend() -> None:
    prices = closes(shipped("acme-chop").tape)
    assert adf_t(prices) < -4
    assert variance_ratio(prices, 20) < 0.7
    assert min(prices) > 80
    assert max(prices) < 120
    slope, _, _, _ = ols(range(len(prices)), prices)
    assert abs(slope * len(prices)) < 5
    crossings = sum((a - 100) * (b - 100) < 0 for a, b in pairwise(prices))
    assert crossings > 50


def test_acme_crash_stands_down_a_long_holder_at_its_max_drawdown() -> None:
    """Buy all cash can cover at bar 1's open (10 bps fee), hold, mark at closes."""
    loaded = shipped("acme-crash")
    assert loaded.scenario.account.max_drawdown == "0.25"
    col = loaded.tape.columns["ACME"]
    cash = 100_000_00  # cents
    qty = cash * 10_000 // (col.open[1] * 10_010)
    cash -= qty * col.open[1] + math.ceil(qty * col.open[1] * 10 / 10_000)
    peak, first_breach = 100_000_00.0, None
    for bar in range(1, len(loaded.tape)):
        equity = cash + qty * col.close[bar]
        peak = max(peak, equity)
        drawdown = (peak - equity) / peak
        if drawdown >= 0.25:
            first_breach = bar
            break
    assert first_breach is not None
    assert 1500 <= first_breach < 1525  # inside the crash, not in the calm climb before it
    # the description names no date, price or length after bar 0
    description = loaded.scenario.description
    assert not any(t[:10] in description for t in loaded.tape.times[1:])
    assert str(len(loaded.tape)) not in description
    window = col.close[1499:1525]
    assert min(window) <= 0.55 * window[0]


def test_pairs_kx_is_a_cointegrated_pair() -> None:
    loaded = shipped("pairs-kx")
    assert loaded.scenario.account.shortable is True
    assert loaded.tape.symbols == ("KAPPA", "XI")
    kappa, xi = closes(loaded.tape, "KAPPA"), closes(loaded.tape, "XI")
    beta, alpha, spread, _ = ols(kappa, xi)
    assert 1.35 < beta < 1.65
    assert 5 < alpha < 15
    assert adf_t(spread) < -6
    assert adf_t(spread) < adf_t(kappa) - 3
    assert variance_ratio(spread, 20) < 0.6
    assert variance_ratio(kappa, 20) > 0.6


def test_minute_200k_trades_390_minutes_per_weekday() -> None:
    loaded = shipped("minute-200k")
    tape = loaded.tape
    assert len(tape) == 200_000
    assert loaded.scenario.tape.interval == "1m"
    assert loaded.scenario.tape.bars_per_year == 98280
    per_day: dict[int, list[str]] = {}
    for day, time in zip(tape.days, tape.times, strict=True):
        per_day.setdefault(day, []).append(time)
    sizes = [len(times) for times in per_day.values()]
    assert sizes[:-1] == [390] * (len(sizes) - 1)
    assert 0 < sizes[-1] <= 390
    assert len(per_day) == 513
    for day, times in per_day.items():
        assert date.fromordinal(day).weekday() < 5
        assert times[0][11:] == "14:30:00Z"
        minutes = [int(t[11:13]) * 60 + int(t[14:16]) for t in times]
        assert minutes == list(range(870, 870 + len(times)))
    assert per_day[next(iter(per_day))][-1][11:] == "20:59:00Z"
    volume = tape.columns["ACME"].volume
    assert volume[0] > 2 * volume[195]  # U-shaped: the open trades more than midday


def test_shipped_roots_are_stable() -> None:
    """Pinned: a change here changes every scenario root agents have seen; regenerate
    deliberately and update these with it."""
    index = load_catalog([])
    assert {sid: shipped(sid).scenario.tape.root for sid in index.ids()} == PINNED_TAPE_ROOTS
    assert {sid: shipped(sid).scenario.root for sid in index.ids()} == PINNED_SCENARIO_ROOTS


def test_another_process_builds_the_same_catalog_root() -> None:
    code = (
        "from kestrel_sdk.runtime.catalog import load_catalog; print(load_catalog([]).catalog.root)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == load_catalog([]).catalog.root


PINNED_TAPE_ROOTS = {
    "acme-chop": "sha256:5062ddbfc74855d96c9e34c1646660b165b268c9c272a822a65649b693df6ef4",
    "acme-crash": "sha256:067eda776c822f37dfb7a26be5d8a0821f28c892a0afac1d24dd9374a01c1f2d",
    "acme-trend": "sha256:c15534154db0d4dff0cb23dee6f42a273b4cf51a0237f53617b5d69745f9801f",
    "basket-20": "sha256:277e42c5949cba83f9dfaa0f36835d02377000694ee7d4ed026a40289b9a81d7",
    "minute-200k": "sha256:5d45c40807a82f1f0b468f4600bae326b624f859d164691ad3ec3e89af2cbb94",
    "pairs-kx": "sha256:3c6739120f7b7dae4c983f1c2222d74952dabb218bff19a795f16f189d992ee4",
}
PINNED_SCENARIO_ROOTS = {
    "acme-chop": "sha256:269e58caaa3800d316a416ceb29c151beed32484be5562db6f81f61d63cfd3c0",
    "acme-crash": "sha256:322f637556e7ab094d64b24f186b6082f29532cf2d43dc8fb16b14defaa6264f",
    "acme-trend": "sha256:7ab91b8eb7357c05687b33cc341d98159e315542012608384080d7a0cc5e53f5",
    "basket-20": "sha256:fd70f7d182e59f934fbd999145a62689f37551980eb94016b879a4d6c33c5e6b",
    "minute-200k": "sha256:ccb61bd6778dc26119dff3d549698906cd1105591785cde1864bbf01911e21e7",
    "pairs-kx": "sha256:ebe96ca704fe974876f94bc33926ace77ac7b459953940298a1043296df05ef2",
}
