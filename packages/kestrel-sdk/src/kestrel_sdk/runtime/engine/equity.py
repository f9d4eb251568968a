"""The equity series a grade measures, kept as runs while a session steps.

Between two changes of its account (a fill, a margin accrual, a liquidation) a session's
cash and positions stay the same, so its equity at each bar's close is ``cash + Σ qty ×
close[j]`` with the same cash and quantities: the trace keeps one run per such stretch
of bars (the cash, the quantities, and whether a position was held) and writes the
series out bar by bar only when a grade reads it. A step costs the same however many
bars it advances, and a session's memory grows with its account's changes, not its bars.
The series is exactly what marking every bar would give (docs/spec.md §6).

The runs are kept column by column (no object per run), and a bar whose cash and
positions are the last run's extends it without building anything: a step that trades
nothing allocates nothing here.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence

from .account import Holding

__all__ = ["EquityTrace", "Marks"]

Marks = tuple[tuple[str, int], ...]
"""The positions held at a bar's close: ``(symbol, quantity)`` pairs (empty when flat)."""


def _marks(holdings: Mapping[str, Holding]) -> Marks:
    if len(holdings) == 1:  # the common case, without a generator
        ((symbol, held),) = holdings.items()
        return ((symbol, held.qty),)
    return tuple((symbol, held.qty) for symbol, held in holdings.items())


class EquityTrace:
    """Equity at bar 0 and at every processed bar's close, as runs of bars.

    Run ``i`` is bars ``first[i]..last[i]``, closed with ``cash[i]`` and ``marks[i]``;
    ``held[i]`` is whether a position was held at those closes (before a stand-down's
    liquidation, which :meth:`restate` books).
    """

    __slots__ = ("_cash", "_end", "_first", "_held", "_last", "_marks")

    def __init__(self, cash: int) -> None:
        self._first = array("q", [0])
        self._last = array("q", [0])
        self._end = 0
        """The last run's last bar: a step that extends the run moves this alone, and
        ``_last[-1]`` is written from it when a run follows or the runs are read."""
        self._cash = [cash]
        self._marks: list[Marks] = [()]
        self._held = bytearray(1)

    def hold(self, first: int, last: int, cash: int, holdings: Mapping[str, Holding]) -> None:
        """Bars ``first..last`` (the next ones) closed with ``cash`` and ``holdings``."""
        if self._end + 1 == first and self._cash[-1] == cash:
            # a run is extended only by bars like its own: flat, or holding exactly its
            # marks (a restated run, flat after its liquidation but held at its bar, is not)
            marks = self._marks[-1]
            if not self._held[-1]:
                if not holdings and not marks:
                    self._end = last
                    return
            elif len(marks) == len(holdings):
                for symbol, qty in marks:
                    held = holdings.get(symbol)
                    if held is None or held.qty != qty:
                        break
                else:
                    self._end = last
                    return
        self._append(first, last, cash, _marks(holdings), 1 if holdings else 0)

    def _append(self, first: int, last: int, cash: int, marks: Marks, held: int) -> None:
        self._last[-1] = self._end
        self._first.append(first)
        self._last.append(last)
        self._end = last
        self._cash.append(cash)
        self._marks.append(marks)
        self._held.append(held)

    def restate(self, bar: int, cash: int, holdings: Mapping[str, Holding]) -> None:
        """The last bar, ``bar``, closed at ``cash`` and ``holdings`` after all (a
        stand-down liquidated there); whether a position was held there is unchanged."""
        if self._first[-1] == bar:  # the last run is that bar alone: restated in place
            self._cash[-1] = cash
            self._marks[-1] = _marks(holdings)
            return
        self._end = bar - 1
        self._append(bar, bar, cash, _marks(holdings), self._held[-1])

    def series(self, closes: Mapping[str, Sequence[int]]) -> list[int]:
        """Equity at each bar traced, in P units (``closes``: each symbol's closes)."""
        self._last[-1] = self._end
        out: list[int] = []
        for first, last, cash, marks in zip(
            self._first, self._last, self._cash, self._marks, strict=True
        ):
            if not marks:
                out.extend([cash] * (last - first + 1))
            elif len(marks) == 1:
                ((symbol, qty),) = marks
                # a slice of the closes, iterated: no index per bar
                out.extend([cash + qty * close for close in closes[symbol][first : last + 1]])
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
        self._last[-1] = self._end
        out = bytearray()
        for first, last, held in zip(self._first, self._last, self._held, strict=True):
            out.extend((b"\x01" if held else b"\x00") * (last - first + 1))
        return out
