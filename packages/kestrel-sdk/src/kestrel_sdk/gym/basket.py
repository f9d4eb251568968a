"""``action="weights"``: ``kestrel/Trading-v0`` over a basket of symbols, a weight each.

``symbols`` (default: every instrument of the scenario, in its order) are the basket; the
tape must hold a bar of each at every time.

Observation: a ``Box((n * window * 5 + n + 2,), float32)`` with finite bounds, for ``n``
symbols: each symbol's ``window * 5`` bar features, in the basket's order (as the
single-symbol observation's, see :mod:`.spaces`), then each symbol's position value /
equity, then cash / equity and equity / starting equity - 1 (each in
``[-LIMIT, LIMIT]``).

Action: ``Box(-1, 1, (n,), float32)`` (``Box(0, 1)`` when the scenario is not
shortable): the target weight of each symbol, a signed fraction of equity, rebalanced
every step.

* **Normalisation.** When the weights' magnitudes sum to more than 1 they are scaled
  down, in proportion, to sum to 1 (``(1, 1)`` is ``(0.5, 0.5)``); otherwise they are
  used as given. What they leave, ``1 - sum(|w|)``, stays in cash (``(0, 0)`` is all
  cash, flat). A short's proceeds are cash too.
* **Sizing.** Symbol ``i``'s target is ``w_i * exposure * equity / mark_i`` shares,
  rounded toward zero to whole lots and capped at ``max_position``, where ``equity`` and
  ``mark_i`` are those of the current frame (the closes the agent sees). ``exposure``
  (default 0.95) is headroom: the orders fill at the next bar's open, and a buy that
  cash cannot cover there is rejected (``rejected`` event), so weights summing to 1
  with ``exposure=1`` can leave a leg unfilled after a gap up.
* **Orders.** One market order (``tif day``) per symbol whose position differs from its
  target, sells first (they free cash for the buys: orders match in id order), then
  ``advance 1``. An action outside the space raises ``gymnasium.error.InvalidAction``
  and nothing is submitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal, localcontext
from typing import Any

import numpy as np
from gymnasium import spaces
from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT, Scenario, SealedScenario
from numpy.typing import NDArray

from ..runtime.frame_values import FrameValues
from .spaces import LIMIT, BarHistory, check_box, clip
from .whole import whole_quantity

__all__ = ["Basket"]

ONE = Decimal(1)


class Basket:
    """The spaces, observation and orders of ``action="weights"`` (module docstring)."""

    def __init__(
        self,
        described: Scenario | SealedScenario,
        tape_csv: str,
        symbols: Sequence[str] | None,
        window: int,
        exposure: float,
    ) -> None:
        instruments = {item.symbol: item for item in described.instruments}
        chosen = tuple(symbols) if symbols is not None else tuple(instruments)
        if not chosen:
            raise ValueError("a basket needs at least one symbol")
        for symbol in chosen:
            if symbol not in instruments:
                raise ValueError(
                    f"{described.id} has no symbol {symbol} ({', '.join(instruments)})"
                )
        if len(set(chosen)) != len(chosen):
            raise ValueError(f"a symbol is listed twice in {list(chosen)}")
        self.symbols = chosen
        self.histories = [BarHistory(tape_csv, symbol, window) for symbol in chosen]
        counts = {len(history) for history in self.histories}
        if len(counts) != 1:
            pairs = zip(chosen, self.histories, strict=True)
            counted = ", ".join(f"{symbol} {len(history)}" for symbol, history in pairs)
            raise ValueError(
                f"the basket needs a bar of every symbol at every time: {described.id}'s "
                f"tape has {counted} bars"
            )
        self.lots = {symbol: whole_quantity(instruments[symbol].lot) for symbol in chosen}
        account = described.account
        self.shortable = account.shortable
        self.max_position = account.max_position
        self.exposure = Decimal(repr(exposure))
        n = len(chosen)
        lows = [history.bar_bounds[0] for history in self.histories]
        highs = [history.bar_bounds[1] for history in self.histories]
        low = np.concatenate([*lows, np.full(n + 2, -LIMIT)])
        high = np.concatenate([*highs, np.full(n + 2, LIMIT)])
        self.observation_space = spaces.Box(
            low.astype(np.float32), high.astype(np.float32), dtype=np.float32
        )
        self.action_space = spaces.Box(
            -1.0 if self.shortable else 0.0, 1.0, shape=(n,), dtype=np.float32
        )

    def __len__(self) -> int:
        return len(self.histories[0])

    def positions(self, frame: FrameValues) -> dict[str, int]:
        """Each symbol's position in ``frame`` (0 when flat)."""
        held = frame.positions
        return {symbol: whole_quantity(held.get(symbol, 0)) for symbol in self.symbols}

    def observe(self, frame: FrameValues, start_equity: Decimal) -> NDArray[np.float32]:
        """The observation of ``frame`` (always within :attr:`observation_space`)."""
        bar = frame.bar
        n = len(self.symbols)
        equity_exact = Decimal(frame.equity)
        equity = float(equity_exact) or 1.0
        held = self.positions(frame)
        with localcontext(DEFAULT_DECIMAL_CONTEXT):
            tail = [
                *(clip(float(held[s] * Decimal(frame.marks[s])) / equity) for s in self.symbols),
                clip(float(Decimal(frame.cash)) / equity),
                clip(float(equity_exact / start_equity) - 1.0),
            ]
        parts = [history.bar_features(bar) for history in self.histories]
        observed = np.concatenate([*parts, np.asarray(tail, dtype=np.float32)])
        assert observed.shape == (sum(len(p) for p in parts) + n + 2,)
        return observed.astype(np.float32, copy=False)

    def check(self, action: Any) -> tuple[Decimal, ...]:
        """The weights of ``action``, normalised (``InvalidAction`` when not an action)."""
        low = -1.0 if self.shortable else 0.0
        values = check_box(action, self.action_space, len(self.symbols), low)
        weights = [Decimal(repr(value)) for value in values]
        with localcontext(DEFAULT_DECIMAL_CONTEXT):
            gross = sum((abs(weight) for weight in weights), Decimal(0))
            if gross > ONE:
                weights = [weight / gross for weight in weights]
        return tuple(weights)

    def targets(self, weights: tuple[Decimal, ...], frame: FrameValues) -> dict[str, int]:
        """Each symbol's target position for ``weights`` at ``frame`` (module docstring)."""
        equity = Decimal(frame.equity)
        targets = {}
        for symbol, weight in zip(self.symbols, weights, strict=True):
            mark, lot = Decimal(frame.marks[symbol]), self.lots[symbol]
            if mark <= 0 or equity <= 0:
                targets[symbol] = 0
                continue
            with localcontext(DEFAULT_DECIMAL_CONTEXT):
                lots = int(abs(weight) * self.exposure * equity / mark // lot)
            shares = min(lots * lot, self.max_position // lot * lot)
            targets[symbol] = -shares if weight < 0 else shares
        return targets

    def source(self, weights: tuple[Decimal, ...], frame: FrameValues) -> str:
        """The orders that trade ``frame``'s positions to ``weights``, sells first, then
        ``advance 1``."""
        held = self.positions(frame)
        sells, buys = [], []
        for symbol, target in self.targets(weights, frame).items():
            change = target - held[symbol]
            if change < 0:
                sells.append(f"sell {-change} {symbol}\n")
            elif change > 0:
                buys.append(f"buy {change} {symbol}\n")
        return "".join(sells) + "".join(buys) + "advance 1\n"
