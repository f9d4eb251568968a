"""The spaces of ``kestrel/Trading-v0``: what an observation holds, what an action means.

Observation: a ``Box((window * 5 + 3,), float32)`` with finite bounds, the concatenation of

* the last ``window`` bars of the traded symbol, oldest first, up to and including the
  current bar (before bar 0, bar 0 repeated), each as five numbers:
  ``open / close_now - 1``, ``high / close_now - 1``, ``low / close_now - 1``,
  ``close / close_now - 1`` (each in ``[-1, LIMIT]``: prices are positive) and
  ``volume / mean_volume_of_the_window - 1`` (in ``[-1, window - 1]``; 0 when the window
  traded nothing);
* the account: ``position value / equity``, ``cash / equity`` and
  ``equity / starting equity - 1``, each in ``[-LIMIT, LIMIT]``.

``LIMIT`` is 100: a value beyond it (a price 101 times the current close within the
window, an account whose equity nears zero) is clipped to it, and every observation is in
the space. The bounds come from the definitions, not from the tape: they tell nothing of
bars to come.

Actions move the position to a target, with one market order (``tif day``) followed by
``advance 1``, so it fills at the next bar's open (docs/spec.md §5). A full position is worth
``exposure`` (default 0.95) of equity at the current mark, in whole lots, at most
``max_position``:

* ``discrete``: ``Discrete(3)`` -- 0 flat, 1 long, 2 short (``Discrete(2)`` when the
  scenario is not shortable). Entering a side trades to a full position; repeating the
  side holds the position as it is (no rebalancing). An action is a Python ``int`` or a
  NumPy integer (a scalar or a 0-d array); ``True``, ``1.5``, ``"1"`` are not actions.
* ``continuous``: ``Box(-1, 1, (1,), float32)`` (``Box(0, 1)`` when not shortable), the
  target as a signed fraction of a full position, rebalanced every step. An action is an
  array (or sequence) of one real number within the bounds; NaN is not.

An action outside the space raises ``gymnasium.error.InvalidAction`` naming the action
and the space, before anything is submitted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, NamedTuple

import numpy as np
from gymnasium import spaces
from gymnasium.error import InvalidAction
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import NDArray

__all__ = [
    "ACCOUNT_FEATURES",
    "BAR_FEATURES",
    "LIMIT",
    "ActionKind",
    "ActionMapping",
    "BarHistory",
    "check_box",
    "clip",
]

BAR_FEATURES = 5
ACCOUNT_FEATURES = 3
LIMIT = 100.0
"""The bound of every feature that has none of its own (see the module docstring)."""
BLOCK = 256
"""Bars whose observations ``BarHistory`` prepares at once (an episode reads them in turn)."""
PREPARED = 4 << 20
"""Bytes of prepared observations a ``BarHistory`` keeps for later episodes (all of a
daily tape of ten years at ``window=16``)."""

ActionKind = Literal["discrete", "continuous", "weights"]
"""``weights`` trades a basket (:mod:`.basket`); the others one symbol (this module)."""

_BOOLS = (bool, np.bool_)
_INTEGERS = frozenset({int, *(np.dtype(code).type for code in np.typecodes["AllInteger"])})
"""``int`` and NumPy's integer scalar types (``Discrete.sample`` gives ``np.int64``)."""


def _bars(tape_csv: str, symbol: str) -> NDArray[np.float64]:
    """``(bars, 5)``: open, high, low, close and volume of ``symbol`` from the tape CSV."""
    rows: list[tuple[float, ...]] = []
    prefix = f",{symbol},"
    for line in tape_csv.splitlines()[1:]:
        if prefix not in line:
            continue
        _, _, o, h, low, c, v = line.split(",")
        rows.append((float(o), float(h), float(low), float(c), float(v)))
    if not rows:
        raise ValueError(f"the tape has no bars of {symbol}")
    return np.array(rows, dtype=np.float64)


