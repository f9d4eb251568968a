"""``Kestrel``: the SDK as blocking calls, for scripts and notebooks.

One implementation: every method is the async SDK's (:class:`~kestrel_sdk.KestrelSdk`)
run on an event loop of its own, in a background thread, through anyio's
:class:`~anyio.from_thread.BlockingPortal`. So it works in a plain script and inside
Jupyter, whose own loop is already running in the calling thread (``asyncio.run`` or
``anyio.run`` would refuse there). The thread is a daemon and the facade closes itself
(its transport, then its loop) on :meth:`Kestrel.close`, on leaving ``with``, when it is
garbage-collected, or at interpreter exit.

Grades, proofs and blotters come back as views (:mod:`kestrel_sdk.results`) that render
as HTML in Jupyter and give their session as pandas or polars frames.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, overload

import anyio
from anyio.from_thread import BlockingPortal
from kestrel_protocol import (
    Catalog,
    Delivery,
    GradeResult,
    History,
    KestrelError,
    NewsPage,
    Proof,
    RefusalCode,
    Scenario,
    SealedScenario,
    SessionRecord,
    SessionResponse,
    VerificationReport,
)
from kestrel_protocol.ports import Transport

from .client import KestrelSdk, KestrelSession, create_sdk
from .report.collect import SessionSources, grade_sources, proof_sources
from .results import BlotterView, GradeView, ProofView
from .transports import local_transport

__all__ = ["Kestrel", "SyncSession"]

T = TypeVar("T")


class _Loop:
    """An event loop in a daemon thread, reached through a blocking portal."""

    def __init__(self) -> None:
        ready = threading.Event()
        found: list[BlockingPortal] = []

        async def serve() -> None:
            async with BlockingPortal() as portal:
                found.append(portal)
                ready.set()
                await portal.sleep_until_stopped()

        self.thread = threading.Thread(
            target=anyio.run, args=(serve,), name="kestrel-sync", daemon=True
        )
        self.thread.start()
        ready.wait()
        self.portal = found[0]

    def stop(self) -> None:
        self.portal.call(self.portal.stop)
        self.thread.join()


def _shut(loop: _Loop, sdk: KestrelSdk) -> None:
    """Close the transport on its loop, then stop the loop (at most once)."""
    if not loop.thread.is_alive():
        return
    try:
        loop.portal.call(sdk.aclose)
    finally:
        loop.stop()


class Kestrel:
    """The SDK as blocking calls: ``Kestrel()`` runs the runtime in-process
    (``local_transport(home=…, store=…, …)``); ``Kestrel(remote_transport(url, token))``
    trades through a door. ``sdk`` is the async SDK underneath, for anything not here.
    """

    def __init__(
        self,
        transport: Transport | None = None,
        *,
        home: str | Path | None = None,
        store: str | None = None,
        catalog_paths: list[str | Path] | None = None,
    ) -> None:
        self._loop = _Loop()

        def build() -> KestrelSdk:
            if transport is not None:
                return create_sdk(transport)
            return create_sdk(local_transport(home, catalog_paths, store=store))

        try:
            self.sdk: KestrelSdk = self._loop.portal.call(build)
        except BaseException:
            self._loop.stop()
            raise
        self._closer = weakref.finalize(self, _shut, self._loop, self.sdk)

    def run(self, call: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        """Run any coroutine function on the facade's loop and wait for its result
        (``k.run(k.sdk.call, "tool", …)``)."""
        if not self._closer.alive:
            raise RuntimeError(
                "this Kestrel is closed: make calls (and frames of its grades) before close()"
            )
        return self._loop.portal.call(partial(call, *args, **kwargs))

    def close(self) -> None:
        """Close the transport and stop the facade's loop (idempotent)."""
        self._closer()

    def __enter__(self) -> Kestrel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def catalog(self) -> Catalog:
        return self.run(self.sdk.catalog)

    def scenario(self, scenario_id: str) -> Scenario | SealedScenario:
        return self.run(self.sdk.scenario, scenario_id)

    def tape(self, scenario_id: str) -> str:
        """The scenario's tape as canonical CSV text."""
        return self.run(self.sdk.tape, scenario_id)

    def open(self, scenario: str, label: str | None = None) -> SyncSession:
        """Open (or idempotently resume) a session on ``scenario``; an open gated by a
        payment is refused (use ``sdk.open_session`` with a payment)."""
        opened = self.run(self.sdk.open_session, scenario, label)
        if opened.session is None:
            raise KestrelError(
                RefusalCode.PAYMENT_INVALID,
                f"opening a session on {scenario!r} is gated by a payment offer: "
                "pay through sdk.open_session(scenario, payment=…)",
                {"scenario": scenario},
            )
        return SyncSession(self, opened.session)

    def session(self, session_id: str) -> SyncSession:
        """A handle on an existing session by id (no round trip)."""
        return SyncSession(self, self.sdk.session(session_id))

    def _title(self, scenario_id: str) -> str | None:
        try:
            return self.scenario(scenario_id).title
        except KestrelError:
            return None

    def grade(self, session: str | SyncSession) -> GradeView:
        """Grade the session (waiting until the grade is done)."""
        session_id = session if isinstance(session, str) else session.id
        grade = self.run(self.sdk.grade_until_done, session_id)
        return self.view(grade)

    def proof(self, session: str | SyncSession, embed_tape: bool = False) -> ProofView:
        """The session's proof (grading it first if need be), verifiable anywhere."""
        session_id = session if isinstance(session, str) else session.id
        return self.view(self.run(self.sdk.proof, session_id, embed_tape))

    def verify(self, grade: GradeResult | GradeView | ProofView) -> VerificationReport:
        """Re-derive every root of the grade by replay."""
        found = grade if isinstance(grade, GradeResult) else grade.grade
        return self.run(self.sdk.verify, found)

    @overload
    def view(self, subject: Proof) -> ProofView: ...

    @overload
    def view(self, subject: GradeResult) -> GradeView: ...

    def view(self, subject: GradeResult | Proof) -> GradeView | ProofView:
        """A grade or proof (read from a file, say) as a :class:`GradeView` or
        :class:`ProofView` whose frames are fetched through this facade."""
        if isinstance(subject, Proof):
            proof = subject
            embedded = proof.embedded.scenario.title if proof.embedded is not None else None
            return ProofView(
                proof,
                partial(self._sources, proof_sources, proof),
                embedded or self._title(proof.scenario.id),
            )
        return GradeView(
            subject,
            partial(self._sources, grade_sources, subject),
            self._title(subject.scenario.id),
        )

    def _sources(
        self,
        fetch: Callable[[KestrelSdk, Any], Awaitable[SessionSources]],
        subject: GradeResult | Proof,
    ) -> SessionSources:
        return self.run(fetch, self.sdk, subject)


