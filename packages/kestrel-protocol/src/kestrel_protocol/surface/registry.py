"""THE declaration of Kestrel's tool and resource surface: the one place a tool is named.

Every face is generated from :data:`SURFACE`: stdio MCP (``kestrel_mcp``), the door's
``/mcp`` in both eras, its ``/v1`` routes and their OpenAPI document, the scope table,
and both SDK transports (``local_transport`` runs each tool's :class:`~.declare.Binding`,
``remote_transport`` its :class:`~.declare.Route`). Adding a tool is its arguments model,
one more :class:`~.declare.Tool` in :data:`TOOLS` and its runtime method (see
``CONTRIBUTING.md``); deleting one removes it from every face.

The resources (:mod:`.resources`) and what an agent is told on connecting
(:mod:`.instructions`) name each tool by the method it runs, as the prompts do
(:class:`.tool_names.ToolNames`): only this module spells a tool's name.

Names use underscores because Claude Desktop and claude.ai check every tool name
against ``^[a-zA-Z0-9_-]{1,64}$`` and withhold the whole server when one fails; the
seed's dotted spellings stay accepted by ``tools/call`` as unlisted aliases.
"""

from __future__ import annotations

from typing import Any, Final

from ..objects.blotter import Blotter
from ..objects.catalog import Catalog, Scenario, SealedScenario
from ..objects.grade import GradeResult, OperationResumption, VerificationReport
from ..objects.history import History
from ..objects.listing import SessionList
from ..objects.news import NewsPage
from ..objects.proof import Proof
from ..objects.reads import Artifact, TapeText
from ..objects.record import SessionRecord
from ..objects.session import Delivery, SessionOpened, SessionResponse
from ..objects.validation import ValidationReport
from .arguments import (
    ArtifactArgs,
    HistoryArgs,
    NewsArgs,
    NoArgs,
    OpenArgs,
    ProofArgs,
    ProofOfGradeArgs,
    ResumeArgs,
    ScenarioArgs,
    SessionArgs,
    SessionListArgs,
    SubmitArgs,
    ValidateArgs,
    VerifyArgs,
)
from .briefs import prompts
from .declare import Binding, Route, Tool
from .instructions import instructions
from .resource import Resource
from .resources import resources
from .scopes import SCOPE_GRADE, SCOPE_READ, SCOPE_TRADE
from .surface import Surface
from .tool_names import ToolNames

__all__ = ["INSTRUCTIONS", "RESOURCES", "SURFACE", "TOOLS"]

_SESSION_PATH: Final = {"sessionId": "id"}
_GRADE_OR_OPERATION: Final = (
    "A kestrel.grade, or a kestrel.operation when grading is still running "
    "(call kestrel_operation_resume with its token)."
)


def _tape(text: str, a: ScenarioArgs) -> TapeText:
    return TapeText(scenario=a.scenario, text=text)


def _artifact(data: dict[str, Any], a: ArtifactArgs) -> Artifact:
    return Artifact.parse(data)


def _tape_text(data: Any) -> str:
    return str(data["text"])


