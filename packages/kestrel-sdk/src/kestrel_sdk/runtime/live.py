"""Sessions in memory: the cache of live engines, and their replay from the journal.

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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from kestrel_protocol import KestrelError, RefusalCode, SessionRecord
from kestrel_protocol.store import JournalEntry, RuntimeStore, SessionRow

from .catalog.model import LoadedScenario
from .closed import Closed
from .engine import SessionEngine, chain_engine
from .horizon import Marks
from .pentads import pentad_root
from .session_waits import SESSION_WAITS, SessionBusy

__all__ = ["LiveSession", "LiveSessions", "default_max_live_sessions"]

log = logging.getLogger(__name__)


def default_max_live_sessions() -> int:
    """Open engines kept in memory by default: 1000 per 4 GiB of RAM, at least 100."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1000
    return max(100, min(100_000, 1000 * total // (4 << 30)))


@dataclass(eq=False)
class LiveSession:
    """A session in memory: its row and, while not closed, its engine and head root;
    once this process closed it, what the close computed (until its proof is made)."""

    row: SessionRow
    loaded: LoadedScenario
    engine: SessionEngine | None
    frame_root: str
    lock: threading.Lock
    dead: bool = False  # stale or evicted: rebuild before use (checked under ``lock``)
    behind: bool = False  # a submission was made behind the principal's horizon (noted)
    marks: Marks | None = None
    """What its submissions mark by the horizon row they read (``Horizons.marks``: the
    row is the principal's and the scenario's lineage, fixed for a runtime's life), once
    made."""
    closed: Closed | None = None


class LiveSessions:
    """The sessions of one runtime in memory, rebuilt from ``store`` when not cached.

    ``loaded`` and ``sealed`` are the runtime's catalog (a scenario by id, and whether
    it is sealed), ``artifact`` its reader of a stored object by root (refusing one not
    served).
    """

    def __init__(
        self,
        store: RuntimeStore,
        max_live_sessions: int,
        loaded: Callable[[str], LoadedScenario],
        sealed: Callable[[str], bool],
        artifact: Callable[[str], dict[str, Any]],
    ) -> None:
        self.store = store
        self.max_live_sessions = max_live_sessions
        self._loaded = loaded
        self._sealed = sealed
        self._artifact = artifact
        self._lock = threading.RLock()
        self.live: OrderedDict[str, LiveSession] = OrderedDict()  # least recently used first
        self._building: dict[str, threading.Lock] = {}

    def get(self, principal: str, sid: str) -> LiveSession:
        """The session in memory, rebuilt by replay when this process has not seen it
        (or evicted it). ``SessionBusy`` when another thread is replaying it and this
        call may not wait (:mod:`.session_waits`)."""
        live = self.live.get(sid)
        if live is not None and live.row.principal == principal:
            self.touch(sid)
            return live
        if live is None:
            with self._lock:
                building = self._building.setdefault(sid, threading.Lock())
            # one replay per session (other sessions are not held up); a call that may not
            # wait for another thread's replay raises SessionBusy (taking it is the check)
            if not building.acquire(blocking=SESSION_WAITS.get()):
                raise SessionBusy(sid)
            try:
                live = self.live.get(sid)
                if live is None:
                    row = self.store.session(sid)
                    if row is not None and row.principal == principal:
                        live = self._rebuild(row)
                        self._keep(live)
            finally:
                building.release()
                with self._lock:
                    if self._building.get(sid) is building:
                        del self._building[sid]
        if live is None or live.row.principal != principal:
            raise KestrelError(RefusalCode.UNKNOWN_SESSION, f"no session {sid}", {"session": sid})
        return live

    def touch(self, sid: str) -> None:
        """Mark the session most recently used."""
        try:  # noqa: SIM105 - the step path: cheaper than suppress()
            self.live.move_to_end(sid)
        except KeyError:  # evicted meanwhile by another thread
            pass

    def _keep(self, live: LiveSession) -> None:
        """Cache ``live``, evicting the least recently used sessions beyond the limit.

        A session in use (its lock held) is skipped; one evicted is marked dead under its
        lock, so whoever fetched it before rebuilds it instead of using a stale engine.
        """
        with self._lock:
            self.live[live.row.id] = live
            excess = len(self.live) - self.max_live_sessions
            if excess <= 0:
                return
            for old in list(self.live.values()):
                if excess <= 0 or old is live:
                    break
                if old.lock.acquire(blocking=False):
                    old.dead = True
                    del self.live[old.row.id]
                    old.lock.release()
                    excess -= 1

    def _rebuild(self, row: SessionRow) -> LiveSession:
        loaded = self._loaded(row.scenario_id)
        if loaded.scenario.root != row.scenario_root:
            raise KestrelError(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"session {row.id} was opened on scenario {row.scenario_id} with root "
                f"{row.scenario_root}, but this catalog has {loaded.scenario.root}",
                {"session": row.id},
            )
        if row.status == "closed":
            assert row.record_root is not None
            record = SessionRecord.parse(self._artifact(row.record_root))
            return LiveSession(row, loaded, None, record.head, threading.Lock())
        sealed = self._sealed(loaded.id)
        if not sealed:  # served unsealed by this process
            self.store.note_unsealed(row.id)
        journal = self.store.journal(row.id)
        # the form of its frames: the journal's first row binds the opening root; with
        # no row yet, as this runtime serves the scenario (see .engine.chain)
        first = journal[0].prev if journal and journal[0].seq == 1 else None
        engine = chain_engine(loaded, row.id, first, sealed=sealed)
        frame_root = _replay(row.id, engine, engine.frame_root(), journal)
        log.debug("resumed session %s at seq %d", row.id, engine.seq)
        return LiveSession(row, loaded, engine, frame_root, threading.Lock())

    def current(self, live: LiveSession) -> bool:
        """Bring a cached session (its lock held) up to the store's head: replay the
        journal rows it lacks. ``False`` when it must be rebuilt instead: closed or
        discarded elsewhere, behind in a way replay cannot mend, or no longer the
        session the store holds under its id (discarded and opened again elsewhere:
        another chain, told by its frames: the head's, or the row at the copy's seq)."""
        engine = live.engine
        sid = live.row.id
        if engine is None:  # closed is final, but another process may have discarded it
            row = self.store.session(sid)  # (and opened its label again)
            return row is not None and row.record_root == live.row.record_root
        head = self.store.head(sid)
        seq = engine.seq
        if head is None or head.status == "closed" or head.seq < seq:
            return False
        if head.seq == seq:  # the same frame, or another chain under the id
            return not seq or head.frame_root == live.frame_root
        try:
            # from the row the copy is at (its frame), or after row 0 (its opening frame)
            entries = self.store.journal(sid, after=seq - 1 if seq else 0)
            if seq:
                if not entries or entries[0].seq != seq or entries[0].frame_root != live.frame_root:
                    return False  # another chain under the id (discarded, opened again)
                del entries[0]
            elif entries and entries[0].prev != live.frame_root:
                return False  # another process began its chain in the other form: rebuild
            if entries:
                if live.loaded.forward:  # another process may have advanced it into new bars
                    self.extend(live)
                live.frame_root = _replay(sid, engine, live.frame_root, entries)
        except BaseException:
            self.forget(live)
            raise
        log.debug("caught session %s up to seq %d", sid, engine.seq)
        return True

    def extend(self, live: LiveSession) -> None:
        """Extend a forward session's engine (its lock held) with the bars published
        since it last looked (read from the store: appended by any process)."""
        engine = live.engine
        loaded = self._loaded(live.row.scenario_id)
        if engine is not None and len(loaded.tape) > len(live.loaded.tape):
            engine.extend(loaded)
            live.loaded = loaded

    def forget(self, live: LiveSession) -> None:
        """Drop a session whose engine may be stale: its next touch rebuilds it."""
        live.dead = True
        with self._lock:
            if self.live.get(live.row.id) is live:
                del self.live[live.row.id]

    @contextmanager
    def locked(self, principal: str, sid: str) -> Iterator[LiveSession]:
        """The session, locked for one operation and current with the store (rebuilt if
        a failure, an eviction or another process left it stale). ``SessionBusy`` when
        another call holds it and this one may not wait (:mod:`.session_waits`)."""
        while True:
            live = self.get(principal, sid)
            if not live.lock.acquire(blocking=SESSION_WAITS.get()):
                raise SessionBusy(sid)
            try:
                if self.usable(live, fresh=True):
                    yield live
                    return
            finally:
                live.lock.release()

    def usable(self, live: LiveSession, *, fresh: bool = False) -> bool:
        """Whether ``live`` (its lock held) can serve: not forgotten and, when other
        processes share the store (or ``fresh``: a read, which must reflect every
        submission any process acknowledged before it began, a SQLite file included),
        current with it (else forgotten here). A session that is not usable is rebuilt
        by the next :meth:`get`."""
        if live.dead:
            return False
        if (fresh or self.store.shared) and not self.current(live):
            self.forget(live)
            return False
        return True

    def clock(self, principal: str, sid: str) -> int:
        """The clock bar session ``sid`` has reached (open or closed) in the store: a
        closed session's is its head frame's (read without its scenario: this catalog
        may lack it); a copy this process holds of an open one is first brought up to
        the session's journal head (or rebuilt, when another process closed it), never
        trusted as it is."""
        row = self.store.session(sid)
        if row is not None and row.principal == principal and row.record_root is not None:
            head = SessionRecord.parse(self._artifact(row.record_root)).head
        else:
            with self.locked(principal, sid) as live:
                engine = live.engine
                if engine is not None:
                    return engine.clock
                head = live.frame_root
        clock = self._artifact(head).get("clock")
        bar = clock.get("bar") if isinstance(clock, dict) else None
        return bar if isinstance(bar, int) else 0

    def resume_all(self) -> list[str]:
        """Replay every open session now (rather than on first touch); their ids."""
        resumed = []
        for row in self.store.sessions():
            if row.status != "closed":
                self.get(row.principal, row.id)
                resumed.append(row.id)
        return resumed


def _replay(sid: str, engine: SessionEngine, frame_root: str, entries: list[JournalEntry]) -> str:
    """Apply journal ``entries`` to ``engine`` (at ``frame_root``), checking every root
    against the journal; the new head root."""
    for entry in entries:
        if entry.seq != engine.seq + 1:
            raise _diverged(sid, entry.seq, "seq", str(engine.seq + 1), str(entry.seq))
        if entry.prev != frame_root:
            raise _diverged(sid, entry.seq, "prev", frame_root, entry.prev)
        try:
            root = pentad_root(sid, entry.seq, entry.prev, entry.source)
        except KestrelError:
            root = "corrupt"
        if root != entry.pentad_root:
            raise _diverged(sid, entry.seq, "pentad", entry.pentad_root, root)
        frame_root = engine.replay(entry.source)
        if frame_root != entry.frame_root:
            raise _diverged(sid, entry.seq, "frameRoot", entry.frame_root, frame_root)
    return frame_root


def _diverged(sid: str, seq: int, field: str, expected: str, found: str) -> KestrelError:
    log.error(
        "session %s cannot be resumed: replay diverged at seq %d (%s expected %s, found %s)",
        sid,
        seq,
        field,
        expected,
        found,
    )
    return KestrelError(
        RefusalCode.BACKEND_UNAVAILABLE,
        f"session {sid} cannot be resumed: its replay diverged at seq {seq} ({field})",
        {"session": sid, "seq": seq, "field": field},
    )
