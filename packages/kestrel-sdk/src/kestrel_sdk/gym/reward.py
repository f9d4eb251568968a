"""A custom reward for ``kestrel/Trading-v0``: ``reward=`` a callable of :class:`StepValues`.

By default the reward of a step is the change in equity over it (fees included). Give
``TradingEnv(..., reward=fn)`` (or ``gymnasium.make(..., reward=fn)``) and the env calls
``fn(values)`` once per step with the step's plain values, and uses what it returns (a
real number; ``float(...)`` of it) as the reward::

    def log_return(step: StepValues) -> float:
        return math.log(step.equity / step.previous_equity)

The values are plain Python (``float``, ``int``, ``dict``, ``tuple``), taken from the
frame after the step: nothing the agent could not see, and no engine object to keep
alive. The callable must be deterministic for episodes to be reproducible (it only shapes
the reward: the session, its roots and its grade do not depend on it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..runtime.frame_values import FrameValues
from .whole import whole_quantity

__all__ = ["Reward", "StepValues", "step_values"]


@dataclass(frozen=True, slots=True)
class StepValues:
    """What a step did, as plain values (see the module docstring)."""

    bar: int
    """The bar the step advanced to (the clock after it)."""
    equity: float
    """Equity after the step (cash plus positions at the closes of ``bar``)."""
    previous_equity: float
    """Equity before the step."""
    start_equity: float
    """The scenario's starting cash."""
    cash: float
    positions: dict[str, int]
    """Every traded symbol's position after the step (0 when flat; negative short)."""
    marks: dict[str, float]
    """Every traded symbol's close at ``bar``."""
    action: Any
    """The action as checked: an ``int`` (discrete), a ``float`` (continuous), or a
    tuple of the weights as applied, after normalisation (weights)."""
    events: tuple[str, ...]
    """The frame's event types (``fill``, ``rejected``, ...)."""
    ended: bool
    """Whether the episode ends with this step (terminated or truncated)."""


Reward = Callable[[StepValues], float]


def step_values(
    frame: FrameValues,
    symbols: tuple[str, ...],
    *,
    previous_equity: float,
    start_equity: float,
    action: Any,
    ended: bool,
) -> StepValues:
    """The :class:`StepValues` of the step that led to ``frame``."""
    held = frame.positions
    return StepValues(
        bar=frame.bar,
        equity=float(frame.equity),
        previous_equity=previous_equity,
        start_equity=start_equity,
        cash=float(frame.cash),
        positions={symbol: whole_quantity(held.get(symbol, 0)) for symbol in symbols},
        marks={symbol: float(frame.marks[symbol]) for symbol in symbols},
        action=action,
        events=frame.events,
        ended=ended,
    )
