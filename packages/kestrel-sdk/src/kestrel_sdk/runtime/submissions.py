"""The step path: check, apply, bind and persist one submission
(:meth:`.service.Runtime.submit`), catching up when another process advanced the session
and, on a forward scenario, waiting for a bar not yet published when asked to."""

from __future__ import annotations

from kestrel_protocol import (
    KestrelError,
    RefusalCode,
)
from kestrel_protocol.ports import FeedWaiter
from kestrel_protocol.store import JournalConflict, RuntimeStore

from .answered import Answered
from .bounds import check_open_orders, open_order_bound
from .catalog import ServedCatalog
from .feed import BarNotPublished, Feeds
from .grading import CONFLICT_RETRIES
from .horizon import Horizons
from .live import LiveSession, LiveSessions
from .pentads import pentad_root
from .sealed import sealed_frame_text

__all__ = ["Submissions"]


class Submissions:
    """Submissions to the sessions of one runtime (the lock of each session is taken
    inline, not through ``LiveSessions.locked``: this is the step path)."""

    def __init__(
        self,
        store: RuntimeStore,
        sessions: LiveSessions,
        horizons: Horizons,
        served: ServedCatalog,
        feeds: Feeds,
        *,
        waiter: FeedWaiter | None,
        max_open_orders: int,
    ) -> None:
        self._store = store
        self._sessions = sessions
        self._horizons = horizons
        self._served = served
        self._feeds = feeds
        self.waiter = waiter
        self.max_open_orders = max_open_orders
        # what the step path uses, reached in one lookup each
        self._live = sessions.live
        self._session = sessions.get
        self._usable = sessions.usable
        self._forget = sessions.forget
        self._shared = store.shared  # other processes share the store: check the head

    def submit(self, principal: str, sid: str, source: str, wait: float | None = None) -> Answered:
        """The submission's response as its JSON text (see
        :meth:`.service.Runtime.submit`)."""
        conflicts = 0
        waited = False
        while True:
            live = self._live.get(sid)
            if live is None or live.row.principal != principal:
                live = self._session(principal, sid)
            else:
                try:  # noqa: SIM105 - the step path (LiveSessions.touch, inline)
                    self._live.move_to_end(sid)
                except KeyError:  # evicted meanwhile by another thread: _step sees it dead
                    pass
            try:
                with live.lock:
                    done = self._step(live, sid, source)
            except BarNotPublished as refused:
                seconds = max(wait or 0.0, refused.wait_ms / 1000)
                if waited or seconds <= 0 or self.waiter is None:
                    raise
                waited = True
                # the bars came, the feed froze or the time ran out (a gap in the tape
                # may have reached an ``advance to`` sooner): the edge decides once more
                self.waiter.wait(live.row.scenario_id, refused.needed, seconds)
                continue
            except JournalConflict:
                conflicts += 1
                if conflicts < CONFLICT_RETRIES:
                    continue  # another process advanced it: catch up, apply after
                raise KestrelError(
                    RefusalCode.BACKEND_UNAVAILABLE,
                    f"session {sid} is being advanced by other processes without "
                    "pause; read its frame and submit again",
                    {"session": sid},
                ) from None
            if done is not None:
                break
            # else ``live`` was stale (forgotten, or behind the store): rebuilt next pass
        return done

    def _step(self, live: LiveSession, sid: str, source: str) -> Answered | None:
        """Check, apply and persist ``source`` on ``live``, whose lock the caller holds:
        what it made, or ``None`` when ``live`` is stale (a refusal is first checked to
        be the store's session's, not an old copy's). A refused source changes
        nothing; when applying or persisting fails, ``live`` is forgotten (the engine
        moved but nothing was persisted): the next touch replays the journal, which
        holds exactly what was accepted. ``JournalConflict``: another process appended
        first."""
        if live.dead or (self._shared and not self._usable(live)):
            return None
        engine = live.engine
        if engine is None:
            if not self._usable(live, fresh=True):  # discarded by another process
                return None
            raise KestrelError(
                RefusalCode.SESSION_CLOSED, f"session {sid} is closed", {"session": sid}
            )
        try:
            program = engine.check(source)
            if live.loaded.forward:
                self._feeds.to_edge(live, program, self._sessions.extend)
            if program.places:
                bound = open_order_bound(self.max_open_orders, live.loaded.max_open_orders)
                check_open_orders(engine, program, bound)
        except BarNotPublished:
            raise
        except KestrelError:
            # A refusal is answered from a copy current with the store alone: one that
            # another process moved on (caught up now, or to be rebuilt) checks again.
            seq = engine.seq
            if self._usable(live, fresh=True) and engine.seq == seq:
                raise
            return None
        clock = engine.clock
        seq = engine.seq + 1
        prev = live.frame_root
        root = pentad_root(sid, seq, prev, source)
        before = engine.status
        marks = live.marks  # what the append marks by the horizon row it reads
        if marks is None:
            marks = live.marks = self._horizons.marks(live)
        try:
            step = engine.apply(program)
            frame_root = engine.frame_root()
            after = engine.status
            status = after if after != before else None
            self._store.append(
                sid,
                seq,
                source,
                root,
                frame_root,
                prev=prev,
                status=status,
                clock=engine.clock,
                horizon=marks.key,
                marks=marks.at(seq, clock, engine.clock),
            )
        except BaseException:
            self._forget(live)
            raise
        live.frame_root = frame_root
        if marks.noted:
            live.behind = True
        frame = step.text
        if not engine.sealed and self._served.sealed(live.loaded.scenario.id):
            # opened before its scenario was sealed: served without the tape's length
            frame = sealed_frame_text(frame)
        return Answered(sid, seq, prev, source, root, step, frame, frame_root)
