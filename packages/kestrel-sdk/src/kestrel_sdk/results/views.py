"""What the synchronous facade hands back: a grade, a proof or a blotter that renders as
HTML in Jupyter and gives its session as frames.

A view holds the protocol object (``.grade``, ``.proof``, ``.blotter``, unchanged: its
root is the one the runtime made) and, for grades and proofs, a way to fetch the
session's sources; they are fetched once, on the first ``ledger()`` / ``to_pandas()`` /
``to_polars()`` (a sealed scenario's tape is not served, so a grade on it has no frames
until its window is public: the refusal says so then, not when grading).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kestrel_protocol import Blotter, GradeResult, Metrics, Proof

from ..report.collect import SessionSources
from .html import blotter_html, grade_html, proof_html
from .ledger import Ledger, ledger_of
from .tables import Frames, frame_columns, to_pandas, to_polars

__all__ = ["BlotterView", "GradeView", "ProofView"]


class _Graded:
    """A graded session's frames, from sources fetched on first use."""

    def __init__(self, grade: GradeResult, sources: Callable[[], SessionSources]) -> None:
        self.grade = grade
        self._sources = sources
        self._ledger: Ledger | None = None

    @property
    def root(self) -> str:
        return self.grade.root

    @property
    def passed(self) -> bool:
        return self.grade.passed

    @property
    def session(self) -> str:
        return self.grade.session

    @property
    def metrics(self) -> Metrics:
        return self.grade.metrics

    def ledger(self) -> Ledger:
        """Equity per bar, fills and round trips, exact (Decimal and Fraction)."""
        if self._ledger is None:
            self._ledger = ledger_of(self._sources())
        return self._ledger

    def to_pandas(self) -> Frames[Any]:
        """``equity``, ``fills``, ``trades`` and ``metrics`` as pandas DataFrames
        (needs the ``pandas`` extra)."""
        return to_pandas(frame_columns(self.grade, self.ledger()))

    def to_polars(self) -> Frames[Any]:
        """The same as polars DataFrames (needs the ``polars`` extra)."""
        return to_polars(frame_columns(self.grade, self.ledger()))


class GradeView(_Graded):
    """A grade (``.grade``) that renders as HTML and gives its session as frames."""

    def __init__(
        self,
        grade: GradeResult,
        sources: Callable[[], SessionSources],
        title: str | None = None,
    ) -> None:
        super().__init__(grade, sources)
        self.title = title

    def __repr__(self) -> str:
        verdict = "passed" if self.grade.passed else "failed"
        return f"GradeView({self.grade.session!r}, {verdict}, {self.grade.root!r})"

    def _repr_html_(self) -> str:
        return grade_html(self.grade, self.title)


class ProofView(_Graded):
    """A proof (``.proof``; its grade is ``.grade``) that renders as HTML and gives its
    session as frames."""

    def __init__(
        self, proof: Proof, sources: Callable[[], SessionSources], title: str | None = None
    ) -> None:
        super().__init__(proof.grade, sources)
        self.proof = proof
        self.title = title

    def __repr__(self) -> str:
        return f"ProofView({self.grade.session!r}, {self.proof.root!r})"

    def _repr_html_(self) -> str:
        return proof_html(self.proof, self.title)


class BlotterView:
    """A blotter (``.blotter``) that renders as HTML."""

    def __init__(self, blotter: Blotter) -> None:
        self.blotter = blotter

    def __repr__(self) -> str:
        b = self.blotter
        return f"BlotterView({b.session!r}, {len(b.orders)} orders, {len(b.fills)} fills)"

    def _repr_html_(self) -> str:
        return blotter_html(self.blotter)
