"""The runtime service: sessions, submissions, persistence, grades, artifacts.

``Runtime`` is what every face reaches (through ``local_transport`` in-process, through
the door over HTTP). It owns no semantics of its own: the engine decides what a
submission does; the service binds it (pentad, frame root), persists it (one
transaction per accepted submission) and serves it back. Every method takes the acting
principal; a session of another principal is ``UNKNOWN_SESSION``.

Sessions are rebuilt lazily: the first touch of an open session in a new process
replays its journal on a fresh engine and checks that every frame root is identical.
The journal is the truth: engines are a cache of at most ``max_live_sessions`` (least
recently used first out; an evicted session replays on its next touch). Over a shared
store (PostgreSQL, any number of processes) a cached engine is checked against the
session's head before each use and catches up on the rows it lacks; two processes
racing on one session are serialised by the journal's ``(session, seq)`` key.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kestrel_protocol import (
    Blotter,
    Catalog,
    Delivery,
    EmbeddedScenario,
    GradeResult,
    History,
    KestrelError,
    Lookahead,
    LookaheadRead,
    OperationResumption,
    Payment,
    Pentad,
    PentadBody,
    Proof,
    ProofScenario,
    RefusalCode,
    Scenario,
    ScenarioRef,
    SealedScenario,
    SessionFrame,
    SessionOpened,
    SessionRecord,
    SessionResponse,
    ValidationReport,
    VerificationReport,
    canonical_json,
    kestrel_home,
)
from kestrel_protocol.ports import SessionGate
from kestrel_protocol.store import JournalConflict, JournalEntry, RuntimeStore, SessionRow
from kestrel_protocol.surface import HISTORY_MAX

from .artifacts import OwnedArtifacts, unknown_artifact
from .catalog import load_catalog, tape_csv
from .catalog.model import CatalogIndex, LoadedScenario
from .catalog.objects import catalog_object
from .engine import SessionEngine, compute_grade
from .engine.frame import construct
from .history import history_bars
from .ids import operation_id, session_id
from .lang import validate_source
from .operations import Operations
from .pentads import MEDIA_TYPE, pentad_root
from .stores import open_runtime_store
from .verify import verify_grade, verify_proof

__all__ = ["DEFAULT_GRADE_BUDGET", "Runtime", "default_max_live_sessions"]

log = logging.getLogger(__name__)

DEFAULT_GRADE_BUDGET = 2.0
"""Seconds a grade call waits before answering with an ``OperationResumption``."""

_CONFLICT_RETRIES = 16
"""Times a submit or close retries after another process advanced its session."""


def default_max_live_sessions() -> int:
    """Open engines kept in memory by default: 1000 per 4 GiB of RAM, at least 100."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1000
    return max(100, min(100_000, 1000 * total // (4 << 30)))


_APPLIED = {"ok", "disposition", "pentad", "delivery"}
_STOOD = {*_APPLIED, "stand_down"}
_BODY = {"media_type", "bytes"}
_PENTAD = {"session", "seq", "prev", "body", "root"}
_DELIVERY = {"frame", "frame_root"}


@dataclass(eq=False)
class _Live:
    """A session in memory: its row and, while not closed, its engine and head root."""

    row: SessionRow
    loaded: LoadedScenario
    engine: SessionEngine | None
    frame_root: str
    lock: threading.Lock
    dead: bool = False  # stale or evicted: rebuild before use (checked under ``lock``)


_BODIES: dict[str, PentadBody] = {}
_BODIES_MAX = 512


def _body(source: str) -> PentadBody:
    """The pentad body of ``source``; models are frozen, so an agent's recurring sources
    share one (short ones are remembered)."""
    body = _BODIES.get(source)
    if body is None:
        body = construct(PentadBody, {"media_type": MEDIA_TYPE, "bytes": source}, _BODY)
        if len(source) <= 256:
            if len(_BODIES) >= _BODIES_MAX:
                _BODIES.clear()
            _BODIES[source] = body
    return body


def _refuse(code: RefusalCode, message: str, **detail: Any) -> KestrelError:
    return KestrelError(code, message, detail)


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
    ) -> None:
        """``store`` defaults to the one ``$KESTREL_STORE`` names (else SQLite in ``home``)."""
        self.home = kestrel_home(home)
        self.store: RuntimeStore = store if store is not None else open_runtime_store(None, home)
        self.gate = gate
        self.grade_budget = grade_budget
        self.max_live_sessions = max_live_sessions or default_max_live_sessions()
        self._catalog_paths = list(catalog_paths) if catalog_paths is not None else None
        self._index: CatalogIndex | None = catalog  # tests and embedders may supply one
        self._sealed = frozenset(sealed)
        """Scenarios this runtime seals besides those whose ``scenario.toml`` says so."""
        self._catalog: Catalog | None = None
        self._lock = threading.RLock()
        self._live: OrderedDict[str, _Live] = OrderedDict()  # least recently used first
        self._building: dict[str, threading.Lock] = {}
        self._ops: Operations[GradeResult] = Operations()

    @property
    def live_sessions(self) -> int:
        """Sessions whose engine is in memory now (at most ``max_live_sessions``, but for
        ones in use at the moment of eviction)."""
        return len(self._live)

    def shutdown(self) -> None:
        """Release the database connection."""
        self.store.close()

    # -- catalog ------------------------------------------------------------------------

    @property
    def index(self) -> CatalogIndex:
        """The catalog of this process, loaded once on first use."""
        index = self._index
        if index is None:
            with self._lock:
                if self._index is None:
                    self._index = load_catalog(self._catalog_paths)
                index = self._index
        return index

    def loaded(self, scenario_id: str) -> LoadedScenario:
        loaded = self.index.get(scenario_id)
        if loaded is None:
            raise _refuse(
                RefusalCode.UNKNOWN_SCENARIO,
                f"no scenario {scenario_id!r} in the catalog",
                scenario=scenario_id,
            )
        return loaded

    def sealed(self, scenario_id: str) -> bool:
        """Whether no face serves the scenario's tape or a bar after a session's clock."""
        loaded = self.index.get(scenario_id)
        return scenario_id in self._sealed or (loaded is not None and loaded.sealed)

    def catalog(self) -> Catalog:
        """The catalog, each scenario marked ``sealed`` as this runtime serves it."""
        catalog = self._catalog
        if catalog is None:
            index = self.index
            catalog = index.catalog
            if self._sealed & set(index.ids()):
                scenarios = [index.get(i) for i in index.ids()]
                sealed = [i for i in index.ids() if self.sealed(i)]
                catalog = catalog_object((s.scenario for s in scenarios if s is not None), sealed)
            self._catalog = catalog
        return catalog

    def scenario(self, principal: str, scenario_id: str) -> Scenario | SealedScenario:
        """The scenario; a sealed one's sealed view (no description, no tape end)."""
        loaded = self.loaded(scenario_id)
        if self.sealed(scenario_id):
            return SealedScenario.of(loaded.scenario)
        return loaded.scenario

    def tape(self, principal: str, scenario_id: str) -> str:
        """The tape's canonical CSV; ``SCENARIO_SEALED`` for a sealed scenario."""
        loaded = self.loaded(scenario_id)
        if self.sealed(scenario_id):
            raise _refuse(
                RefusalCode.SCENARIO_SEALED,
                f"scenario {scenario_id!r} is sealed: its tape is not served (the catalog "
                "lists its tape root); read the bars up to your clock with the session's "
                "history",
                scenario=scenario_id,
                tapeRoot=loaded.scenario.tape.root,
            )
        self._saw_future(principal, scenario_id, f"tape {scenario_id}")
        return tape_csv(loaded)

    def _saw_future(self, principal: str, scenario_id: str, what: str) -> None:
        """Record, for each of the principal's sessions on the scenario that is not closed
        and whose clock has bars after it, that ``what`` (which holds them) was read now:
        after the session's latest submission, at its clock bar."""
        for row in self.store.sessions():
            if row.principal != principal or row.scenario_id != scenario_id:
                continue
            if row.status == "closed":
                continue
            with self._locked(principal, row.id) as live:
                engine = live.engine
                if engine is not None and engine.clock < len(live.loaded.tape) - 1:
                    self.store.add_read(row.id, engine.seq, engine.clock, what)

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
        loaded = self.loaded(scenario)
        root = loaded.scenario.root
        if label is not None:
            sid = session_id(principal, root, label)
            row = self.store.session(sid)
            if row is not None:
                if row.status == "closed":
                    raise _refuse(
                        RefusalCode.SESSION_CLOSED,
                        f"session {sid} (label {label!r}) is closed; open another label",
                        session=sid,
                        label=label,
                    )
                return SessionOpened(gated=False, session_id=sid)
        if self.gate is not None:
            offer = self.gate.check(principal, scenario, payment)
            if offer is not None:
                return SessionOpened(gated=True, payment=offer)
        while True:
            chosen = label if label is not None else self._next_label(principal, root)
            sid = session_id(principal, root, chosen)
            row = SessionRow(sid, principal, loaded.id, root, chosen, "open", None, None)
            if self.store.insert_session(row):
                if not self.sealed(loaded.id):
                    self.store.note_unsealed(sid)
                return SessionOpened(gated=False, session_id=sid)
            if label is not None:  # a concurrent open of the same label won the race
                return self.open_session(principal, scenario, label, payment)

    def _next_label(self, principal: str, scenario_root: str) -> str:
        used = self.store.labels(principal, scenario_root)
        n = 1
        while str(n) in used:
            n += 1
        return str(n)

    def _session(self, principal: str, sid: str) -> _Live:
        """The session in memory, rebuilt by replay when this process has not seen it
        (or evicted it)."""
        live = self._live.get(sid)
        if live is not None and live.row.principal == principal:
            self._touch(sid)
            return live
        if live is None:
            with self._lock:
                building = self._building.setdefault(sid, threading.Lock())
            try:
                with building:  # one replay per session; other sessions are not held up
                    live = self._live.get(sid)
                    if live is None:
                        row = self.store.session(sid)
                        if row is not None and row.principal == principal:
                            live = self._rebuild(row)
                            self._keep(live)
            finally:
                with self._lock:
                    if self._building.get(sid) is building:
                        del self._building[sid]
        if live is None or live.row.principal != principal:
            raise _refuse(RefusalCode.UNKNOWN_SESSION, f"no session {sid}", session=sid)
        return live

    def _touch(self, sid: str) -> None:
        try:  # noqa: SIM105 - the step path: cheaper than suppress()
            self._live.move_to_end(sid)
        except KeyError:  # evicted meanwhile by another thread
            pass

    def _keep(self, live: _Live) -> None:
        """Cache ``live``, evicting the least recently used sessions beyond the limit.

        A session in use (its lock held) is skipped; one evicted is marked dead under its
        lock, so whoever fetched it before rebuilds it instead of using a stale engine.
        """
        with self._lock:
            self._live[live.row.id] = live
            excess = len(self._live) - self.max_live_sessions
            if excess <= 0:
                return
            for old in list(self._live.values()):
                if excess <= 0 or old is live:
                    break
                if old.lock.acquire(blocking=False):
                    old.dead = True
                    del self._live[old.row.id]
                    old.lock.release()
                    excess -= 1

    def _rebuild(self, row: SessionRow) -> _Live:
        loaded = self.loaded(row.scenario_id)
        if loaded.scenario.root != row.scenario_root:
            raise _refuse(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"session {row.id} was opened on scenario {row.scenario_id} with root "
                f"{row.scenario_root}, but this catalog has {loaded.scenario.root}",
                session=row.id,
            )
        if row.status == "closed":
            assert row.record_root is not None
            record = SessionRecord.parse(self._artifact(row.record_root))
            return _Live(row, loaded, None, record.head, threading.Lock())
        if not self.sealed(loaded.id):  # served unsealed by this process
            self.store.note_unsealed(row.id)
        engine = SessionEngine(loaded, row.id)
        frame_root = self._replay(row.id, engine, engine.frame_root(), self.store.journal(row.id))
        log.debug("resumed session %s at seq %d", row.id, engine.seq)
        return _Live(row, loaded, engine, frame_root, threading.Lock())

    def _replay(
        self, sid: str, engine: SessionEngine, frame_root: str, entries: list[JournalEntry]
    ) -> str:
        """Apply journal ``entries`` to ``engine`` (at ``frame_root``), checking every root
        against the journal; the new head root."""
        for entry in entries:
            if entry.seq != engine.seq + 1:
                raise self._diverged(sid, entry.seq, "seq", str(engine.seq + 1), str(entry.seq))
            if entry.prev != frame_root:
                raise self._diverged(sid, entry.seq, "prev", frame_root, entry.prev)
            try:
                root = pentad_root(sid, entry.seq, entry.prev, entry.source)
            except KestrelError:
                root = "corrupt"
            if root != entry.pentad_root:
                raise self._diverged(sid, entry.seq, "pentad", entry.pentad_root, root)
            frame_root = engine.replay(entry.source)
            if frame_root != entry.frame_root:
                raise self._diverged(sid, entry.seq, "frameRoot", entry.frame_root, frame_root)
        return frame_root

    def _current(self, live: _Live) -> bool:
        """Bring a cached session (its lock held) up to the store's head: replay the
        journal rows it lacks. ``False`` when it must be rebuilt instead (closed
        elsewhere, or behind in a way replay cannot mend). Only over a shared store."""
        engine = live.engine
        if engine is None:
            return True  # closed is final
        head = self.store.head(live.row.id)
        if head is None or head.status == "closed" or head.seq < engine.seq:
            return False
        if head.seq == engine.seq:
            return True
        try:
            entries = self.store.journal(live.row.id, after=engine.seq)
            live.frame_root = self._replay(live.row.id, engine, live.frame_root, entries)
        except BaseException:
            self._forget(live)
            raise
        log.debug("caught session %s up to seq %d", live.row.id, engine.seq)
        return True

    @staticmethod
    def _diverged(sid: str, seq: int, field: str, expected: str, found: str) -> KestrelError:
        log.error(
            "session %s cannot be resumed: replay diverged at seq %d (%s expected %s, found %s)",
            sid,
            seq,
            field,
            expected,
            found,
        )
        return _refuse(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"session {sid} cannot be resumed: its replay diverged at seq {seq} ({field})",
            session=sid,
            seq=seq,
            field=field,
        )

    def _forget(self, live: _Live) -> None:
        live.dead = True
        with self._lock:
            if self._live.get(live.row.id) is live:
                del self._live[live.row.id]

    @contextmanager
    def _locked(self, principal: str, sid: str) -> Iterator[_Live]:
        """The session, locked for one operation and current with the store (rebuilt if
        a failure, an eviction or another process left it stale)."""
        shared = self.store.shared
        while True:
            live = self._session(principal, sid)
            with live.lock:
                if live.dead:
                    continue
                if shared and not self._current(live):
                    self._forget(live)
                    continue
                yield live
                return

    def resume_all(self) -> list[str]:
        """Replay every open session now (rather than on first touch); their ids."""
        resumed = []
        for row in self.store.sessions():
            if row.status != "closed":
                self._session(row.principal, row.id)
                resumed.append(row.id)
        return resumed

    def submit(self, principal: str, sid: str, source: str) -> SessionResponse:
        """Check, apply, bind and persist one submission; atomic in every sense.

        The journal row is committed before this returns. The session lock is taken
        inline (not through :meth:`_locked`): this is the step path. When another process
        advanced the session meanwhile, the submission is applied after what it did.
        """
        shared = self.store.shared
        conflicts = 0
        while True:
            live = self._live.get(sid)
            if live is None or live.row.principal != principal:
                live = self._session(principal, sid)
            else:
                self._touch(sid)
            with live.lock:
                if live.dead:
                    continue
                if shared and not self._current(live):
                    self._forget(live)
                    continue
                engine = live.engine
                if engine is None:
                    raise _refuse(
                        RefusalCode.SESSION_CLOSED, f"session {sid} is closed", session=sid
                    )
                program = engine.check(source)
                seq = engine.seq + 1
                prev = live.frame_root
                root = pentad_root(sid, seq, prev, source)
                before = engine.status
                try:
                    step = engine.apply(program)
                    frame = step.frame
                    frame_root = engine.frame_root()
                    status = frame.status if frame.status != before else None
                    self.store.append(sid, seq, source, root, frame_root, prev=prev, status=status)
                except BaseException as exc:
                    # The engine moved but nothing was persisted: forget it so the next
                    # touch replays the journal, which holds exactly what was accepted.
                    self._forget(live)
                    if isinstance(exc, JournalConflict):
                        conflicts += 1
                        if conflicts < _CONFLICT_RETRIES:
                            continue  # another process advanced it: catch up, apply after
                        raise _refuse(
                            RefusalCode.BACKEND_UNAVAILABLE,
                            f"session {sid} is being advanced by other processes without "
                            "pause; read its frame and submit again",
                            session=sid,
                        ) from None
                    raise
                live.frame_root = frame_root
                break
        # Every member below was produced here in wire form (the pentad's bytes hash to
        # its root): build the models without re-validating them on the step path.
        body = _body(source)
        pentad = construct(
            Pentad,
            {"session": sid, "seq": seq, "prev": prev, "body": body, "root": root},
            _PENTAD,
        )
        delivery = construct(Delivery, {"frame": frame, "frame_root": frame_root}, _DELIVERY)
        stand_down = step.stand_down
        if stand_down is None:
            members = {
                "ok": True,
                "disposition": "applied",
                "pentad": pentad,
                "delivery": delivery,
                "stand_down": None,
            }
            return construct(SessionResponse, members, _APPLIED)
        members = {
            "ok": True,
            "disposition": "stood-down",
            "pentad": pentad,
            "delivery": delivery,
            "stand_down": stand_down,
        }
        return construct(SessionResponse, members, _STOOD)

    def frame(self, principal: str, sid: str) -> Delivery:
        """The head frame and its root.

        Neither is re-hashed: an open session's root was computed from this very frame
        when it was made (or replayed), and a closed session's head is read through the
        store, which serves only bytes that hash to their root. An agent may call this
        on every step.
        """
        with self._locked(principal, sid) as live:
            if live.engine is not None:
                members = {"frame": live.engine.frame(), "frame_root": live.frame_root}
                return construct(Delivery, members, _DELIVERY)
            head = live.frame_root
        members = {"frame": SessionFrame.parse(self._artifact(head)), "frame_root": head}
        return construct(Delivery, members, _DELIVERY)

    def history(self, principal: str, sid: str, bars: int, symbol: str | None = None) -> History:
        """The last ``bars`` bars of the session's tape up to and including its clock bar
        (open or closed: the head frame's clock), never a bar after it."""
        if not 1 <= bars <= HISTORY_MAX:
            raise _refuse(
                RefusalCode.INVALID_ARGUMENT,
                f"bars must be 1 to {HISTORY_MAX}, not {bars}",
                bars=bars,
            )
        frame = self.frame(principal, sid).frame
        tape = self._session(principal, sid).loaded.tape
        rows = history_bars(tape, frame.clock.bar, bars, symbol)
        return History(
            session=sid, scenario=frame.scenario, clock=frame.clock, symbol=symbol, bars=rows
        )

    def blotter(self, principal: str, sid: str) -> Blotter:
        with self._locked(principal, sid) as live:
            if live.engine is not None:
                return live.engine.blotter()
        return Blotter.parse(self._artifact(self._record(live).blotter_root))

    def blotter_size(self, principal: str, sid: str) -> int | None:
        """Orders plus fills in an open session's blotter (what building it may cost),
        ``None`` for a closed one (its blotter is read from the store)."""
        with self._locked(principal, sid) as live:
            engine = live.engine
            return None if engine is None else len(engine.orders) + len(engine.fills)

    def _record(self, live: _Live) -> SessionRecord:
        row = self.store.session(live.row.id)
        assert row is not None
        assert row.record_root is not None
        return SessionRecord.parse(self._artifact(row.record_root))

    def close(self, principal: str, sid: str) -> SessionRecord:
        """Close the session (idempotent) and store its record, head frame and blotter."""
        for _ in range(_CONFLICT_RETRIES):
            try:
                return self._close(principal, sid)
            except JournalConflict:  # advanced elsewhere while closing: catch up, again
                continue
        raise _refuse(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"session {sid} is being advanced by other processes without pause; close again",
            session=sid,
        )

    def _close(self, principal: str, sid: str) -> SessionRecord:
        with self._locked(principal, sid) as live:
            engine = live.engine
            if engine is None:
                return self._record(live)
            journal = self.store.journal(sid)
            if (journal[-1].seq if journal else 0) != engine.seq:  # advanced meanwhile
                self._forget(live)
                raise JournalConflict(f"session {sid} moved past seq {engine.seq}")
            engine.close()
            head = engine.frame_root()
            blotter = engine.blotter()
            record = SessionRecord.with_root(
                session=sid,
                scenario=ScenarioRef(id=live.loaded.id, root=live.loaded.scenario.root),
                label=live.row.label,
                status="closed",
                pentads=[entry.pentad_root for entry in journal],
                head=head,
                blotter_root=blotter.root,
                lookahead=self._lookahead(sid),
            )
            artifacts = {
                head: engine.frame_text().encode("utf-8"),
                blotter.root: canonical_json(blotter),
                record.root: canonical_json(record),
            }
            try:
                self.store.finish(sid, journal, artifacts, record.root)
            except BaseException:
                self._forget(live)
                raise
            live.engine = None
            live.frame_root = head
            return record

    def _lookahead(self, sid: str) -> Lookahead:
        unsealed, reads = self.store.lookahead(sid)
        return Lookahead(
            sealed=not unsealed,
            reads=[LookaheadRead(seq=seq, bar=bar, read=what) for seq, bar, what in reads],
        )

    # -- grades, artifacts, verification ---------------------------------------------------

    def grade(
        self, principal: str, sid: str, budget: float | None = None
    ) -> GradeResult | OperationResumption:
        """Grade a session (closing it first if it is still open).

        Waits up to ``budget`` seconds (default :data:`DEFAULT_GRADE_BUDGET`); longer
        work answers with an ``OperationResumption`` that :meth:`resume` continues.
        """
        record = self.close(principal, sid)
        row = self.store.session(sid)
        if row is not None and row.grade_root is not None:
            stored = self.store.get(row.grade_root)
            if stored is not None:
                return GradeResult.parse(stored)
        loaded = self._session(principal, sid).loaded
        bars = self._head_bar(record) or max(1, len(loaded.tape) - 1)

        def work(progress: Any) -> GradeResult:
            # loading the pentads is part of the work (and of its budget): a long
            # session has as many pentads as steps
            pentads = self._pentads(record)
            grade = compute_grade(loaded, record, pentads, progress, bars=bars)
            self.store.set_grade(sid, grade.root, canonical_json(grade))
            return grade

        op = self._ops.start(operation_id(principal, record.root), principal, work, total=bars)
        result = self._ops.wait(op, self.grade_budget if budget is None else budget)
        if isinstance(result, OperationResumption):  # resumable on any process of the store
            self.store.put_operation(result.token, principal, sid)
        return result

    def _head_bar(self, record: SessionRecord) -> int | None:
        """The clock bar of the record's head frame (the bars a replay processes), so a
        grade's progress counts toward where the session ended, not the tape's end; None
        when the head is unreadable (the replay then reports that itself)."""
        head, _ = self.store.lookup(record.head)
        clock = head.get("clock") if head is not None else None
        bar = clock.get("bar") if isinstance(clock, dict) else None
        return max(1, bar) if isinstance(bar, int) else None

    def _pentads(self, record: SessionRecord) -> list[Pentad]:
        """The record's pentads, rebuilt from the session's journal when every rebuilt
        root is the record's (then the bytes are the stored artifacts' bytes), else read
        from the artifacts, which reports any that is missing or corrupt.

        Reading and re-verifying each artifact costs ~40 us, most of a long grade.
        """
        sid = record.session
        entries = self.store.journal(sid)
        pentads: list[Pentad] = []
        if len(entries) == len(record.pentads):
            for entry, claimed in zip(entries, record.pentads, strict=True):
                try:
                    root = pentad_root(sid, entry.seq, entry.prev, entry.source)
                except KestrelError:
                    break
                if root != claimed:
                    break
                body = construct(
                    PentadBody, {"media_type": MEDIA_TYPE, "bytes": entry.source}, _BODY
                )
                members = {
                    "session": sid,
                    "seq": entry.seq,
                    "prev": entry.prev,
                    "body": body,
                    "root": root,
                }
                pentads.append(construct(Pentad, members, _PENTAD))
            else:
                return pentads
        return [Pentad.parse(self._artifact(root)) for root in record.pentads]

    def resume(
        self, principal: str, token: str, budget: float | None = None
    ) -> GradeResult | OperationResumption:
        try:
            op = self._ops.find(principal, token)
        except KestrelError:
            found = self.store.operation(token)  # started by another process, or before
            if found is None or found[0] != principal:
                raise
            return self.grade(principal, found[1], budget)  # the stored grade, or its work
        return self._ops.wait(op, self.grade_budget if budget is None else budget)

    def _artifact(self, root: str, principal: str | None = None) -> dict[str, Any]:
        obj, status = self.store.lookup(root, principal)
        if obj is None:
            raise unknown_artifact(root, status)
        return obj

    def artifact(self, root: str, principal: str | None = None) -> dict[str, Any]:
        """A stored object, verbatim; ``UNKNOWN_ARTIFACT`` when absent or corrupt.

        With ``principal``, only the artifacts of that principal's sessions: another's
        is refused exactly as a root never stored (a remote caller's view). Without,
        any (the operator on their own home).
        """
        return self._artifact(root, principal)

    def verify(self, grade: GradeResult, principal: str | None = None) -> VerificationReport:
        """Replay a grade from the artifacts alone and name the first mismatch (from
        ``principal``'s own artifacts when given, as :meth:`artifact` reads them)."""
        store = self.store if principal is None else OwnedArtifacts(self.store, principal)
        return verify_grade(store, self.index, grade)

    def proof(self, principal: str, sid: str, embed_tape: bool = False) -> Proof:
        """The session's proof: its grade (graded now, closing the session, if need be;
        this waits for the grade however long it takes), record, pentads, blotter and
        scenario reference, with the scenario and its tape when ``embed_tape``."""
        graded = self.grade(principal, sid)
        while isinstance(graded, OperationResumption):
            graded = self.resume(principal, graded.token, budget=60.0)
        record = self.close(principal, sid)
        loaded = self._session(principal, sid).loaded
        scenario = loaded.scenario
        members: dict[str, Any] = {
            "scenario": ProofScenario(
                id=scenario.id, root=scenario.root, tape_root=scenario.tape.root
            ),
            "grade": graded,
            "record": record,
            "head": SessionFrame.parse(self._artifact(record.head)),
            "pentads": self._pentads(record),
            "blotter": Blotter.parse(self._artifact(record.blotter_root)),
        }
        if embed_tape and self.sealed(scenario.id):
            raise _refuse(
                RefusalCode.SCENARIO_SEALED,
                f"scenario {scenario.id!r} is sealed: a proof cannot embed its tape",
                scenario=scenario.id,
                tapeRoot=scenario.tape.root,
            )
        if embed_tape:
            self._saw_future(principal, scenario.id, f"tape {scenario.id} (embedded in a proof)")
            members["embedded"] = EmbeddedScenario(scenario=scenario, tape=tape_csv(loaded))
        return Proof.with_root(**members)

    def proof_of_grade(self, grade_root: str, principal: str | None = None) -> Proof:
        """The proof of the session graded ``grade_root`` (one of ``principal``'s when
        given); ``UNKNOWN_ARTIFACT``, as :meth:`artifact` answers a missing root, when
        no such session is visible."""
        row = self.store.graded_session(grade_root, principal)
        if row is None:
            raise unknown_artifact(grade_root, "missing")
        return self.proof(row.principal, row.id)

    def verify_proof(self, data: Any) -> VerificationReport:
        """Verify a proof (JSON data) by replay over this catalog or its embedded scenario;
        needs nothing from the store. See :func:`~.verify.verify_proof`."""
        return verify_proof(self.index, data)
