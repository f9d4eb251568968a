"""The spaces of ``kestrel/Trading-v0``: what an observation holds, what an action means.

Observation: a ``Box(-inf, inf, (window * 5 + 3,), float32)``, the concatenation of

* the last ``window`` bars of the traded symbol, oldest first, up to and including the
  current bar (before bar 0, bar 0 repeated), each as five numbers:
  ``open / close_now - 1``, ``high / close_now - 1``, ``low / close_now - 1``,
  ``close / close_now - 1`` and ``volume / mean_volume_of_the_window - 1`` (0 when the
  window traded nothing);
* the account: ``position value / equity``, ``cash / equity`` and
  ``equity / starting equity - 1``.

Actions move the position to a target, with one market order (``tif day``) followed by
``advance 1``, so it fills at the next bar's open (spec §5). A full position is worth
``exposure`` (default 0.95) of equity at the current mark, in whole lots, at most
``max_position``:

* ``discrete``: ``Discrete(3)`` -- 0 flat, 1 long, 2 short (``Discrete(2)`` when the
  scenario is not shortable). Entering a side trades to a full position; repeating the
  side holds the position as it is (no rebalancing).
* ``continuous``: ``Box(-1, 1, (1,), float32)`` (``Box(0, 1)`` when not shortable), the
  target as a signed fraction of a full position, rebalanced every step.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

__all__ = ["ACCOUNT_FEATURES", "BAR_FEATURES", "ActionMapping", "BarHistory"]

BAR_FEATURES = 5
ACCOUNT_FEATURES = 3
ActionKind = Literal["discrete", "continuous"]


class BarHistory:
    """One symbol's bars from the tape CSV (any transport serves it), as float arrays."""

    def __init__(self, tape_csv: str, symbol: str) -> None:
        opens: list[float] = []
        highs: list[float] = []
        lows: list[float] = []
        closes: list[float] = []
        volumes: list[float] = []
        prefix = f",{symbol},"
        for line in tape_csv.splitlines()[1:]:
            if prefix not in line:
                continue
            _, _, o, h, low, c, v = line.split(",")
            opens.append(float(o))
            highs.append(float(h))
            lows.append(float(low))
            closes.append(float(c))
            volumes.append(float(v))
        self.bars: NDArray[np.float64] = np.array([opens, highs, lows, closes, volumes]).T
        if not len(self.bars):
            raise ValueError(f"the tape has no bars of {symbol}")

    def __len__(self) -> int:
        return len(self.bars)

    def features(self, bar: int, window: int) -> NDArray[np.float64]:
        """The ``(window, 5)`` bar features at ``bar`` (see the module docstring)."""
        first = bar - window + 1
        rows = self.bars[max(first, 0) : bar + 1]
        if first < 0:
            rows = np.concatenate([np.repeat(self.bars[:1], -first, axis=0), rows])
        close = self.bars[bar, 3]
        prices = rows[:, :4] / close - 1.0
        mean = rows[:, 4].mean()
        volume = rows[:, 4] / mean - 1.0 if mean > 0 else np.zeros(window)
        return np.column_stack([prices, volume])


def observation_space(window: int) -> spaces.Space[NDArray[np.float32]]:
    size = window * BAR_FEATURES + ACCOUNT_FEATURES
    return spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)


@dataclass(frozen=True, slots=True)
class Account:
    """What the observation and the action mapping need of a frame."""

    position: int
    mark: Decimal
    cash: Decimal
    equity: Decimal


def observation(
    history: BarHistory, bar: int, window: int, account: Account, start_equity: Decimal
) -> NDArray[np.float32]:
    equity = float(account.equity) or 1.0
    tail = [
        float(account.position * account.mark) / equity,
        float(account.cash) / equity,
        float(account.equity / start_equity) - 1.0,
    ]
    flat = np.concatenate([history.features(bar, window).ravel(), tail])
    finite: NDArray[np.float32] = np.nan_to_num(flat, nan=0.0, posinf=0.0, neginf=0.0).astype(
        np.float32
    )
    return finite


@dataclass(frozen=True, slots=True)
class ActionMapping:
    """Turns an action into the signed quantity to trade (see the module docstring)."""

    kind: ActionKind
    shortable: bool
    lot: int
    max_position: int
    exposure: float

    def space(self) -> spaces.Space[Any]:
        if self.kind == "discrete":
            return spaces.Discrete(3 if self.shortable else 2)
        low = -1.0 if self.shortable else 0.0
        return spaces.Box(low, 1.0, shape=(1,), dtype=np.float32)

    def full(self, account: Account) -> int:
        """Shares of a full position at the current mark: whole lots, within the limit."""
        if account.mark <= 0 or account.equity <= 0:
            return 0
        worth = account.equity * Decimal(repr(self.exposure)) / account.mark
        lots = int(worth // self.lot)
        return min(lots * self.lot, self.max_position // self.lot * self.lot)

    def order(self, action: Any, account: Account) -> int:
        """The signed quantity to trade for ``action`` (0: no order)."""
        if self.kind == "discrete":
            side = (0, 1, -1)[int(action)]
            current = (account.position > 0) - (account.position < 0)
            if side == current and side != 0:
                return 0
            return side * self.full(account) - account.position
        fraction = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], -1, 1))
        if not self.shortable:
            fraction = max(fraction, 0.0)
        target = int(fraction * self.full(account) / self.lot) * self.lot
        return target - account.position
