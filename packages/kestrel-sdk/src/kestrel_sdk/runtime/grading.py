"""A session's end: its close (the record), its grade, and its proof.

A grade closes its session first, so the three live together. Closing stores the
record, head frame and blotter in one transaction. A session this process held live and
closed is graded on its own engine and proved from what its close built (:mod:`.closed`);
any other is graded by replaying its record. A grade longer than its budget answers with
an ``OperationResumption`` any process of the store can resume; a proof bundles the
grade with everything needed to replay it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kestrel_protocol import (
    Blotter,
    EmbeddedScenario,
    GradeResult,
    KestrelError,
    Lookahead,
    LookaheadRead,
    OperationResumption,
    Pentad,
    Proof,
    ProofScenario,
    RefusalCode,
    ScenarioRef,
    SessionFrame,
    SessionRecord,
    Wire,
    canonical_json,
)
from kestrel_protocol.store import JournalConflict, JournalEntry, RuntimeStore

from .artifacts import pruned_session, unknown_artifact
from .catalog import tape_csv
from .closed import Closed
from .engine import SessionEngine, compute_grade, measure_grade
from .engine.spliced import array_bytes, spliced_bytes, spliced_rooted
from .engine.wire import builder
from .horizon import Horizons
from .ids import operation_id
from .live import LiveSession, LiveSessions
from .models import pentad_body
from .operations import Operations
from .pentads import pentad_bytes
from .sealed import sealed_frame, sealed_frame_text

__all__ = ["CONFLICT_RETRIES", "Grading"]

CONFLICT_RETRIES = 16
"""Times a submit or close retries after another process advanced its session."""


class Grading:
    """Closes, grades and proves the sessions of one runtime.

    ``sealed`` is the runtime's catalog (whether a scenario is sealed), ``artifact`` its
    reader of a stored object by root (refusing one not served).
    """

    def __init__(
        self,
        store: RuntimeStore,
        sessions: LiveSessions,
        horizons: Horizons,
        sealed: Callable[[str], bool],
        artifact: Callable[[str], dict[str, Any]],
    ) -> None:
        self.store = store
        self._sessions = sessions
        self._horizons = horizons
        self._sealed = sealed
        self._artifact = artifact
        self._ops: Operations[GradeResult] = Operations()

    def abandon(self) -> None:
        """Shutting down: grades still running are dropped without a word (see
        :meth:`Operations.abandon`)."""
        self._ops.abandon()

    # -- close ---------------------------------------------------------------------------

    def close(self, principal: str, sid: str) -> SessionRecord:
        """Close the session (idempotent) and store its record, head frame and blotter."""
        for _ in range(CONFLICT_RETRIES):
            try:
                return self._close(principal, sid)
            except JournalConflict:  # advanced elsewhere while closing: catch up, again
                continue
        raise KestrelError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"session {sid} is being advanced by other processes without pause; close again",
            {"session": sid},
        )

    def _close(self, principal: str, sid: str) -> SessionRecord:
        with self._sessions.locked(principal, sid) as live:
            engine = live.engine
            if engine is None:
                return self.record(live)
            journal = self.store.journal(sid)
            if (journal[-1].seq if journal else 0) != engine.seq:  # advanced meanwhile
                self._sessions.forget(live)
                raise JournalConflict(f"session {sid} moved past seq {engine.seq}")
            engine.close()
            head = engine.frame_root()
            blotter_root = engine.blotter_root()
            record = _record(
                sid,
                ScenarioRef(id=live.loaded.id, root=live.loaded.scenario.root),
                live.row.label,
                [entry.pentad_root for entry in journal],
                (head, blotter_root),
                self._lookahead(sid),
            )
            record_bytes, blotter_bytes = canonical_json(record), engine.blotter_bytes()
            texts = _pentad_texts(sid, journal)
            artifacts = {
                head: engine.frame_text().encode("utf-8"),
                blotter_root: blotter_bytes,
                record.root: record_bytes,
            }
            if texts is not None:  # stored as built here (else the store rebuilds them)
                artifacts.update(zip(record.pentads, texts, strict=True))
            try:
                self.store.finish(sid, journal, artifacts, record.root)
            except BaseException:
                self._sessions.forget(live)
                raise
            live.engine = None
            live.row = replace(live.row, status="closed", record_root=record.root)
            live.frame_root = head
            live.closed = Closed.of(record, engine, (record_bytes, blotter_bytes), journal, texts)
            return record

    def record(self, live: LiveSession) -> SessionRecord:
        """The record of a closed session."""
        if live.closed is not None:
            return live.closed.record
        row = self.store.session(live.row.id)
        assert row is not None
        assert row.record_root is not None
        return SessionRecord.parse(self._artifact(row.record_root))

    def _lookahead(self, sid: str) -> Lookahead:
        unsealed, reads = self.store.lookahead(sid)
        return Lookahead(
            sealed=not unsealed,
            reads=[LookaheadRead(seq=seq, bar=bar, read=what) for seq, bar, what in reads],
        )

    # -- grade ---------------------------------------------------------------------------

    def grade(self, principal: str, sid: str, budget: float) -> GradeResult | OperationResumption:
        """Grade a session (closing it first if it is still open), waiting up to
        ``budget`` seconds before answering with an ``OperationResumption``."""
        record = self.close(principal, sid)
        row = self.store.session(sid)
        if row is not None and row.grade_root is not None:
            stored = self.store.get(row.grade_root)
            if stored is not None:
                return GradeResult.parse(stored)
        live = self._sessions.get(principal, sid)
        loaded, closed = live.loaded, live.closed
        if closed is not None:
            bars = closed.engine.clock or 1
        else:
            bars = self._head_bar(record) or max(1, len(loaded.tape) - 1)

        def work(progress: Any) -> GradeResult:
            if closed is not None:  # closed here: its engine holds what a replay computes
                grade = measure_grade(loaded, record, closed.engine)
                progress(bars, bars)
            else:
                # loading the pentads is part of the work (and of its budget): a long
                # session has as many pentads as steps
                pentads, _ = self._pentads(record)
                grade = compute_grade(loaded, record, pentads, progress, bars=bars)
            self.store.set_grade(sid, grade.root, canonical_json(grade))
            return grade

        op = self._ops.start(operation_id(principal, record.root), principal, work, total=bars)
        result = self._ops.wait(op, budget)
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

    def _pentads(self, record: SessionRecord) -> tuple[list[Pentad], list[bytes]]:
        """The record's pentads and their canonical bytes (two lists in step, no pair
        object per pentad), rebuilt from the session's journal when every rebuilt root
        is the record's (then the bytes are the stored artifacts' bytes), else read from
        the artifacts, which reports any that is missing or corrupt; a pruned session's
        are refused as pruned (one closed here has their bytes from its close:
        :class:`.closed.Closed`).

        Reading and re-verifying each artifact costs ~40 us, most of a long grade.
        """
        sid = record.session
        pruned_at = self.store.pruned(sid)
        if pruned_at is not None:
            raise pruned_session(sid, pruned_at)
        entries = self.store.journal(sid)
        pentads: list[Pentad] = []
        texts: list[bytes] = []
        if len(entries) == len(record.pentads):
            build = builder(Pentad)  # one pentad per submission: the builder looked up once
            for entry, claimed in zip(entries, record.pentads, strict=True):
                source = entry.source
                try:
                    root, text = pentad_bytes(sid, entry.seq, entry.prev, source)
                except KestrelError:
                    break
                if root != claimed:
                    break
                texts.append(text)
                members = {
                    "session": sid,
                    "seq": entry.seq,
                    "prev": entry.prev,
                    "body": pentad_body(source),
                    "root": root,
                }
                pentads.append(build(members))
            else:
                return pentads, texts
        read = [Pentad.parse(self._artifact(root)) for root in record.pentads]
        return read, [canonical_json(pentad) for pentad in read]

    def resume(
        self, principal: str, token: str, budget: float
    ) -> GradeResult | OperationResumption:
        """Continue a grade by its token (one started by another process of the store,
        or before, is started again: its stored grade, or its work)."""
        try:
            op = self._ops.find(principal, token)
        except KestrelError:
            found = self.store.operation(token)  # started by another process, or before
            if found is None or found[0] != principal:
                raise
            return self.grade(principal, found[1], budget)  # the stored grade, or its work
        return self._ops.wait(op, budget)

    # -- proof ---------------------------------------------------------------------------

    def proof(self, principal: str, sid: str, budget: float, embed_tape: bool) -> Wire[Proof]:
        """The session's proof (see ``Runtime.proof``) as its canonical text, the object
        made when first asked for; ``budget``: the first wait.

        Its members are objects this runtime built or read and verified, so the proof's
        text is their canonical bytes spliced and rooted (:mod:`.engine.spliced`): no
        member is made an object for it (a gym episode's blotter and pentads were most
        of its end), and none is validated again."""
        graded = self.grade(principal, sid, budget)
        while isinstance(graded, OperationResumption):
            graded = self.resume(principal, graded.token, budget=60.0)
        record = self.close(principal, sid)
        live = self._sessions.get(principal, sid)
        loaded, closed = live.loaded, live.closed
        scenario = loaded.scenario
        if embed_tape and self._sealed(scenario.id):
            raise KestrelError(
                RefusalCode.SCENARIO_SEALED,
                f"scenario {scenario.id!r} is sealed: a proof cannot embed its tape; make "
                "the proof without embedding it, and verify it where the catalog holds the "
                "scenario",
                {"scenario": scenario.id, "tapeRoot": scenario.tape.root},
            )
        if closed is not None and closed.record.root != record.root:
            closed = None
        if closed is not None and closed.pentads is not None:
            texts = closed.pentads
        else:
            texts = self._pentads(record)[1]
        reference = ProofScenario(id=scenario.id, root=scenario.root, tape_root=scenario.tape.root)
        members: dict[str, bytes] = {
            "scenario": canonical_json(reference),
            "grade": canonical_json(graded),
            "pentads": array_bytes(texts),
        }
        if closed is not None:
            members["record"] = closed.record_bytes
            members["blotter"] = closed.blotter_bytes
            members["head"] = self._closed_head(closed.engine, scenario.id)
        else:
            members["record"] = canonical_json(record)
            members["blotter"] = canonical_json(Blotter.parse(self._artifact(record.blotter_root)))
            members["head"] = canonical_json(self._head(record, scenario.id))
        if embed_tape:
            what = f"tape {scenario.id} read (embedded in a proof)"
            self._horizons.shown(principal, scenario.id, len(loaded.tape) - 1, what)
            news = {} if loaded.news is None else {"news": loaded.news.render().decode("utf-8")}
            embedded = EmbeddedScenario(scenario=scenario, tape=tape_csv(loaded), **news)
            members["embedded"] = canonical_json(embedded)
        proof = Wire(Proof, spliced_bytes(Proof, members).decode("utf-8"), canonical=True)
        live.closed = None  # proved: what the close kept is no longer needed
        return proof

    def _closed_head(self, engine: SessionEngine, scenario_id: str) -> bytes:
        """The canonical bytes of the closed engine's frame (the record's head); a sealed
        scenario's without ``clock.remaining``."""
        text = engine.frame_text()
        if self._sealed(scenario_id) and not engine.sealed:
            text = sealed_frame_text(text)
        return text.encode("utf-8")

    def _head(self, record: SessionRecord, scenario_id: str) -> SessionFrame:
        """The record's head frame; a sealed scenario's without ``clock.remaining``."""
        head = SessionFrame.parse(self._artifact(record.head))
        return sealed_frame(head) if self._sealed(scenario_id) else head

    def proof_of_grade(self, grade_root: str, principal: str | None, budget: float) -> Wire[Proof]:
        """The proof of the session graded ``grade_root`` (see ``Runtime.proof_of_grade``)."""
        row = self.store.graded_session(grade_root, principal)
        if row is None:
            raise unknown_artifact(grade_root, "missing")
        return self.proof(row.principal, row.id, budget, embed_tape=False)


