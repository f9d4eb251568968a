"""The SDK surface of docs/spec.md §7: ``create_sdk(transport)`` and ``KestrelSession``.

The client adds no semantics: every call is one ``transport.invoke(tool, arguments)``
of the tool whose runtime method it is named after (``sdk.submit`` runs the tool that
runs ``submit``), its arguments checked by that tool's model, and every result is the
protocol object the runtime produced. ``sdk.call(name, **arguments)`` runs any tool
of the surface by name, so a tool added to the surface is callable at once. The typed
methods below are written by hand where a Python caller is better served than by the
tool's arguments (a handle for a session, a tape as text); every other tool's is
generated into :mod:`.tool_methods` (``python -m kestrel_sdk.generate``), and
``tests/test_surface.py`` checks that each tool has one taking its arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

import anyio
from kestrel_protocol import (
    Artifact,
    Blotter,
    Catalog,
    Delivery,
    GradeResult,
    History,
    NewsPage,
    Offer,
    OperationResumption,
    Payment,
    Proof,
    ProtocolModel,
    Scenario,
    SealedScenario,
    SessionList,
    SessionOpened,
    SessionRecord,
    SessionResponse,
    TapeText,
    ValidationReport,
    VerificationReport,
    Wire,
)
from kestrel_protocol.ports import Transport
from kestrel_protocol.surface import SURFACE, Surface, Tool

from .tool_methods import SdkToolMethods, SessionToolMethods

__all__ = ["Gated", "KestrelSdk", "KestrelSession", "create_sdk"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Gated(Generic[T]):
    """An open that either went through (``session``) or is gated by an offer (``payment``)."""

    gated: bool
    session: T | None = None
    payment: Offer | None = None


class KestrelSession(SessionToolMethods):
    """A handle on one open session; its ``id`` is the durable, deterministic handle."""

    def __init__(self, sdk: KestrelSdk, session_id: str) -> None:
        self._sdk = sdk
        self.id = session_id

    def __repr__(self) -> str:
        return f"KestrelSession({self.id!r})"

    async def run(self, method: str, **arguments: Any) -> ProtocolModel:
        """Run the tool whose runtime method is ``method`` on this session."""
        return await self._sdk.run(method, session_id=self.id, **arguments)

    async def submit(self, source: str, wait: float | None = None) -> SessionResponse:
        """Apply Kestrel source atomically; refused as a whole on any error diagnostic.
        On a forward scenario, ``wait`` seconds (at most 300) are waited for a bar not yet
        published before ``BAR_NOT_PUBLISHED``."""
        sdk = self._sdk  # the step path: one call less than ``run``'s keywords
        fields = {"session_id": self.id, "source": source, "wait": wait}
        found = await sdk._invoke(sdk.surface.projecting("submit"), fields)
        return cast(SessionResponse, found)

    async def frame(self) -> Delivery:
        """The latest frame and its root."""
        return cast(Delivery, await self._sdk.run("frame", session_id=self.id))

    async def history(self, bars: int, symbol: str | None = None) -> History:
        """The last ``bars`` bars (1-1,000) up to and including the clock bar, oldest
        first; every symbol, or ``symbol`` alone. Never a bar after the clock."""
        found = await self._sdk.run("history", session_id=self.id, bars=bars, symbol=symbol)
        return cast(History, found)

    async def news(
        self, limit: int = 20, before: str | None = None, symbol: str | None = None
    ) -> NewsPage:
        """Up to ``limit`` news items visible at the clock, oldest first, whole; older
        than item ``before`` (a page's ``next_before``) if given. Never one after it."""
        found = await self._sdk.run(
            "news", session_id=self.id, limit=limit, before=before, symbol=symbol
        )
        return cast(NewsPage, found)

    async def blotter(self) -> Blotter:
        """Every order and fill so far."""
        return cast(Blotter, await self._sdk.run("blotter", session_id=self.id))

    async def close(self) -> SessionRecord:
        """Close the session; the record is stored as an artifact."""
        return cast(SessionRecord, await self._sdk.run("close", session_id=self.id))


class KestrelSdk(SdkToolMethods):
    """The SDK over one transport (local or remote), for the tools of ``surface``."""

    def __init__(self, transport: Transport, surface: Surface = SURFACE) -> None:
        self.transport = transport
        self.surface = surface

    async def run(self, method: str, **arguments: Any) -> ProtocolModel:
        """Run the tool whose runtime method is ``method`` with ``arguments`` (by field
        name; ``None`` is left out), checked by its model before the transport sees them."""
        return await self._invoke(self.surface.projecting(method), arguments)

    async def call(self, name: str, **arguments: Any) -> ProtocolModel:
        """Run the surface's tool called ``name`` with ``arguments`` (by field name):
        any tool, the ones without a typed method below included."""
        return await self._invoke(self.surface.tool(name), arguments)

    async def _invoke(self, tool: Tool, arguments: Mapping[str, Any]) -> ProtocolModel:
        """Run ``tool`` (one of the surface's) with ``arguments`` (by field name; ``None``
        is left out), checked by its model before the transport sees them: what every
        method of the SDK and its sessions calls. The object answered is made here."""
        found = await self.transport.invoke(tool, tool.bind(arguments))
        return found.model() if isinstance(found, Wire) else found

    async def catalog(self) -> Catalog:
        return cast(Catalog, await self.run("catalog"))

    async def scenario(self, scenario_id: str) -> Scenario | SealedScenario:
        return cast(Scenario | SealedScenario, await self.run("scenario", scenario=scenario_id))

    async def tape(self, scenario_id: str) -> str:
        """The scenario's tape as canonical CSV text."""
        return cast(TapeText, await self.run("tape", scenario=scenario_id)).text

    async def validate(self, source: str, scenario: str | None = None) -> ValidationReport:
        found = await self.run("validate", source=source, scenario=scenario)
        return cast(ValidationReport, found)

    async def open_session(
        self, scenario: str, label: str | None = None, payment: Payment | None = None
    ) -> Gated[KestrelSession]:
        """Open (or idempotently resume) a session; a gated open carries the offer as data."""
        paid = None if payment is None else payment.to_json()
        found = await self.run("open_session", scenario=scenario, label=label, payment=paid)
        opened = cast(SessionOpened, found)
        if opened.gated:
            return Gated(gated=True, payment=opened.payment)
        assert opened.session_id is not None
        return Gated(gated=False, session=KestrelSession(self, opened.session_id))

    async def sessions(self, cursor: str | None = None) -> SessionList:
        """A page of your sessions, oldest first; its ``next_cursor`` asks for the next."""
        return cast(SessionList, await self.run("sessions", cursor=cursor))

    def session(self, session_id: str) -> KestrelSession:
        """A handle on an existing session by id (no round trip)."""
        return KestrelSession(self, session_id)

    async def grade(self, session_id: str) -> GradeResult | OperationResumption:
        found = await self.run("grade", session_id=session_id)
        return cast(GradeResult | OperationResumption, found)

    async def resume(
        self, resumption: OperationResumption | str
    ) -> GradeResult | OperationResumption:
        token = resumption if isinstance(resumption, str) else resumption.token
        return cast(GradeResult | OperationResumption, await self.run("resume", token=token))

    async def grade_until_done(
        self,
        session_id: str,
        on_progress: Callable[[OperationResumption], None] | None = None,
    ) -> GradeResult:
        """Grade, resuming (after each ``resumeAfterMs``) until the grade is done.

        ``on_progress`` sees every :class:`OperationResumption` on the way (e.g. to draw
        a progress bar).
        """
        result = await self.grade(session_id)
        while isinstance(result, OperationResumption):
            if on_progress is not None:
                on_progress(result)
            await anyio.sleep(result.resume_after_ms / 1000)
            result = await self.resume(result)
        return result

    async def artifact(self, root: str) -> dict[str, Any]:
        """Any stored object, verbatim."""
        return cast(Artifact, await self.run("artifact", root=root)).to_json()

    async def verify(self, grade: GradeResult) -> VerificationReport:
        return cast(VerificationReport, await self.run("verify", grade=grade))

    async def proof(self, session_id: str, embed_tape: bool = False) -> Proof:
        """The session's proof (grading it first if need be): the grade with its record,
        pentads, blotter and scenario reference, verifiable on any machine with
        ``kestrel verify``. ``embed_tape`` carries the scenario and its tape too, which
        a verifier whose catalog lacks the scenario (a user scenario) needs."""
        found = await self.run("proof", session_id=session_id, embed_tape=embed_tape)
        return cast(Proof, found)

    async def proof_of_grade(self, grade_root: str) -> Proof:
        """The proof of the session graded ``grade_root`` (without the tape); over a door,
        only of your own sessions (another's grade is ``UNKNOWN_ARTIFACT``)."""
        return cast(Proof, await self.run("proof_of_grade", grade_root=grade_root))

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def __aenter__(self) -> KestrelSdk:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def create_sdk(transport: Transport, surface: Surface = SURFACE) -> KestrelSdk:
    """Build the SDK over a transport choice (for the tools of ``surface``)."""
    return KestrelSdk(transport, surface)
