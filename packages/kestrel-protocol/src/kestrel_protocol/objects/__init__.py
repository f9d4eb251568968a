"""Every protocol object of docs/spec.md §6 as an immutable, lossless pydantic model."""

from __future__ import annotations

from .attestation import Envelope, EnvelopeSignature
from .blotter import Blotter, BlotterFill, BlotterOrder
from .catalog import (
    AccountTerms,
    Catalog,
    CatalogScenario,
    FeeTerms,
    FillTerms,
    ForwardInfo,
    Instrument,
    Scenario,
    SealedScenario,
    SealedTapeInfo,
    StatementKind,
    TapeInfo,
)
from .grade import (
    Conformance,
    ConformanceCheck,
    GradeResult,
    Metrics,
    Mismatch,
    OperationProgress,
    OperationResumption,
    Provenance,
    VerificationReport,
)
from .history import History, HistoryBar
from .listing import SessionList, SessionListEntry
from .news import NewsPage
from .news_item import NewsItem
from .offer import Offer
from .proof import EmbeddedScenario, Proof, ProofScenario
from .reads import Artifact, TapeText
from .record import Lookahead, LookaheadRead, SessionRecord
from .session import (
    AccountState,
    Clock,
    Delivery,
    FrameBar,
    FrameEvent,
    FrameOrder,
    Payment,
    Pentad,
    PentadBody,
    Position,
    ScenarioRef,
    SessionFrame,
    SessionOpened,
    SessionResponse,
    StandDown,
)
from .validation import Diagnostic, ValidationReport

__all__ = [
    "AccountState",
    "AccountTerms",
    "Artifact",
    "Blotter",
    "BlotterFill",
    "BlotterOrder",
    "Catalog",
    "CatalogScenario",
    "Clock",
    "Conformance",
    "ConformanceCheck",
    "Delivery",
    "Diagnostic",
    "EmbeddedScenario",
    "Envelope",
    "EnvelopeSignature",
    "FeeTerms",
    "FillTerms",
    "ForwardInfo",
    "FrameBar",
    "FrameEvent",
    "FrameOrder",
    "GradeResult",
    "History",
    "HistoryBar",
    "Instrument",
    "Lookahead",
    "LookaheadRead",
    "Metrics",
    "Mismatch",
    "NewsItem",
    "NewsPage",
    "Offer",
    "OperationProgress",
    "OperationResumption",
    "Payment",
    "Pentad",
    "PentadBody",
    "Position",
    "Proof",
    "ProofScenario",
    "Provenance",
    "Scenario",
    "ScenarioRef",
    "SealedScenario",
    "SealedTapeInfo",
    "SessionFrame",
    "SessionList",
    "SessionListEntry",
    "SessionOpened",
    "SessionRecord",
    "SessionResponse",
    "StandDown",
    "StatementKind",
    "TapeInfo",
    "TapeText",
    "ValidationReport",
    "VerificationReport",
]
