"""The proof: a grade with everything needed to re-derive it on any machine."""

from __future__ import annotations

from typing import ClassVar, Literal

from ..model import ProtocolModel, RootStr, SelfRooted
from .attestation import Envelope
from .blotter import Blotter
from .catalog import Scenario
from .grade import GradeResult
from .record import SessionRecord
from .session import Pentad, SessionFrame

__all__ = ["EmbeddedScenario", "Proof", "ProofScenario"]


class ProofScenario(ProtocolModel):
    """The scenario a proof was made on: its id, its root and its tape's root."""

    id: str
    root: RootStr
    tape_root: RootStr


class EmbeddedScenario(ProtocolModel):
    """A scenario carried inside a proof: the full object and its tape as canonical CSV
    text (whose root is ``scenario.tape.root``), and its news as canonical JSONL text
    (whose root is ``scenario.newsRoot``; absent for a scenario without news)."""

    scenario: Scenario
    tape: str
    news: str | None = None


class Proof(SelfRooted):
    """A portable grade: the grade, the session record, its head frame (the closed
    session's last frame, root ``record.head``), every pentad in order, the blotter and
    the scenario reference (optionally the scenario and its tape), bound by its own
    root. Verifying it needs nothing else but the scenario from a catalog, or from
    ``embedded`` when the proof carries it. ``attestation``, when a door served the
    proof, is its signed statement about the grade (see :mod:`.attestation`): outside
    the root, which it is about."""

    unrooted: ClassVar[tuple[str, ...]] = ("attestation",)

    kind: Literal["kestrel.proof"] = "kestrel.proof"
    version: int = 1
    scenario: ProofScenario
    grade: GradeResult
    record: SessionRecord
    head: SessionFrame
    pentads: list[Pentad]
    blotter: Blotter
    embedded: EmbeddedScenario | None = None
    attestation: Envelope | None = None
