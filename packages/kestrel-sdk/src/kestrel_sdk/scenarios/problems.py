"""The problems an import finds: the first ``SHOWN`` by row kept whole, all counted by kind.

A file whose every row is bad has as many problems as rows (or several a row): keeping
them all cost about 1.6 KB a row (800 MB for 500,000 rows of five faults). ``Problems``
keeps the first :data:`SHOWN` in row order (file-wide ones, without a row, first) and an
exact count of every problem by its kind: its reason with the values taken out
(``High 9 < Low 11`` is of the kind ``High … < Low …``), so a refusal can say how many of
each there are in a bounded amount of memory.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["KINDS", "SHOWN", "ImportProblem", "Problems", "problem_kind"]

SHOWN = 100
"""How many problems an import keeps whole (and the CLI lists): the first by row."""
KINDS = 100
"""How many kinds of problem are counted apart; any more are counted as ``other``."""
_VALUE = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[-+]?\.?[0-9][^\s,;()]*""")
_OTHER = "other"
_REMEMBERED = 1000  # reasons whose kind is remembered (a bad file often repeats its faults)


@dataclass(frozen=True, slots=True)
class ImportProblem:
    """One fault in the input: the row it is on (``None`` when it concerns the whole file)."""

    row: int | None
    reason: str


def problem_kind(reason: str) -> str:
    """``reason`` with each value (a number, a time, a quoted text) as ``…``:
    ``Open 'x' is not a number`` is of the kind ``Open … is not a number``."""
    return _VALUE.sub("…", reason)


class Problems:
    """Problems as they are found: the first :data:`SHOWN` by row kept (iterating gives
    them in row order, those found first first among equals), every one counted."""

    __slots__ = ("_counts", "_heap", "_kinds", "_seen")

    def __init__(self, problems: Iterable[ImportProblem] = ()) -> None:
        # (-row, -arrival, problem): the last of those kept is on top, to be replaced
        self._heap: list[tuple[int, int, ImportProblem]] = []
        self._seen = 0
        self._counts: Counter[str] = Counter()
        self._kinds: dict[str, str] = {}  # reason -> kind, for the first reasons met
        self.extend(problems)

    def append(self, problem: ImportProblem) -> None:
        self._seen += 1
        kind = self._kinds.get(problem.reason)
        if kind is None:
            kind = problem_kind(problem.reason)
            if len(self._kinds) < _REMEMBERED:
                self._kinds[problem.reason] = kind
        if kind not in self._counts and len(self._counts) >= KINDS:
            kind = _OTHER
        self._counts[kind] += 1
        key = (-(problem.row or 0), -self._seen, problem)
        if len(self._heap) < SHOWN:
            heapq.heappush(self._heap, key)
        elif key[:2] > self._heap[0][:2]:  # before the last kept one
            heapq.heapreplace(self._heap, key)

    def extend(self, problems: Iterable[ImportProblem]) -> None:
        for problem in problems:
            self.append(problem)

    def clear(self) -> None:
        self._heap.clear()
        self._seen = 0
        self._counts.clear()

    def __len__(self) -> int:
        """How many problems were found (kept or not)."""
        return self._seen

    def __iter__(self) -> Iterator[ImportProblem]:
        """The kept problems, in row order."""
        return (problem for *_, problem in sorted(self._heap, reverse=True))

    def counts(self) -> dict[str, int]:
        """How many problems of each kind were found, the commonest first."""
        return dict(sorted(self._counts.items(), key=lambda item: (-item[1], item[0])))
