"""The SDK surface of spec §7: ``create_sdk(transport)`` and ``KestrelSession``.

The client adds no semantics: every call is one transport call, and every result is
the protocol object the runtime produced.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
from kestrel_protocol import (
    Blotter,
    Catalog,
    Delivery,
    GradeResult,
    History,
    Offer,
    OperationResumption,
    Payment,
    Proof,
    Scenario,
    SealedScenario,
    SessionRecord,
    SessionResponse,
    ValidationReport,
    VerificationReport,
)
from kestrel_protocol.ports import Transport

__all__ = ["Gated", "KestrelSdk", "KestrelSession", "create_sdk"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Gated(Generic[T]):
    """An open that either went through (``session``) or is gated by an offer (``payment``)."""

    gated: bool
    session: T | None = None
    payment: Offer | None = None


class KestrelSession:
    """A handle on one open session; its ``id`` is the durable, deterministic handle."""

    def __init__(self, transport: Transport, session_id: str) -> None:
        self._transport = transport
        self.id = session_id

    def __repr__(self) -> str:
        return f"KestrelSession({self.id!r})"

    async def submit(self, source: str) -> SessionResponse:
        """Apply Kestrel source atomically; refused as a whole on any error diagnostic."""
        return await self._transport.submit(self.id, source)

    async def frame(self) -> Delivery:
        """The latest frame and its root."""
        return await self._transport.frame(self.id)

    async def history(self, bars: int, symbol: str | None = None) -> History:
        """The last ``bars`` bars (1-1,000) up to and including the clock bar, oldest
        first; every symbol, or ``symbol`` alone. Never a bar after the clock."""
        return await self._transport.history(self.id, bars, symbol)

    async def blotter(self) -> Blotter:
        """Every order and fill so far."""
        return await self._transport.blotter(self.id)

    async def close(self) -> SessionRecord:
        """Close the session; the record is stored as an artifact."""
        return await self._transport.close(self.id)


class KestrelSdk:
    """The SDK over one transport (local or remote)."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    async def catalog(self) -> Catalog:
        return await self.transport.catalog()

    async def scenario(self, scenario_id: str) -> Scenario | SealedScenario:
        return await self.transport.scenario(scenario_id)

    async def tape(self, scenario_id: str) -> str:
        """The scenario's tape as canonical CSV text."""
        return await self.transport.tape(scenario_id)

    async def validate(self, source: str, scenario: str | None = None) -> ValidationReport:
        return await self.transport.validate(source, scenario)

    async def open_session(
        self, scenario: str, label: str | None = None, payment: Payment | None = None
    ) -> Gated[KestrelSession]:
        """Open (or idempotently resume) a session; a gated open carries the offer as data."""
        opened = await self.transport.open_session(scenario, label, payment)
        if opened.gated:
            return Gated(gated=True, payment=opened.payment)
        assert opened.session_id is not None
        return Gated(gated=False, session=KestrelSession(self.transport, opened.session_id))

    def session(self, session_id: str) -> KestrelSession:
        """A handle on an existing session by id (no round trip)."""
        return KestrelSession(self.transport, session_id)

    async def grade(self, session_id: str) -> GradeResult | OperationResumption:
        return await self.transport.grade(session_id)

    async def resume(
        self, resumption: OperationResumption | str
    ) -> GradeResult | OperationResumption:
        token = resumption if isinstance(resumption, str) else resumption.token
        return await self.transport.resume(token)

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
        return await self.transport.artifact(root)

    async def verify(self, grade: GradeResult) -> VerificationReport:
        return await self.transport.verify(grade)

    async def proof(self, session_id: str, embed_tape: bool = False) -> Proof:
        """The session's proof (grading it first if need be): the grade with its record,
        pentads, blotter and scenario reference, verifiable on any machine with
        ``kestrel verify``. ``embed_tape`` carries the scenario and its tape too, which
        a verifier whose catalog lacks the scenario (a user scenario) needs."""
        return await self.transport.proof(session_id, embed_tape)

    async def proof_of_grade(self, grade_root: str) -> Proof:
        """The proof of the session graded ``grade_root`` (without the tape); over a door,
        only of your own sessions (another's grade is ``UNKNOWN_ARTIFACT``)."""
        return await self.transport.proof_of_grade(grade_root)

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def __aenter__(self) -> KestrelSdk:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def create_sdk(transport: Transport) -> KestrelSdk:
    """Build the SDK over a transport choice."""
    return KestrelSdk(transport)
