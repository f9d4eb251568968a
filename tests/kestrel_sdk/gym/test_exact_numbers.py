"""The gym's numbers from integers are the numbers its ``Decimal`` formulas gave, bit for bit:
a full position's size, the account's three observation features, the reward and the
equity's float, over many random accounts and the edges (flat, short, equity at or below
zero, an equity near zero, exact multiples of a lot, exposures whose decimal is long)."""

from __future__ import annotations

import random
from decimal import Decimal

import numpy as np
import pytest
from kestrel_sdk.gym.env import _account
from kestrel_sdk.gym.money import cents, price_units
from kestrel_sdk.gym.spaces import LIMIT, ActionMapping, BarHistory, clip
from kestrel_sdk.runtime.frame_values import FrameValues

ACCOUNTS = 20_000
EXPOSURES = [0.95, 1.0, 0.5, 0.3 + 0.6, 0.1, 0.001, 0.123456789012345, 2 / 3, 0.07]
LOTS = [1, 10, 100, 7]


def _money(rng: random.Random, low: int, high: int) -> str:
    value = rng.randint(low, high)
    sign = "-" if value < 0 else ""
    return f"{sign}{abs(value) // 100}.{abs(value) % 100:02d}"


def _price(rng: random.Random) -> str:
    places = rng.choice([0, 1, 2, 2, 4, 6])
    units = rng.choice([1, rng.randint(1, 10**places), rng.randint(1, 10**7 * 10**places)])
    if not places:
        return str(units)
    return f"{units // 10**places}.{units % 10**places:0{places}d}"


