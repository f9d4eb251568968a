"""The observation is what ``kestrel_sdk.gym.spaces`` documents, at every bar, in any order."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from kestrel_sdk.gym import spaces
from kestrel_sdk.gym.spaces import LIMIT, Account, BarHistory

# Longer than the bars BarHistory prepares at once, so episodes cross its blocks.
BARS = 700
START = Decimal(100_000)
START_CENTS = 10_000_000


def _tape() -> str:
    """ACME's bars: a wave, a stretch that trades nothing, and a spike of 150x the close."""
    lines = ["time,symbol,open,high,low,close,volume"]
    for bar in range(BARS):
        close = 50 + 10 * np.sin(bar / 17) + bar / 50
        volume = 0 if 300 <= bar < 340 else 1_000 + (bar * 7919) % 5_000
        high = close * 150 if bar == 520 else close + 1.5
        row = f"{close - 0.5:.2f},{high:.2f},{close - 2:.2f},{close:.2f},{volume}"
        lines.append(f"2024-01-01T00:{bar:04d}Z,ACME,{row}")
        lines.append(f"2024-01-01T00:{bar:04d}Z,OTHER,1.00,1.00,1.00,1.00,5")
    return "\n".join(lines) + "\n"


def _clip(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


def _expected(bars: list[list[float]], bar: int, window: int, account: Account) -> list[float]:
    """The documented observation, from the bars as plain floats."""
    rows = [bars[max(0, b)] for b in range(bar - window + 1, bar + 1)]
    close = bars[bar][3]
    mean = sum(row[4] for row in rows) / window
    out: list[float] = []
    for o, h, low, c, v in rows:
        prices = [_clip(x / close - 1, -1.0, LIMIT) for x in (o, h, low, c)]
        out += [*prices, _clip(v / mean - 1, -1.0, window - 1.0) if mean else 0.0]
    equity = account.equity_float
    mark = account.price / account.unit
    out.append(_clip(account.position * mark / equity, -LIMIT, LIMIT))
    out.append(_clip(float(account.cash) / equity, -LIMIT, LIMIT))
    out.append(_clip(equity / float(START) - 1, -LIMIT, LIMIT))
    return out


def _account(bars: list[list[float]], bar: int) -> Account:
    """A different account at every bar; near the end equity nears zero (clipped)."""
    mark = Decimal(f"{bars[bar][3]:.2f}")
    position = (bar % 7 - 3) * 100
    equity = Decimal("0.5") if bar >= BARS - 5 else START + bar * Decimal("12.34")
    cash = float(equity - position * mark)
    return Account(position, int(mark * 100), 100, cash, int(equity * 100), float(equity))


@pytest.mark.parametrize("window", [1, 5, 16])
def test_every_bar_observes_its_window_and_account_as_documented(window: int) -> None:
    history = BarHistory(_tape(), "ACME", window)
    bars = history.bars.tolist()
    for bar in range(BARS):
        account = _account(bars, bar)
        observed = history.observation(bar, account, START_CENTS)
        assert observed.dtype == np.float32
        assert history.space.contains(observed)
        expected = np.array(_expected(bars, bar, window, account), dtype=np.float32)
        np.testing.assert_allclose(observed, expected, rtol=2e-6, atol=1e-6, err_msg=f"bar {bar}")
    spike = history.observation(520, _account(bars, 520), START_CENTS)
    assert spike[(window - 1) * 5 + 1] == LIMIT  # the spike's high, clipped
    quiet = history.observation(339, _account(bars, 339), START_CENTS)
    assert quiet[4::5][: window - 1].tolist() == [0.0] * (window - 1)  # no trade, no feature
    end = history.observation(BARS - 1, _account(bars, BARS - 1), START_CENTS)
    assert end[-3:-1].tolist() == [LIMIT, -LIMIT]  # equity near zero: clipped


@pytest.mark.parametrize("kept", ["every block", "one block"])
def test_an_observation_does_not_depend_on_the_bars_observed_before(
    kept: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if kept == "one block":  # each block prepared drops the one before
        monkeypatch.setattr(spaces, "PREPARED", 1)
    tape = _tape()
    in_turn = BarHistory(tape, "ACME", 16)
    bars = in_turn.bars.tolist()
    expected = [in_turn.observation(bar, _account(bars, bar), START_CENTS) for bar in range(BARS)]
    shuffled = BarHistory(tape, "ACME", 16)
    order = np.random.default_rng(7).permutation(BARS).tolist()
    for bar in order + order[::-3]:
        observed = shuffled.observation(bar, _account(bars, bar), START_CENTS)
        assert observed.tobytes() == expected[bar].tobytes(), f"bar {bar}"
    # each observation is the caller's own array: changing one changes no other
    again = shuffled.observation(order[-1], _account(bars, order[-1]), START_CENTS)
    again[:] = 0
    assert shuffled.observation(order[-1], _account(bars, order[-1]), START_CENTS).any()


def test_a_bar_off_the_tape_is_refused_naming_it() -> None:
    history = BarHistory(_tape(), "ACME", 4)
    account = _account(history.bars.tolist(), 0)
    for bar in (-1, BARS):
        with pytest.raises(IndexError, match=f"bar {bar} is not on the tape \\(0 to {BARS - 1}\\)"):
            history.observation(bar, account, START_CENTS)
