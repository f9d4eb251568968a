"""How ``kestrel run`` sends a program: one submission, or chunks that show progress.

A short program is sent as one submission (atomic, one pentad). A long one (it
advances at least :data:`LONG_RUN_BARS` bars) is sent in chunks so that a progress bar
can show bars processed. The whole program is validated against the scenario first,
so syntax and scenario errors still refuse it as a whole. Each chunk is a run of the
program's lines, preceded by blank lines so that every statement keeps its line number
(diagnostics and blotter ``line`` match the file); an ``advance N`` longer than a chunk
is sent as several ``advance k`` on that same line, which processes the same bars.
So the fills, the blotter's orders (except their ``seq``) and the grade's metrics and
conformance are those of a single submission; the pentads differ (one per chunk), and
with them the frame, record and grade roots. Chunking depends only on the source, so a
run is still deterministic. ``--atomic`` always sends one submission.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["LONG_RUN_BARS", "Chunk", "estimate_bars", "plan_chunks"]

LONG_RUN_BARS = 5000
"""A program that advances this many bars or more is sent in chunks."""

_ADVANCE = re.compile(r"^\s*advance(?:\s+(\d+))?\s*(?:#.*)?$", re.IGNORECASE)
_ADVANCE_TO = re.compile(r"^\s*advance\s+to\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One submission of a chunked run and the bars it is expected to advance."""

    source: str
    bars: int


def _bars(line: str) -> int | None:
    """Bars an ``advance`` line processes (``None`` for ``advance to``: not known here)."""
    if _ADVANCE_TO.match(line):
        return None
    match = _ADVANCE.match(line)
    if match is None:
        return 0
    return int(match.group(1)) if match.group(1) else 1


def estimate_bars(source: str) -> int:
    """Bars the program advances, counting ``advance to`` as long."""
    total = 0
    for line in source.splitlines():
        bars = _bars(line)
        total += LONG_RUN_BARS if bars is None else bars
    return total


def plan_chunks(source: str, pieces: int = 100) -> list[Chunk]:
    """Split ``source`` into about ``pieces`` submissions that keep line numbers."""
    lines = source.splitlines(keepends=True)
    step = max(1, estimate_bars(source) // pieces)
    chunks: list[Chunk] = []
    start = 0  # index of the first line of the pending chunk
    pending = 0

    def flush(end: int) -> None:
        nonlocal start, pending
        body = "".join(lines[start:end])
        if body.strip():
            chunks.append(Chunk("\n" * start + body, pending))
        start, pending = end, 0

    for index, line in enumerate(lines):
        bars = _bars(line)
        match = _ADVANCE.match(line)
        if bars is not None and bars > step and match is not None and match.group(1):
            flush(index)
            left = bars
            while left > 0:
                k = min(step, left)
                chunks.append(Chunk("\n" * index + f"advance {k}\n", k))
                left -= k
            start = index + 1
            continue
        pending += step if bars is None else bars
        if pending >= step:
            flush(index + 1)
    flush(len(lines))
    return chunks