def _accounts() -> list[tuple[int, str, str, str]]:
    """(position, mark, cash, equity) texts as frames show them: random, then edges."""
    rng = random.Random(48)
    rows = []
    for _ in range(ACCOUNTS):
        scale = rng.choice([10**3, 10**7, 10**9, 10**11])
        equity = _money(rng, -scale // 10, scale)
        position = rng.choice([0, rng.randint(-(10**6), 10**6), rng.randint(-50, 50)])
        rows.append((position, _price(rng), _money(rng, -scale, scale), equity))
    for equity in ["0.00", "0.01", "-0.01", "0.50", "99999999.99", "1000000000.00"]:
        for mark in ["0.01", "1", "95", "100.00", "123.4567"]:
            rows += [
                (0, mark, equity, equity),
                (300, mark, "0.00", equity),
                (-7, mark, "5", equity),
            ]
    return rows


def _frame(position: int, mark: str, cash: str, equity: str) -> FrameValues:
    held: dict[str, int | str] = {"ACME": position} if position else {}
    return FrameValues("s", 1, "t", "open", cash, equity, held, {"ACME": mark}, ())


def test_money_and_prices_read_as_integers_are_their_decimals() -> None:
    rng = random.Random(7)
    for _ in range(ACCOUNTS):
        money = _money(rng, -(10**12), 10**12)
        assert Decimal(cents(money)) / 100 == Decimal(money)
        price = _price(rng)
        units, unit = price_units(price)
        assert Decimal(units) / unit == Decimal(price)
    for text, expected in [("7", 700), ("-5", -500), ("0.5", 50), ("-0.5", -50), ("12.3", 1230)]:
        assert cents(text) == expected
    assert price_units("101.25") == (10125, 100)
    assert price_units("95") == (95, 1)


@pytest.mark.parametrize("text", ["1.005", "-0.001", "12.345"])
def test_money_finer_than_the_cent_is_refused_naming_it(text: str) -> None:
    with pytest.raises(ValueError, match=f"money is to the cent, not '{text}'"):
        cents(text)


def _full_as_decimals(mapping: ActionMapping, mark: str, equity: str) -> int:
    """A full position as the gym sized it with ``Decimal`` (its old formula)."""
    mark_exact, equity_exact = Decimal(mark), Decimal(equity)
    if mark_exact <= 0 or equity_exact <= 0:
        return 0
    worth = equity_exact * Decimal(repr(mapping.exposure)) / mark_exact
    lots = int(worth // Decimal(mapping.lot))
    return min(lots * mapping.lot, mapping.max_position // mapping.lot * mapping.lot)


def test_a_full_position_is_the_decimal_formulas() -> None:
    rng = random.Random(11)
    for position, mark, cash, equity in _accounts():
        account = _account(_frame(position, mark, cash, equity), "ACME")
        exposure, lot = rng.choice(EXPOSURES), rng.choice(LOTS)
        most = rng.choice([10**9, 10**4, 1_000_000])
        mapping = ActionMapping("discrete", True, lot, most, exposure)
        assert mapping.full(account) == _full_as_decimals(mapping, mark, equity), (
            mark,
            equity,
            exposure,
            lot,
        )


def test_a_full_position_at_an_exact_multiple_of_a_lot_is_that_multiple() -> None:
    for lots in (1, 3, 1_000, 123_456):
        for lot in LOTS:
            # equity * 0.5 / 20.00 == lots * lot exactly
            equity = f"{lots * lot * 40}.00"
            mapping = ActionMapping("discrete", True, lot, 10**12, 0.5)
            account = _account(_frame(0, "20.00", equity, equity), "ACME")
            assert (
                mapping.full(account) == lots * lot == _full_as_decimals(mapping, "20.00", equity)
            )


def _features_as_decimals(position: int, mark: str, cash: str, equity: str, start: str) -> bytes:
    """The account's three features as the gym computed them with ``Decimal`` (as float32
    bytes)."""
    equity_exact = Decimal(equity)
    denominator = float(equity_exact) or 1.0
    held = (float(position * Decimal(mark)) if position else 0.0) / denominator
    growth = float(equity_exact / Decimal(start)) - 1.0
    return np.array(
        [clip(held), clip(float(cash) / denominator), clip(growth)], dtype=np.float32
    ).tobytes()


def test_the_account_features_are_the_decimal_formulas() -> None:
    tape = "time,symbol,open,high,low,close,volume\n2024-01-01,ACME,1,1,1,1,1\n"
    history = BarHistory(tape, "ACME", 1)
    rng = random.Random(5)
    for position, mark, cash, equity in _accounts():
        start = rng.choice(["100000.00", "1.00", "0.01", "10000000.00", "123.45"])
        account = _account(_frame(position, mark, cash, equity), "ACME")
        observed = history.observation(0, account, cents(start))
        expected = _features_as_decimals(position, mark, cash, equity, start)
        assert observed[-3:].tobytes() == expected, (position, mark, cash, equity, start)
        # and before float32: the worth and the growth as float64, one rounding each
        worth = account.position * account.price / account.unit
        assert worth == float(position * Decimal(mark))
        assert account.equity / cents(start) == float(Decimal(equity) / Decimal(start))
    flat_below_zero = _account(_frame(0, "10", "-5.00", "-5.00"), "ACME")
    assert np.signbit(history.observation(0, flat_below_zero, 100)[-3])  # 0.0 / -5.0 is -0.0
    broke = _account(_frame(10, "10", "-99.99", "0.01"), "ACME")
    assert history.observation(0, broke, 100)[-3:-1].tolist() == [LIMIT, -LIMIT]


def test_the_reward_and_the_equity_float_are_the_decimal_formulas() -> None:
    rng = random.Random(3)
    for _, mark, cash, equity in _accounts():
        before = _money(rng, -(10**11), 10**11)
        account = _account(_frame(0, mark, cash, equity), "ACME")
        assert account.equity_float == float(Decimal(equity))
        assert account.cash == float(Decimal(cash))
        # the env's reward: (after.equity - before.equity) / 100
        assert (account.equity - cents(before)) / 100 == float(Decimal(equity) - Decimal(before))