class BarHistory:
    """One symbol's bars from the tape CSV (any transport serves it), and the observation
    of any bar with ``window`` bars of history (see the module docstring)."""

    def __init__(self, tape_csv: str, symbol: str, window: int) -> None:
        bars = _bars(tape_csv, symbol)
        self.bars: NDArray[np.float64] = bars
        self.window = window
        # Bar b's window is padded[b : b + window] (bar 0 repeated before the tape).
        self._padded = np.concatenate([np.repeat(bars[:1], window - 1, axis=0), bars])
        # x / close - 1 for prices and v / mean - 1 for volume, as x * scale - offset;
        # a window that traded nothing has volume feature 0 (scale 0, offset 0).
        volume = np.concatenate([[0.0], np.cumsum(self._padded[:, 4])])
        mean = (volume[window:] - volume[:-window]) / window
        traded = mean > 0
        with np.errstate(divide="ignore"):
            close = np.where(bars[:, 3] > 0, 1.0 / np.where(bars[:, 3] > 0, bars[:, 3], 1), 0)
            per_volume = np.where(traded, 1.0 / np.where(traded, mean, 1), 0)
        self._scale = np.column_stack([close, close, close, close, per_volume])
        self._offset = np.column_stack([np.ones((len(bars), 4)), traded.astype(np.float64)])
        size = window * BAR_FEATURES + ACCOUNT_FEATURES
        low = np.full(size, -LIMIT)
        high = np.full(size, LIMIT)
        bar_low = low[: window * BAR_FEATURES].reshape(window, BAR_FEATURES)
        bar_high = high[: window * BAR_FEATURES].reshape(window, BAR_FEATURES)
        bar_low[:] = -1.0
        bar_high[:, 4] = window - 1.0
        self._low, self._high = low, high
        # Block i: the bars' part of the observations of bars i * BLOCK on (``_prepare``)
        self._blocks: dict[int, NDArray[np.float32]] = {}
        self._block_bytes = BLOCK * size * 4
        self.space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.bars)

    @property
    def bar_bounds(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The low and high bounds of the bars' part of an observation (``window * 5``)."""
        wide = self.window * BAR_FEATURES
        return self._low[:wide], self._high[:wide]

    def bar_features(self, bar: int) -> NDArray[np.float32]:
        """The bars' part of the observation at ``bar`` (``window * 5`` numbers, a view)."""
        rows = self._blocks.get(bar // BLOCK)
        if rows is None:
            if not 0 <= bar < len(self.bars):
                raise IndexError(f"bar {bar} is not on the tape (0 to {len(self.bars) - 1})")
            rows = self._prepare(bar // BLOCK)
        features: NDArray[np.float32] = rows[bar % BLOCK, : self.window * BAR_FEATURES]
        return features

    def observation(self, bar: int, account: Account, start_cents: int) -> NDArray[np.float32]:
        """The observation at ``bar`` with ``account`` (always within :attr:`space`), from
        a starting equity of ``start_cents``."""
        rows = self._blocks.get(bar // BLOCK)
        if rows is None:
            if not 0 <= bar < len(self.bars):
                raise IndexError(f"bar {bar} is not on the tape (0 to {len(self.bars) - 1})")
            rows = self._prepare(bar // BLOCK)
        observed: NDArray[np.float32] = rows[bar % BLOCK].copy()
        # The account's features as the bars' (``_prepare``): float64, clipped, then float32;
        # the position's worth and the equity's growth are exact quotients, rounded once
        # (the growth is float(Decimal(equity) / Decimal(start)), Decimal's 28 digits then
        # a float, for any equity and start under $10**9: no quotient of such cents lies
        # within 28 digits of a point halfway between two floats).
        equity = account.equity_float or 1.0
        position = account.position
        held = (position * account.price / account.unit if position else 0.0) / equity
        cash = account.cash / equity
        growth = account.equity / start_cents - 1.0
        # clip(), written out: three calls a step
        observed[-3] = LIMIT if held > LIMIT else -LIMIT if held < -LIMIT else held
        observed[-2] = LIMIT if cash > LIMIT else -LIMIT if cash < -LIMIT else cash
        observed[-1] = LIMIT if growth > LIMIT else -LIMIT if growth < -LIMIT else growth
        return observed

    def _prepare(self, index: int) -> NDArray[np.float32]:
        """Block ``index``: the observations of bars ``index * BLOCK`` to the next block's
        (fewer at the tape's end) with the account's features 0, each bar's features
        computed as float64, clipped to the space, then rounded to float32 (what a bar's
        alone would be). Kept for later episodes, the oldest dropped beyond ``PREPARED``."""
        blocks = self._blocks
        while blocks and len(blocks) * self._block_bytes >= PREPARED:
            del blocks[next(iter(blocks))]
        first = index * BLOCK
        window = self.window
        last = min(first + BLOCK, len(self.bars))
        count = last - first
        wide = window * BAR_FEATURES
        # Row i: bar (first + i)'s window, its bars side by side (a view of ``_padded``).
        padded = self._padded[first : last + window - 1]
        windows = sliding_window_view(padded, (window, BAR_FEATURES)).reshape(count, wide)
        rows = np.empty((count, wide + ACCOUNT_FEATURES))
        features = rows[:, :wide]
        np.multiply(windows, np.tile(self._scale[first:last], window), out=features)
        features -= np.tile(self._offset[first:last], window)
        rows[:, wide:] = 0.0
        np.minimum(rows, self._high, out=rows)
        block: NDArray[np.float32] = np.empty(rows.shape, dtype=np.float32)
        np.maximum(rows, self._low, out=block)
        blocks[index] = block
        return block


def clip(value: float) -> float:
    """``value`` within ``[-LIMIT, LIMIT]`` (NaN stays NaN, as NumPy clips)."""
    if value > LIMIT:
        return LIMIT
    if value < -LIMIT:
        return -LIMIT
    return value


class Account(NamedTuple):
    """What the observation and the action mapping need of a frame (a tuple: the env
    makes one per step), each number in the form read: the mark and the equity exact, as
    integers (:mod:`.money`: sizing, the position's worth, the equity's growth, the
    reward), cash and equity as floats (features)."""

    position: int
    price: int
    """The mark is ``price / unit`` exactly."""
    unit: int
    cash: float
    equity: int
    """In cents."""
    equity_float: float
    """``equity / 100``: the float of the frame's equity."""


def _refuse(action: Any, space: spaces.Space[Any], why: str) -> InvalidAction:
    return InvalidAction(f"{action!r} ({type(action).__name__}) is not an action of {space}: {why}")


def check_box(action: Any, space: spaces.Space[Any], count: int, low: float) -> list[float]:
    """``action`` as ``count`` finite real numbers in ``[low, 1]``, or ``InvalidAction``
    naming it and ``space`` (an array or sequence of that shape)."""
    try:
        array = np.asarray(action)
    except (TypeError, ValueError) as exc:  # ragged sequences and the like
        raise _refuse(action, space, str(exc)) from None
    if array.dtype.kind not in "iuf":
        raise _refuse(action, space, f"not a real number (dtype {array.dtype})")
    if array.shape != (count,):
        raise _refuse(action, space, f"shape {array.shape}, not ({count},)")
    values = [float(value) for value in array]
    if not all(math.isfinite(value) for value in values):
        raise _refuse(action, space, "not a finite number")
    if not all(low <= value <= 1.0 for value in values):
        raise _refuse(action, space, f"outside [{low}, 1.0]")
    return values


def _check_integer(action: Any, space: spaces.Space[Any]) -> None:
    """``InvalidAction`` unless ``action`` is an integer: a NumPy integer, an int (not a
    bool) or an integer array of shape ``()``."""
    if isinstance(action, np.integer):
        return
    if isinstance(action, _BOOLS):
        raise _refuse(action, space, "a bool is not an action number")
    scalar = isinstance(action, np.ndarray) and action.shape == ()
    if not isinstance(action, int) and not (scalar and action.dtype.kind in "iu"):
        if isinstance(action, np.ndarray):
            why = f"a {action.dtype} array of shape {action.shape}, not an integer"
            raise _refuse(action, space, why)
        raise _refuse(action, space, "not an integer")


@dataclass(frozen=True, slots=True)
class ActionMapping:
    """Checks an action against the space and turns it into the signed quantity to trade
    (see the module docstring)."""

    kind: ActionKind
    shortable: bool
    lot: int
    max_position: int
    exposure: float
    _exposure: int = field(init=False, repr=False, compare=False)
    _per_lot: int = field(init=False, repr=False, compare=False)
    _most: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the exact decimal of ``exposure``'s shortest repr, n / d, as full() multiplies
        # by it: full() divides by 100 (cents), d and the lot at once
        exposure, denominator = Decimal(repr(self.exposure)).as_integer_ratio()
        object.__setattr__(self, "_exposure", exposure)
        object.__setattr__(self, "_per_lot", 100 * denominator * self.lot)
        # the largest position in whole lots
        object.__setattr__(self, "_most", self.max_position // self.lot * self.lot)

    def space(self) -> spaces.Space[Any]:
        if self.kind == "discrete":
            return spaces.Discrete(3 if self.shortable else 2)
        low = -1.0 if self.shortable else 0.0
        return spaces.Box(low, 1.0, shape=(1,), dtype=np.float32)

    def check(self, action: Any, space: spaces.Space[Any]) -> float:
        """``action`` as a number, or ``InvalidAction`` naming it and ``space``."""
        if self.kind != "discrete":
            return check_box(action, space, 1, -1.0 if self.shortable else 0.0)[0]
        if type(action) not in _INTEGERS:  # an int or what ``Discrete.sample`` gives passes
            _check_integer(action, space)
        value = int(action)
        n = 3 if self.shortable else 2
        if not 0 <= value < n:
            raise _refuse(action, space, f"not in 0..{n - 1}")
        return value

    def full(self, account: Account) -> int:
        """Shares of a full position at the current mark: whole lots, within the limit.

        Exactly: the lots of ``equity * exposure / mark`` (the exposure's decimal),
        rounded down, in integers (equity in cents, the mark ``price / unit``)."""
        price, equity = account.price, account.equity
        if price <= 0 or equity <= 0:
            return 0
        lots = equity * self._exposure * account.unit // (self._per_lot * price)
        return min(lots * self.lot, self._most)

    def order(self, action: float, account: Account) -> int:
        """The signed quantity to trade for a checked ``action`` (0: no order)."""
        if self.kind == "discrete":
            side = (0, 1, -1)[int(action)]
            position = account.position
            if side == 0:  # flat, whatever a full position would be
                return -position
            if side == (position > 0) - (position < 0):
                return 0
            return side * self.full(account) - position
        target = int(action * self.full(account) / self.lot) * self.lot
        return target - account.position