def _record(  # noqa: PLR0917 - a record's members, in its order
    sid: str,
    scenario: ScenarioRef,
    label: str,
    pentads: list[str],
    roots: tuple[str, str],
    lookahead: Lookahead,
) -> SessionRecord:
    """``SessionRecord.with_root`` of a closing session's members (``roots``: its head
    frame's and its blotter's), each made here, so rooted from their canonical bytes
    (:mod:`.engine.spliced`) without validating a pentad root each (a gym episode's
    2,519: 2.0 -> 0.3 ms)."""
    head, blotter_root = roots
    members: dict[str, Any] = {
        "session": sid,
        "scenario": scenario,
        "label": label,
        "status": "closed",
        "pentads": pentads,
        "head": head,
        "blotter_root": blotter_root,
        "lookahead": lookahead,
    }
    return spliced_rooted(
        SessionRecord, {name: (value, canonical_json(value)) for name, value in members.items()}
    )


def _pentad_texts(session_id: str, journal: list[JournalEntry]) -> list[bytes] | None:
    """The canonical bytes of ``journal``'s pentads, in its order, each rebuilt from its
    row as the store would rebuild it; None when some row's rebuilt root is not its
    journal root (the store then rebuilds them and the artifact reads as corrupt)."""
    texts: list[bytes] = []
    for entry in journal:
        try:
            root, text = pentad_bytes(session_id, entry.seq, entry.prev, entry.source)
        except KestrelError:
            return None
        if root != entry.pentad_root:
            return None
        texts.append(text)
    return texts