TOOLS: Final[tuple[Tool, ...]] = (
    Tool(
        name="kestrel_catalog",
        title="Kestrel catalog",
        description=(
            "List the scenarios you can open a session on (id, symbols, interval, bars) and "
            "the four Kestrel statement kinds with their syntax and an example."
        ),
        arguments=NoArgs,
        runs=Binding("catalog", caller=None),
        results=(Catalog,),
        scope=SCOPE_READ,
        read_only=True,
        route=Route("GET", "/v1/catalog"),
    ),
    Tool(
        name="kestrel_scenario",
        title="Kestrel scenario",
        description=(
            "A scenario's full description (kestrel.scenario): instruments, tape, account, "
            "fees and fill terms; a sealed scenario's is kestrel.sealed-scenario (no "
            "description, no tape end)."
        ),
        arguments=ScenarioArgs,
        runs=Binding("scenario"),
        results=(Scenario, SealedScenario),
        result_description="A kestrel.scenario, or a kestrel.sealed-scenario for a sealed one.",
        scope=SCOPE_READ,
        read_only=True,
        refusals=("UNKNOWN_SCENARIO",),
        route=Route("GET", "/v1/catalog/scenarios/{sid}", {"scenario": "sid"}),
        listed=False,
    ),
    Tool(
        name="kestrel_tape",
        title="Kestrel scenario tape",
        description=(
            "A scenario's tape as canonical CSV (time,symbol,open,high,low,close,volume): "
            "every bar, the future included. Reading the tape of a scenario while you trade "
            "it fails the grade's no-lookahead check; use kestrel_session_history. A sealed "
            "scenario's tape is refused (SCENARIO_SEALED)."
        ),
        arguments=ScenarioArgs,
        runs=Binding("tape", result=_tape),
        results=(TapeText,),
        scope=SCOPE_READ,
        read_only=True,
        refusals=("UNKNOWN_SCENARIO", "SCENARIO_SEALED"),
        route=Route(
            "GET", "/v1/catalog/scenarios/{sid}/tape", {"scenario": "sid"}, media="text/csv"
        ),
        listed=False,
        text=_tape_text,
    ),
    Tool(
        name="kestrel_validate",
        title="Validate Kestrel source",
        description=(
            "Check Kestrel source without applying it. Returns a kestrel.validation report with "
            "line/column diagnostics (K1xx syntax; with a scenario also K2xx symbol/tick/lot)."
        ),
        arguments=ValidateArgs,
        runs=Binding("validate", caller=None),
        results=(ValidationReport,),
        scope=SCOPE_READ,
        read_only=True,
        refusals=("UNKNOWN_SCENARIO", "LIMIT_EXCEEDED"),
        route=Route("POST", "/v1/validate", body="source"),
    ),
    Tool(
        name="kestrel_session_open",
        title="Open a paper-trading session",
        description=(
            "Open a session on a scenario; bar 0 is complete. Returns {gated:false, sessionId} "
            "(pass sessionId to every session tool) or {gated:true, payment: offer} when the "
            "open needs payment (retry with payment:{offerId, voucher}). The label of an open "
            "session resumes it."
        ),
        arguments=OpenArgs,
        runs=Binding("open_session"),
        results=(SessionOpened,),
        scope=SCOPE_TRADE,
        read_only=False,
        idempotent=False,
        refusals=("UNKNOWN_SCENARIO", "SESSION_CLOSED", "PAYMENT_INVALID"),
        effects=("open",),
        route=Route("POST", "/v1/sessions", body="json"),
    ),
    Tool(
        name="kestrel_session_submit",
        title="Submit Kestrel statements",
        description=(
            "Apply Kestrel source to a session atomically (all statements or none). Returns "
            "the submit response: the pentad that binds it and the new frame (clock, marks, "
            "account, positions, open orders, events). disposition 'stood-down' means the "
            "session stopped (stand down, max drawdown or end of tape)."
        ),
        arguments=SubmitArgs,
        runs=Binding("submit", steps=True),
        results=(SessionResponse,),
        scope=SCOPE_TRADE,
        read_only=False,
        idempotent=False,
        refusals=(
            "UNKNOWN_SESSION",
            "SESSION_CLOSED",
            "SESSION_STOOD_DOWN",
            "INVALID_SOURCE",
            "LIMIT_EXCEEDED",
            "BAR_NOT_PUBLISHED",
        ),
        # A stand-down ends trading but does not close the session (no record is
        # stored; kestrel_session_close and kestrel_grade still ask their approval).
        effects=("trade",),
        route=Route("POST", "/v1/sessions/{id}/submit", _SESSION_PATH, body="source"),
    ),
    Tool(
        name="kestrel_session_frame",
        title="Current frame",
        description="The session's latest frame and its root, without changing anything.",
        arguments=SessionArgs,
        runs=Binding("frame"),
        results=(Delivery,),
        scope=SCOPE_READ,
        read_only=True,
        refusals=("UNKNOWN_SESSION",),
        route=Route("GET", "/v1/sessions/{id}/frame", _SESSION_PATH),
    ),
    Tool(
        name="kestrel_session_history",
        title="Bars up to the clock",
        description=(
            "The last N bars of the session's tape (time, symbol, open, high, low, close, "
            "volume) up to and including the clock bar, oldest first; never a bar after the "
            "clock. Use this, not the scenario's tape, for history while you trade."
        ),
        arguments=HistoryArgs,
        runs=Binding("history"),
        results=(History,),
        scope=SCOPE_READ,
        read_only=True,
        refusals=("UNKNOWN_SESSION", "INVALID_ARGUMENT"),
        route=Route(
            "GET",
            "/v1/sessions/{id}/history",
            _SESSION_PATH,
            query={"bars": "bars", "symbol": "symbol"},
        ),
    ),
    Tool(
        name="kestrel_session_news",
        title="News up to the clock",
        description=(
            "The scenario's news items (time, symbol, headline, body) visible at the "
            "session's clock, oldest first and ending with the newest: an item is visible "
            "once its time is at or before the clock bar's time, never before. Frames show "
            "only the newest few, bodies cut; this gives whole bodies and older items "
            "(pass nextBefore back as before). A scenario without news has none."
        ),
        arguments=NewsArgs,
        runs=Binding("news"),
        results=(NewsPage,),
        scope=SCOPE_READ,
        read_only=True,
        refusals=("UNKNOWN_SESSION", "INVALID_ARGUMENT"),
        route=Route(
            "GET",
            "/v1/sessions/{id}/news",
            _SESSION_PATH,
            query={"limit": "limit", "before": "before", "symbol": "symbol"},
        ),
    ),
    Tool(
        name="kestrel_session_list",
        title="Your sessions",
        description=(
            "Your sessions, oldest first: each one's sessionId, scenario, label, status, clock "
            "and grade root once graded (a sealed scenario's clock without the bars "
            "remaining). A page holds up to 100; pass nextCursor back as cursor for the next."
        ),
        arguments=SessionListArgs,
        runs=Binding("sessions"),
        results=(SessionList,),
        scope=SCOPE_READ,
        read_only=True,
        refusals=("INVALID_ARGUMENT",),
        route=Route("GET", "/v1/sessions", query={"cursor": "cursor"}),
    ),
    Tool(
        name="kestrel_session_blotter",
        title="Blotter",
        description="Every order (open and closed) and every fill of the session so far.",
        arguments=SessionArgs,
        runs=Binding("blotter"),
        results=(Blotter,),
        scope=SCOPE_READ,
        read_only=True,
        refusals=("UNKNOWN_SESSION",),
        route=Route("GET", "/v1/sessions/{id}/blotter", _SESSION_PATH),
    ),
    Tool(
        name="kestrel_session_close",
        title="Close a session",
        description=(
            "Close the session for good (no more submits) and store its record; returns the "
            "kestrel.session record (pentad roots, head frame root, blotter root)."
        ),
        arguments=SessionArgs,
        runs=Binding("close"),
        results=(SessionRecord,),
        scope=SCOPE_TRADE,
        read_only=False,
        destructive=True,
        idempotent=False,
        refusals=("UNKNOWN_SESSION", "SESSION_CLOSED"),
        effects=("close",),
        route=Route("POST", "/v1/sessions/{id}/close", _SESSION_PATH),
    ),
    Tool(
        name="kestrel_grade",
        title="Grade a session",
        description=(
            "Grade a session: metrics (pnl, return, max drawdown, sharpe, fees, exposure, "
            "turnover) and conformance checks, verifiable from its artifacts. A session still "
            "open is closed first, for good (no more submits). A long grade returns a "
            "kestrel.operation; continue it with kestrel_operation_resume."
        ),
        arguments=SessionArgs,
        runs=Binding("grade"),
        results=(GradeResult, OperationResumption),
        result_description=_GRADE_OR_OPERATION,
        scope=SCOPE_GRADE,
        read_only=False,
        destructive=True,
        idempotent=True,
        refusals=("UNKNOWN_SESSION",),
        effects=("grade", "close"),  # a session still open is closed first
        route=Route("POST", "/v1/sessions/{id}/grade", _SESSION_PATH),
    ),
    Tool(
        name="kestrel_operation_resume",
        title="Resume an operation",
        description=(
            "Continue a long operation by its token (wait resumeAfterMs first). Returns the "
            "finished result or another kestrel.operation."
        ),
        arguments=ResumeArgs,
        runs=Binding("resume"),
        results=(GradeResult, OperationResumption),
        result_description=_GRADE_OR_OPERATION,
        scope=SCOPE_GRADE,
        read_only=False,
        idempotent=True,
        refusals=("UNKNOWN_OPERATION",),
        # None of its own: it continues, by its token, a grade kestrel_grade or
        # kestrel_proof started (and any approval they need was asked then).
        route=Route("POST", "/v1/operations/resume", body="json"),
    ),
    Tool(
        name="kestrel_artifact",
        title="Kestrel artifact",
        description=(
            "Any stored object (session record, pentad, blotter, grade) by its root, "
            "sha256:<hex>, verbatim."
        ),
        arguments=ArtifactArgs,
        runs=Binding("artifact", caller="reader", result=_artifact),
        results=(Artifact,),
        scope=SCOPE_READ,
        read_only=True,
        refusals=("UNKNOWN_ARTIFACT",),
        route=Route("GET", "/v1/artifacts/{root}", {"root": "root"}),
        listed=False,
    ),
    Tool(
        name="kestrel_verify",
        title="Verify a grade",
        description="Replay a grade's artifacts and report the first mismatch, if any.",
        arguments=VerifyArgs,
        runs=Binding("verify", caller="reader"),
        results=(VerificationReport,),
        scope=SCOPE_READ,
        read_only=True,
        refusals=("UNKNOWN_ARTIFACT",),
        route=Route("POST", "/v1/verify", body="json"),
        listed=False,
    ),
    Tool(
        name="kestrel_proof",
        title="Proof of a session",
        description=(
            "A session's proof (kestrel.proof): its grade with the session record, every "
            "pentad, the head frame, the blotter and the scenario reference, bound by one "
            "root. `kestrel verify FILE` checks it on any machine, with an empty home and no "
            "network. Stored artifacts are private to you: a proof is how a grade is shared. "
            "embedTape:true embeds the scenario and its tape (needed for a scenario the "
            "verifier's catalog does not ship). A session not yet graded is graded first "
            "(and so closed for good)."
        ),
        arguments=ProofArgs,
        runs=Binding("proof"),
        results=(Proof,),
        # It may run the grader and close the session, as kestrel_grade does.
        scope=SCOPE_GRADE,
        read_only=False,
        destructive=True,
        idempotent=True,
        refusals=("UNKNOWN_SESSION",),
        effects=("grade", "close"),  # as kestrel_grade, for a session not graded yet
        route=Route(
            "GET", "/v1/sessions/{id}/proof", _SESSION_PATH, query={"embedTape": "embedTape"}
        ),
    ),
    Tool(
        name="kestrel_proof_of_grade",
        title="Proof of a grade",
        description=(
            "The proof (kestrel.proof) of one of your graded sessions, named by its grade's "
            "root; the tape is not embedded (kestrel_proof with embedTape:true embeds it)."
        ),
        arguments=ProofOfGradeArgs,
        runs=Binding("proof_of_grade", caller="reader"),
        results=(Proof,),
        # Only a graded session has a grade root: reading its proof changes nothing.
        scope=SCOPE_READ,
        read_only=True,
        refusals=("UNKNOWN_ARTIFACT",),
        route=Route("GET", "/v1/proofs/{root}", {"gradeRoot": "root"}),
        listed=False,
    ),
)

_NAMES: Final = ToolNames(TOOLS)

RESOURCES: Final[tuple[Resource, ...]] = resources(_NAMES)
"""Kestrel's resources (:mod:`.resources`), naming the tools above."""

SURFACE: Final = Surface(TOOLS, RESOURCES, prompts(TOOLS), catalog="kestrel_catalog")
"""Kestrel's surface (its tools, resources and prompts), as every face serves it."""

INSTRUCTIONS: Final = instructions(_NAMES)
"""What an agent is told about Kestrel when it connects (:mod:`.instructions`)."""
