"""The memory ``RuntimeStore``: everything in this process's memory, nothing on disk.

``--store memory:`` / ``KESTREL_STORE=memory:`` / ``local_transport(store="memory:")``.
The store for training loops, parameter sweeps and tests: an accepted submission costs a
list append, not a commit, and nothing survives the process (each ``memory:`` store a
process opens is a new, empty one). What it holds is what the SQLite and PostgreSQL
adapters hold (sessions, the journal, content-addressed artifacts, lookahead reads,
operation tokens) under the same contract: a pentad, record, grade or proof made here
has the same root as anywhere, and a proof exported from it verifies on any store.

Its rows are kept as the other adapters keep them (a session's journal is its row 0, the
opening frame's root, then one row per submission), and everything it derives from them
(journal entries, a closing session's pentads, lookahead reads) is :mod:`.rows`'s,
as theirs is. A lookup still verifies what it serves against its root: a memory store
never serves a lie either. One lock serialises its methods, so the event loop and worker
threads may share it. Its tables are :mod:`.memory_tables`'s, its forward tapes
:mod:`.memory_feed`'s, its housekeeping (prune, discard) :mod:`.memory_housekeeping`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from kestrel_protocol import canonical_json
from kestrel_protocol.store import (
    MEMORY_URL,
    Adopted,
    ArtifactStatus,
    Horizon,
    JournalConflict,
    JournalEntry,
    Reached,
    SessionHead,
    SessionRow,
    StepMarks,
)

from ..artifacts import checked_root, verified_artifact
from ..pentads import stored_pentad_bytes
from .memory_feed import MemoryFeeds
from .memory_housekeeping import MemoryHousekeeping
from .memory_tables import MemorySession
from .rows import closing_rows, journal_entries, lookahead_reads

__all__ = ["MemoryStore"]


class MemoryStore(MemoryFeeds, MemoryHousekeeping):
    """The ``RuntimeStore`` port in this process's memory (``memory:``)."""

    shared = False  # one process: its sessions are serialised by the runtime that serves them
    location = MEMORY_URL

    def __init__(self) -> None:
        self._lock = threading.RLock()
        super().__init__(self._lock)
        self._sessions = {}
        self._artifacts = {}
        self._owners = {}
        self._pentads = {}
        self._graded = {}
        self._horizons = {}
        self._operations = {}

    def close(self) -> None:
        """Forget everything (idempotent): nothing survives the store."""
        with self._lock:
            for table in (self._sessions, self._artifacts, self._owners, self._pentads):
                table.clear()
            self._graded.clear()
            self.forget_feeds()
            self._horizons.clear()
            self._operations.clear()

    # -- artifacts ------------------------------------------------------------------------

    def put(self, obj: Mapping[str, Any]) -> str:
        root = checked_root(obj)
        self.put_raw(root, canonical_json(obj))
        return root

    def put_raw(self, root: str, body: bytes) -> None:
        with self._lock:
            self._artifacts[root] = body

    def lookup(
        self, root: str, principal: str | None = None
    ) -> tuple[dict[str, Any] | None, ArtifactStatus]:
        """As every adapter: with ``principal``, only an artifact of one of its sessions
        is found (another's is ``missing``, as a root never stored)."""
        with self._lock:
            body = self._artifacts.get(root)
            if body is not None and principal is not None and not self._owned(root, principal):
                body = None
            if body is None:
                body = self._journal_pentad(root, principal)
        if body is None:
            return None, "missing"
        return verified_artifact(root, body, MEMORY_URL)

    def _owned(self, root: str, principal: str) -> bool:
        sessions = self._sessions
        return any(sessions[sid].row.principal == principal for sid in self._owners.get(root, ()))

    def _journal_pentad(self, root: str, principal: str | None) -> bytes | None:
        """An open (or closed) session's pentad rebuilt from its journal row."""
        found = self._pentads.get(root)
        if found is None:
            return None
        sid, seq = found
        session = self._sessions[sid]
        if principal is not None and session.row.principal != principal:
            return None
        journal = session.journal
        if seq >= len(journal):
            return b""
        _, source, _, _ = journal[seq]
        return stored_pentad_bytes(sid, seq, journal[seq - 1][3], source)

    def get(self, root: str) -> dict[str, Any] | None:
        return self.lookup(root)[0]

    def has(self, root: str) -> bool:
        return self.lookup(root)[1] == "ok"

    # -- sessions and the journal ---------------------------------------------------------

    def session(self, session_id: str) -> SessionRow | None:
        with self._lock:
            found = self._sessions.get(session_id)
        return None if found is None else found.row

    def graded_session(self, grade_root: str, principal: str | None = None) -> SessionRow | None:
        with self._lock:
            sid = self._graded.get(grade_root)
            row = None if sid is None else self._sessions[sid].row
        if row is None or (principal is not None and row.principal != principal):
            return None
        return row

    def sessions(self, status: str | None = None) -> list[SessionRow]:
        with self._lock:
            rows = [s.row for s in self._sessions.values()]
        return rows if status is None else [r for r in rows if r.status == status]

    def sessions_of(self, principal: str) -> list[SessionRow]:
        with self._lock:
            return [s.row for s in self._sessions.values() if s.row.principal == principal]

    def labels(self, principal: str, scenario_root: str) -> set[str]:
        with self._lock:
            return {
                s.row.label
                for s in self._sessions.values()
                if s.row.principal == principal and s.row.scenario_root == scenario_root
            }

    def insert_session(self, row: SessionRow) -> bool:
        with self._lock:
            if row.id in self._sessions:
                return False
            key = (row.principal, row.scenario_root, row.label)
            if any(
                (s.row.principal, s.row.scenario_root, s.row.label) == key
                for s in self._sessions.values()
            ):
                return False
            self._sessions[row.id] = MemorySession(row)
            return True

    def head(self, session_id: str) -> SessionHead | None:
        with self._lock:
            found = self._sessions.get(session_id)
            if found is None:
                return None
            journal = found.journal
            last = journal[-1][3] if journal else None
            return SessionHead(max(len(journal) - 1, 0), found.row.status, last)

    def append(
        self,
        session_id: str,
        seq: int,
        source: str,
        pentad_root: str,
        frame_root: str,
        *,
        prev: str,
        status: str | None = None,
        clock: int | None = None,
        horizon: tuple[str, str] | None = None,
        marks: StepMarks | None = None,
    ) -> Horizon | None:
        """Keep one accepted submission (and ``clock``, the bar it reached, as its
        session's last); a taken seq, or a closed session, raises ``JournalConflict`` and
        keeps nothing. With ``horizon``, that horizon row, and ``marks`` written by it
        (under the same hold)."""
        with self._lock:
            found = self._sessions.get(session_id)
            if found is None:
                raise KeyError(f"no session {session_id}")
            journal = found.journal
            if found.row.status == "closed" or len(journal) != (seq if seq > 1 else 0):
                raise JournalConflict(f"session {session_id} is not at seq {seq - 1}")
            if seq > 1 and journal[-1][3] != prev:  # another session under the same id
                raise JournalConflict(f"session {session_id} is not at frame {prev}")
            if seq == 1:
                journal.append((0, "", "", prev))
            journal.append((seq, source, pentad_root, frame_root))
            found.bar = clock
            self._pentads.setdefault(pentad_root, (session_id, seq))
            if status is not None:
                found.row = replace(found.row, status=status)
            if horizon is None:
                return None
            row = self._horizons.get(horizon)
            if marks is not None and row is not None:
                marks.mark(row)
            return row

    def journal(self, session_id: str, after: int = 0) -> list[JournalEntry]:
        with self._lock:
            found = self._sessions.get(session_id)
            if found is None:
                raise KeyError(f"no session {session_id}")
            rows = found.journal[after:]
        return journal_entries(rows, after)

    def finish(
        self,
        session_id: str,
        journal: list[JournalEntry],
        artifacts: Mapping[str, bytes],
        record_root: str,
    ) -> None:
        """Close a session at once (see ``SqliteStore.finish``); when the journal moved
        past ``journal`` meanwhile, ``JournalConflict`` and nothing kept."""
        pentads, owned = closing_rows(session_id, journal, artifacts)
        with self._lock:
            found = self._sessions.get(session_id)
            if found is None:
                raise KeyError(f"no session {session_id}")
            if max(len(found.journal) - 1, 0) != (journal[-1].seq if journal else 0):
                raise JournalConflict(f"session {session_id} moved past {journal[-1:]}")
            self._artifacts.update(pentads)
            self._artifacts.update(artifacts)
            self._own(owned, session_id)
            found.row = replace(found.row, status="closed", record_root=record_root)

    def _own(self, roots: Iterable[str], session_id: str) -> None:
        """``session_id`` among the owners of each of ``roots`` (a closing session owns
        one per submission, so one call for all). The roots it alone owns share one
        tuple: a closing gym episode's 2,500 tuples were as many allocations the cycle
        collector counts toward its next collection, while the session's journal entries
        are alive (a collection then moves them to its oldest generation)."""
        owners = self._owners
        alone = (session_id,)
        for root in roots:
            had = owners.get(root)
            if had is None:
                owners[root] = alone
            elif session_id not in had:
                owners[root] = (*had, session_id)

    def set_grade(self, session_id: str, grade_root: str, body: bytes) -> None:
        with self._lock:
            found = self._sessions[session_id]
            self._artifacts[grade_root] = body
            self._own((grade_root,), session_id)
            found.row = replace(found.row, grade_root=grade_root)
            self._graded[grade_root] = session_id

    # -- lookahead ------------------------------------------------------------------------

    def note_unsealed(self, session_id: str) -> None:
        with self._lock:
            reads = self._sessions[session_id].reads
            if not any(what == "unsealed" for _, _, what in reads):
                reads.append((0, 0, "unsealed"))

    def add_read(self, session_id: str, seq: int, bar: int, what: str) -> None:
        with self._lock:
            reads = self._sessions[session_id].reads
            if any(s <= seq for s, _, w in reads if w != "unsealed"):
                return
            reads[:] = [r for r in reads if r[2] == "unsealed"] + [(seq, bar, what)]

    def lookahead(self, session_id: str) -> tuple[bool, list[tuple[int, int, str]]]:
        with self._lock:
            found = self._sessions.get(session_id)
            reads = [] if found is None else list(found.reads)
        return lookahead_reads(reads)

    # -- horizons -------------------------------------------------------------------------

    def horizon(self, principal: str, scenario_id: str) -> Horizon | None:
        with self._lock:
            return self._horizons.get((principal, scenario_id))

    def raise_horizon(self, principal: str, scenario_id: str, bar: int, what: str) -> None:
        """Raise the horizon to ``bar`` (shown by ``what``); a lower bar changes nothing."""
        with self._lock:
            key = (principal, scenario_id)
            found = self._horizons.get(key)
            if found is None:
                self._horizons[key] = Horizon(bar, what, 0)
            elif bar > found.bar:
                self._horizons[key] = Horizon(bar, what, found.sessions)

    def adopt_horizons(self, keys: Callable[[], Mapping[str, str]]) -> list[Adopted]:
        """Nothing to re-key: a memory store is never from before lineage tags."""
        return []

    def keep_bar(self, session_id: str, bar: int) -> None:
        """Nothing to keep: a memory store's steps always kept their bar."""

    def reached(self, principal: str, key: str) -> list[Reached]:
        """The principal's sessions on the lineage ``key`` and the bar each last reached."""
        with self._lock:
            return [
                Reached(s.row.id, s.row.scenario_id, s.row.label, s.row.status == "closed", s.bar)
                for s in self._sessions.values()
                if s.lineage == key and s.row.principal == principal
            ]

    def count_session(
        self, principal: str, scenario_id: str, session_id: str, *, short: bool = False
    ) -> int | None:
        """Count the session on its principal's row unless it was counted (``None``);
        how many now. (A memory store is never from before the flag: ``short`` is moot.)"""
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None or session.lineage is not None:
                return None
            session.lineage = scenario_id
            key = (principal, scenario_id)
            found = self._horizons.get(key, Horizon(-1, "", 0))
            self._horizons[key] = replace(found, sessions=found.sessions + 1)
            return found.sessions + 1

    # -- operations -----------------------------------------------------------------------

    def put_operation(self, token: str, principal: str, session_id: str) -> None:
        with self._lock:
            self._operations.setdefault(token, (principal, session_id))

    def operation(self, token: str) -> tuple[str, str] | None:
        with self._lock:
            return self._operations.get(token)
