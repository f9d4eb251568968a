"""The equity series a grade measures, kept as runs while a session steps.

Between two changes of its account (a fill, a margin accrual, a liquidation) a session's
cash and positions stay the same, so its equity at each bar's close is ``cash + Σ qty ×
close[j]`` with the same cash and quantities: the trace keeps one run per such stretch
of bars (the cash, the quantities, and whether a position was held) and writes the
series out bar by bar only when a grade reads it. A step costs the same however many
bars it advances, and a session's memory grows with its account's changes, not its bars.
The series is exactly what marking every bar would give (docs/spec.md §6).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["EquityTrace", "Marks"]

Marks = tuple[tuple[str, int], ...]
"""The positions held at a bar's close: ``(symbol, quantity)`` pairs (empty when flat)."""


class EquityTrace:
    """Equity at bar 0 and at every processed bar's close, as runs of bars.

    A run is ``[first, last, cash, marks, held]``: bars ``first..last`` closed with
    ``cash`` and ``marks``; ``held`` is whether a position was held at those closes
    (before a stand-down's liquidation, which :meth:`restate` books).
    """

    __slots__ = ("_runs",)

    def __init__(self, cash: int) -> None:
        self._runs: list[list[Any]] = [[0, 0, cash, (), False]]

    def hold(self, first: int, last: int, cash: int, marks: Marks) -> None:
        """Bars ``first..last`` (the next ones) closed with ``cash`` and ``marks``."""
        run = self._runs[-1]
        held = bool(marks)
        if run[1] + 1 == first and run[2] == cash and run[4] is held and run[3] == marks:
            run[1] = last
        else:
            self._runs.append([first, last, cash, marks, held])

    def restate(self, bar: int, cash: int, marks: Marks) -> None:
        """The last bar, ``bar``, closed at ``cash`` and ``marks`` after all (a
        stand-down liquidated there); whether a position was held there is unchanged."""
        run = self._runs[-1]
        held = run[4]
        if run[0] == bar:
            self._runs.pop()
        else:
            run[1] = bar - 1
        self._runs.append([bar, bar, cash, marks, held])

    def series(self, closes: Mapping[str, Sequence[int]]) -> list[int]:
        """Equity at each bar traced, in P units (``closes``: each symbol's closes)."""
        out: list[int] = []
        for first, last, cash, marks, _ in self._runs:
            if not marks:
                out.extend([cash] * (last - first + 1))
            elif len(marks) == 1:
                ((symbol, qty),) = marks
                close = closes[symbol]
                out.extend([cash + qty * close[j] for j in range(first, last + 1)])
            else:
                held = [(qty, closes[symbol]) for symbol, qty in marks]
                for j in range(first, last + 1):
                    equity = cash
                    for qty, close in held:
                        equity += qty * close[j]
                    out.append(equity)
        return out

    def holding(self) -> bytearray:
        """Per bar of :meth:`series`, 1 where a position was held at its close."""
        out = bytearray()
        for first, last, _, _, held in self._runs:
            out.extend((b"\x01" if held else b"\x00") * (last - first + 1))
        return out
