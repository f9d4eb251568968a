"""The runtime service: sessions, submissions, persistence, grades, artifacts.

``Runtime`` is what every face reaches (through ``local_transport`` in-process, through
the door over HTTP). It owns no semantics of its own: the engine decides what a
submission does; the service binds it (pentad, frame root), persists it (one
transaction per accepted submission) and serves it back. Every method takes the acting
principal; a session of another principal is ``UNKNOWN_SESSION``.

The catalog and opening a session are here; the step (:meth:`Runtime.submit`) is
:mod:`.submissions`, the sessions in memory and their replay :mod:`.live`, what the
faces read of a session (its frame, history, news, blotter) :mod:`.session_reads`, a
session's close, grade and proof :mod:`.grading`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from kestrel_protocol import (
    Blotter,
    Catalog,
    Delivery,
    GradeResult,
    History,
    NewsPage,
    OperationResumption,
    Payment,
    Proof,
    Scenario,
    SealedScenario,
    SessionList,
    SessionOpened,
    SessionRecord,
    ValidationReport,
    VerificationReport,
    Wire,
    kestrel_home,
)
from kestrel_protocol.ports import FeedWaiter, SessionGate
from kestrel_protocol.store import RuntimeStore
from kestrel_protocol.store_feed import FeedStatus

from .answered import Answered
from .artifacts import OwnedArtifacts, pruned_session, unknown_artifact
from .bounds import DEFAULT_MAX_OPEN_ORDERS
from .catalog import ServedCatalog, tape_csv
from .catalog.model import CatalogIndex, LoadedScenario
from .feed import FeedAppend, Feeds
from .grading import Grading
from .horizon import Horizons
from .lang import validate_source
from .listing import SessionListing
from .live import LiveSessions, default_max_live_sessions
from .opening import SessionOpening
from .session_reads import SessionReads
from .stores import open_runtime_store
from .submissions import Submissions
from .verify import verify_grade, verify_proof

__all__ = ["DEFAULT_GRADE_BUDGET", "Runtime"]

DEFAULT_GRADE_BUDGET = 2.0
"""Seconds a grade call waits before answering with an ``OperationResumption``."""


class Runtime:
    """The Kestrel runtime of one process over one home directory."""

    def __init__(
        self,
        home: str | Path | None = None,
        catalog_paths: Sequence[str | Path] | None = None,
        gate: SessionGate | None = None,
        *,
        grade_budget: float = DEFAULT_GRADE_BUDGET,
        catalog: CatalogIndex | None = None,
        sealed: Iterable[str] = (),
        store: RuntimeStore | None = None,
        max_live_sessions: int | None = None,
        max_open_orders: int | None = None,
        waiter: FeedWaiter | None = None,
    ) -> None:
        """``store`` defaults to the one ``$KESTREL_STORE`` names (else SQLite in ``home``);
        ``max_open_orders`` bounds each session (a scenario may lower it; ``bounds``).
        ``sealed``: scenario ids to seal, or ``ID=SERVED_ID`` to serve one only as a
        renamed copy under a neutral id (:mod:`.catalog.renamed`). ``waiter`` waits
        for a forward tape's bars when a submission asks to (none: never waits)."""
        self.home = kestrel_home(home)
        self.store: RuntimeStore = store if store is not None else open_runtime_store(None, home)
        self.grade_budget = grade_budget
        self._served = ServedCatalog(catalog_paths, catalog, sealed, self.home)
        served = self._served
        self._feeds = Feeds(self.store, served.loaded)
        served.unsealed = lambda scenario_id: self._feeds.feed(scenario_id).unsealed()
        self._sessions = LiveSessions(
            self.store,
            max_live_sessions or default_max_live_sessions(),
            self._feeds.trading,
            served.sealed,
            self._artifact,
        )
        self._horizons = Horizons(self.store, self._sessions.clock, lambda: served.lineages)
        self._horizons.adopt()  # a store from before lineage tags: its rows re-keyed
        self._grading = Grading(
            self.store, self._sessions, self._horizons, served.sealed, self._artifact
        )
        self._reads = SessionReads(self._sessions, served, self._grading.record, self._artifact)
        self._listing = SessionListing(
            self.store, served, self._artifact, lambda p, sid: self._reads.head(p, sid).frame
        )
        self._opening = SessionOpening(self.store, served, self._feeds, self._horizons, gate)
        self._submissions = Submissions(
            self.store,
            self._sessions,
            self._horizons,
            served,
            self._feeds,
            waiter=waiter,
            max_open_orders=max_open_orders or DEFAULT_MAX_OPEN_ORDERS,
        )

    # settings kept once, by the part that uses them
    @property
    def waiter(self) -> FeedWaiter | None:
        return self._submissions.waiter

    @waiter.setter
    def waiter(self, waiter: FeedWaiter | None) -> None:
        self._submissions.waiter = waiter

    @property
    def max_open_orders(self) -> int:
        return self._submissions.max_open_orders

    @property
    def gate(self) -> SessionGate | None:
        return self._opening.gate

    @gate.setter
    def gate(self, gate: SessionGate | None) -> None:
        self._opening.gate = gate

    @property
    def max_live_sessions(self) -> int:
        """Open engines kept in memory (least recently used first out)."""
        return self._sessions.max_live_sessions

    @property
    def live_sessions(self) -> int:
        """Sessions whose engine is in memory now (at most ``max_live_sessions``, but for
        ones in use at the moment of eviction)."""
        return len(self._sessions.live)

    def shutdown(self) -> None:
        """Release the database connection (a grade still running is abandoned)."""
        self._grading.abandon()
        self.store.close()

    # -- catalog ------------------------------------------------------------------------

    @property
    def index(self) -> CatalogIndex:
        """The catalog of this process, loaded once on first use."""
        return self._served.index

    def loaded(self, scenario_id: str) -> LoadedScenario:
        return self._served.loaded(scenario_id)

    def sealed(self, scenario_id: str) -> bool:
        """Whether no face serves the scenario's tape or a bar after a session's clock."""
        return self._served.sealed(scenario_id)

    def catalog(self) -> Catalog:
        """The catalog, each scenario marked ``sealed`` as this runtime serves it."""
        return self._served.catalog()

    @property
    def catalog_loaded(self) -> bool:
        """Whether :meth:`catalog` has been loaded (a later read is a read of memory)."""
        return self._served.loaded_index

    def scenario(self, principal: str, scenario: str) -> Scenario | SealedScenario:
        """The scenario; a sealed one's sealed view (no description, no tape end)."""
        return self._served.scenario(scenario)

    def tape(self, principal: str, scenario: str) -> str:
        """The tape's canonical CSV; ``SCENARIO_SEALED`` for a sealed scenario."""
        self._served.with_tape(scenario)
        loaded = self._feeds.trading(scenario)
        what = f"tape {scenario} read"  # the principal was shown the whole tape
        self._horizons.shown(principal, scenario, len(loaded.tape) - 1, what)
        return tape_csv(loaded)

    # -- forward scenarios (see .feed) ----------------------------------------------------

    def append_bars(self, scenario_id: str, data: bytes, *, clock: Callable[[], str]) -> FeedAppend:
        """Publish bars (tape CSV) on a forward scenario's tape, all or none, durable
        before this returns; ``clock`` is the caller's (UTC text), read by the store as
        the last thing before the bars become visible and the first after: their
        ``published_at`` and ``visible_by``."""
        return self._feeds.feed(scenario_id).append(data, clock=clock)

    def feed_status(self, scenario_id: str) -> FeedStatus:
        """How far a forward scenario's tape has grown; whether frozen, unsealed."""
        return self._feeds.feed(scenario_id).status()

    def feed_published(self, scenario_id: str) -> list[tuple[int, str, str, str]]:
        """``(bar, time, published_at, visible_by)`` of every bar of a forward tape: the
        caller's clock read before the commit that made it visible and after it (the
        prefix's are ``""``)."""
        return self._feeds.feed(scenario_id).published()

    def feed_edge(self, scenario_id: str) -> tuple[int, str]:
        """How many bars a forward tape holds as published, and their tape root."""
        return self._feeds.feed(scenario_id).edge()

    def published_tape(self, scenario_id: str) -> str:
        """A forward tape's canonical CSV as published, once its feed is unsealed (what a
        verifier fetches to check a proof that does not embed it; read by no principal);
        ``SCENARIO_SEALED`` before, ``INVALID_ARGUMENT`` for a scenario not forward."""
        self._served.with_tape(scenario_id)  # first: says nothing of a scenario served sealed
        feed = self._feeds.feed(scenario_id)
        feed.refresh()
        return tape_csv(feed.loaded())

    def freeze_feed(self, scenario_id: str) -> FeedStatus:
        """End a forward scenario's window: its tape is fixed as published."""
        return self._feeds.feed(scenario_id).freeze()

    def unseal_feed(self, scenario_id: str) -> FeedStatus:
        """Publish a frozen forward scenario's tape."""
        return self._feeds.feed(scenario_id).unseal()

    def validate(self, source: str, scenario: str | None = None) -> ValidationReport:
        loaded = self.loaded(scenario) if scenario is not None else None
        return validate_source(source, loaded)

    # -- sessions -----------------------------------------------------------------------

    def open_session(
        self,
        principal: str,
        scenario: str,
        label: str | None = None,
        payment: Payment | None = None,
    ) -> SessionOpened:
        """Open a session, resume an open one by label, or answer with the gate's offer."""
        return self._opening.open(principal, scenario, label, payment)

    def resume_all(self) -> list[str]:
        """Replay every open session now (rather than on first touch); their ids."""
        return self._sessions.resume_all()

    def submit(
        self, principal: str, session_id: str, source: str, wait: float | None = None
    ) -> Answered:
        """Check, apply, bind and persist one submission; atomic in every sense. The
        response is its JSON text (what faces send); ``.model()`` builds its object for
        a caller that reads it.

        The journal row is committed before this returns. The session lock is taken
        inline (not through ``LiveSessions.locked``): this is the step path. When another process
        advanced the session meanwhile, the submission is applied after what it did.
        On a forward scenario, a submission that needs a bar not yet published waits
        for it up to ``wait`` seconds or its source's ``wait`` (the longer; once, with
        the runtime's waiter), else is refused ``BAR_NOT_PUBLISHED``.
        """
        return self._submissions.submit(principal, session_id, source, wait)

    def frame(self, principal: str, session_id: str) -> Wire[Delivery]:
        """The head frame and its root (a sealed scenario's frame without
        ``clock.remaining``) as JSON text, the object made when asked for (``.model()``);
        an agent may call this on every step."""
        return self._reads.frame(principal, session_id)

    def sessions(self, principal: str, cursor: str | None = None) -> SessionList:
        """A page of the principal's sessions, oldest first (see :mod:`.listing`)."""
        return self._listing.page(principal, cursor)

    def history(
        self, principal: str, session_id: str, bars: int, symbol: str | None = None
    ) -> History:
        """The last ``bars`` bars of the session's tape up to and including its clock bar
        (open or closed: the head frame's clock), never a bar after it."""
        return self._reads.history(principal, session_id, bars, symbol)

    def news(
        self,
        principal: str,
        session_id: str,
        limit: int = 20,
        before: str | None = None,
        symbol: str | None = None,
    ) -> NewsPage:
        """The news items visible at the session's clock (:mod:`.news_reads`)."""
        return self._reads.news(principal, session_id, limit, before, symbol)

    def blotter(self, principal: str, session_id: str) -> Blotter:
        return self._reads.blotter(principal, session_id)

    def blotter_size(self, principal: str, sid: str) -> int | None:
        """Orders plus fills in an open session's blotter (what building it may cost),
        ``None`` for a closed one (its blotter is read from the store)."""
        return self._reads.blotter_size(principal, sid)

    def _artifact(self, root: str, principal: str | None = None) -> dict[str, Any]:
        obj, status = self.store.lookup(root, principal)
        if obj is None:
            raise unknown_artifact(root, status)
        return obj

    def artifact(self, root: str, reader: str | None = None) -> dict[str, Any]:
        """A stored object, verbatim; ``UNKNOWN_ARTIFACT`` when absent or corrupt.

        With ``reader``, only the artifacts of that principal's sessions: another's
        is refused exactly as a root never stored (a remote caller's view). Without,
        any (the operator on their own home). A frame of a sealed scenario is served
        without ``clock.remaining`` (see :mod:`.sealed`).
        """
        return self._reads.artifact(root, reader)

    # -- close, grades, proofs (see .grading) ---------------------------------------------

    def close(self, principal: str, session_id: str) -> SessionRecord:
        """Close the session (idempotent) and store its record, head frame and blotter."""
        return self._grading.close(principal, session_id)

    def grade(
        self, principal: str, session_id: str, budget: float | None = None
    ) -> GradeResult | OperationResumption:
        """Grade a session (closing it first if it is still open).

        Waits up to ``budget`` seconds (default :data:`DEFAULT_GRADE_BUDGET`); longer
        work answers with an ``OperationResumption`` that :meth:`resume` continues.
        """
        return self._grading.grade(
            principal, session_id, self.grade_budget if budget is None else budget
        )

    def resume(
        self, principal: str, token: str, budget: float | None = None
    ) -> GradeResult | OperationResumption:
        return self._grading.resume(
            principal, token, self.grade_budget if budget is None else budget
        )

    def discard(self, principal: str, session_id: str) -> bool:
        """Forget a closed, graded session of ``principal`` whole (``RuntimeStore.discard``:
        its steps, record, head frame, blotter and grade), its reach kept: the principal's
        horizon is first raised to the bar the session reached, so a later session of the
        principal still fails ``no-lookahead`` where this one was shown the tape.
        ``False``, and nothing changed, for any other session. For a store nobody else
        reads, whose caller keeps the proof (the gym's private store): a proof is the
        only copy left."""
        row = self.store.session(session_id)
        if row is None or row.principal != principal:
            return False
        if row.status != "closed" or row.grade_root is None:
            return False
        self._horizons.reached(row, self._sessions.clock(principal, session_id))
        live = self._sessions.live.get(session_id)
        if live is not None:
            self._sessions.forget(live)
        return self.store.discard(session_id)

    def verify(self, grade: GradeResult, reader: str | None = None) -> VerificationReport:
        """Replay a grade from the artifacts alone and name the first mismatch (from
        ``reader``'s own artifacts when given, as :meth:`artifact` reads them); the
        grade of a pruned session (``kestrel prune``) cannot be replayed and is refused
        saying so."""
        row = self.store.session(grade.session)
        if row is not None and reader in (None, row.principal):
            pruned_at = self.store.pruned(row.id)
            if pruned_at is not None:
                raise pruned_session(row.id, pruned_at)
        store = self.store if reader is None else OwnedArtifacts(self.store, reader)
        return verify_grade(store, self._feeds.grown(self.index), grade)

    def proof(self, principal: str, session_id: str, embed_tape: bool = False) -> Wire[Proof]:
        """The session's proof: its grade (graded now, closing the session, if need be;
        this waits for the grade however long it takes), record, pentads, blotter and
        scenario reference, with the scenario and its tape when ``embed_tape``; as its
        canonical text, the object made when first asked for (``.model()``)."""
        return self._grading.proof(principal, session_id, self.grade_budget, embed_tape)

    def proof_of_grade(self, grade_root: str, reader: str | None = None) -> Wire[Proof]:
        """The proof of the session graded ``grade_root`` (one of ``reader``'s when
        given); ``UNKNOWN_ARTIFACT``, as :meth:`artifact` answers a missing root, when
        no such session is visible."""
        return self._grading.proof_of_grade(grade_root, reader, self.grade_budget)

    def verify_proof(self, data: Any) -> VerificationReport:
        """Verify a proof (JSON data) by replay over this catalog or its embedded scenario;
        needs nothing from the store. See :func:`~.verify.verify_proof`."""
        return verify_proof(self._feeds.grown(self.index), data)
