"""Episode windows of ``kestrel/Trading-v0``: where an episode starts and how long it runs.

``start`` and ``length`` (constructor options, or per episode in ``reset(options=...)``,
which take precedence) set the window:

* neither: the whole tape from bar 0 (the env's default, as before windows existed);
* ``start=S``: from bar ``S`` to the tape's end;
* ``length=L``: ``L`` steps from a start that the env draws uniformly from ``0`` to
  ``last bar - L`` with its ``np_random`` (so ``reset(seed=...)`` picks it: the same seed
  gives the same start, session and roots in any process);
* both: ``L`` steps from bar ``S`` (walk-forward windows: ``start=k * L, length=L``).

An episode opened at bar ``S`` is a session advanced to ``S`` before its first
observation (``advance S``: no order, the starting cash untouched). An episode of ``L``
steps observes bars ``S`` to ``S + L`` and stands down (``stand down "end of window"``,
in the same submission as its last ``advance``) at bar ``S + L``: the last step is
``truncated`` and graded as at the tape's end. The session never advances beyond the
window and the observations never read a bar after the clock, so nothing of the bars
after ``S + L`` reaches the agent, its rewards or the grade.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["END_OF_WINDOW", "Window", "check_bound", "choose_window"]

END_OF_WINDOW = 'stand down "end of window"\n'


@dataclass(frozen=True, slots=True)
class Window:
    """An episode's first bar and its last (``None``: the tape's end)."""

    start: int
    end: int | None


def check_bound(name: str, value: Any, least: int) -> int | None:
    """``value`` as ``start``/``length`` takes it (``None``, or a whole number at least
    ``least``), or ``ValueError`` naming it."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise ValueError(f"{name} must be a whole number of bars, at least {least}, not {value!r}")
    return int(value)


def choose_window(
    start: int | None, length: int | None, bars: int, rng: np.random.Generator
) -> Window:
    """The window of an episode on a tape of ``bars`` bars (see the module docstring)."""
    last = bars - 1
    if length is None:
        first = start or 0
        if first >= last:
            raise ValueError(f"start {first} leaves no step: the tape's last bar is {last}")
        return Window(first, None)
    if start is None:
        if length > last:
            raise ValueError(f"length {length} is longer than the tape ({last} steps)")
        start = int(rng.integers(0, last - length, endpoint=True))
    if start + length > last:
        raise ValueError(f"start {start} + length {length} passes the tape's last bar ({last})")
    return Window(start, start + length)
