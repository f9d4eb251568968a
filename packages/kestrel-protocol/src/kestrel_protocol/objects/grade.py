"""Grades, their verification reports, and resumable operations."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..model import DecimalStr, ProtocolModel, RootStr, SelfRooted
from .session import ScenarioRef

__all__ = [
    "AttestedTrial",
    "Conformance",
    "ConformanceCheck",
    "GradeResult",
    "Metrics",
    "Mismatch",
    "OperationProgress",
    "OperationResumption",
    "Provenance",
    "VerificationReport",
]


class Metrics(ProtocolModel):
    """Performance over the equity series and the session's round-trip trades (decimal
    strings, 8 places for ratios; ``null`` where a statistic is undefined, such as the
    win rate of a session without trades)."""

    pnl: DecimalStr
    return_: DecimalStr = Field(alias="return")
    max_drawdown: DecimalStr
    sharpe: DecimalStr
    sortino: DecimalStr | None
    calmar: DecimalStr | None
    fills: int
    fees: DecimalStr
    exposure: DecimalStr
    turnover: DecimalStr
    buy_and_hold: DecimalStr | None
    trades: int
    win_rate: DecimalStr | None
    best_trade: DecimalStr | None
    worst_trade: DecimalStr | None
    avg_trade: DecimalStr | None
    profit_factor: DecimalStr | None
    expectancy: DecimalStr | None


class ConformanceCheck(ProtocolModel):
    """One rule the session either kept or broke."""

    id: str
    passed: bool
    detail: str


class Conformance(SelfRooted):
    """The conformance checks, bound by their own root."""

    checks: list[ConformanceCheck]


class GradeResult(SelfRooted):
    """A portable grade: verifiable from the record's artifacts and the scenario alone."""

    kind: Literal["kestrel.grade"] = "kestrel.grade"
    session: str
    scenario: ScenarioRef
    record: RootStr
    head: RootStr
    metrics: Metrics
    conformance: Conformance
    passed: bool


class OperationProgress(ProtocolModel):
    """How far a long operation has come."""

    done: int
    total: int


class OperationResumption(ProtocolModel):
    """A long operation that is still running: come back after ``resumeAfterMs`` with ``token``."""

    kind: Literal["kestrel.operation"] = "kestrel.operation"
    operation: str
    state: Literal["running"] = "running"
    progress: OperationProgress
    resume_after_ms: int
    token: str


class Mismatch(ProtocolModel):
    """The first place a replay disagreed with what was presented."""

    field: str
    expected: str
    found: str


class Provenance(ProtocolModel):
    """Where the scenario a verification replayed on came from: ``catalog`` when it is
    the catalog of the verifying machine (its root matches, embedded or not),
    ``embedded`` when the proof carried it and this machine does not know it (a
    replay then proves the arithmetic on the proof's own bars, nothing about them),
    ``disguised`` when a reveal showed its tape to be exactly the disguise of a source
    (``kestrel verify --reveal``)."""

    source: Literal["catalog", "embedded", "disguised"]
    detail: str


class AttestedTrial(ProtocolModel):
    """The trial a verified statement names (``kestrel verify --trust``): its parent
    principal's pseudonym (``of``: the statement's ``trialOf``), its number among that
    parent's trials (``number``: ``trialNumber``; ``None``, not numbered) and how many
    trials the parent had minted when the door signed (``minted``: ``trialsMinted``;
    ``None``, not said)."""

    of: str
    number: int | None = None
    minted: int | None = None


class VerificationReport(ProtocolModel):
    """The outcome of verifying a grade or a proof: replayed, first mismatch named.
    ``proof`` is the presented proof's root when a proof was verified; ``provenance``
    where its scenario came from; ``attestedBy`` the issuer and key of the signed
    statement checked against the proof (``kestrel verify --trust``), and ``trial`` the
    trial that statement names (absent: none); ``attestation``
    is ``unchecked`` when the proof carries a signed statement that was not checked (no
    ``--trust``): replay verified the arithmetic, not who signed it."""

    kind: Literal["kestrel.verification"] = "kestrel.verification"
    ok: bool
    grade: str
    proof: str | None = None
    mismatch: Mismatch | None = None
    provenance: Provenance | None = None
    attested_by: str | None = None
    trial: AttestedTrial | None = None
    attestation: Literal["unchecked"] | None = None