class SyncSession:
    """One open session, as blocking calls (the async handle is ``.session``)."""

    def __init__(self, kestrel: Kestrel, session: KestrelSession) -> None:
        self._kestrel = kestrel
        self.session = session
        self.id = session.id

    def __repr__(self) -> str:
        return f"SyncSession({self.id!r})"

    def submit(self, source: str, wait: float | None = None) -> SessionResponse:
        """Apply Kestrel source atomically; refused as a whole on any error diagnostic.
        On a forward scenario, ``wait`` seconds are waited for a bar not yet published."""
        return self._kestrel.run(self.session.submit, source, wait)

    def frame(self) -> Delivery:
        """The latest frame and its root."""
        return self._kestrel.run(self.session.frame)

    def history(self, bars: int, symbol: str | None = None) -> History:
        """The last ``bars`` bars up to and including the clock bar (never after it)."""
        return self._kestrel.run(self.session.history, bars, symbol)

    def news(
        self, limit: int = 20, before: str | None = None, symbol: str | None = None
    ) -> NewsPage:
        """News items visible at the clock, whole, oldest first (never one after it)."""
        return self._kestrel.run(self.session.news, limit, before, symbol)

    def blotter(self) -> BlotterView:
        """Every order and fill so far (``.blotter``), rendered as HTML in Jupyter."""
        return BlotterView(self._kestrel.run(self.session.blotter))

    def close(self) -> SessionRecord:
        """Close the session; the record is stored as an artifact."""
        return self._kestrel.run(self.session.close)

    def grade(self) -> GradeView:
        return self._kestrel.grade(self.id)

    def proof(self, embed_tape: bool = False) -> ProofView:
        return self._kestrel.proof(self.id, embed_tape)
