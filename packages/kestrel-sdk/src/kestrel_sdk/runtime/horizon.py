"""Horizons: how far each principal has been shown each scenario, and the lookahead it
makes.

Per (principal, scenario) the store keeps one row: the furthest bar that principal has
been shown by any face (a session's frames and everything read up to its clock, the
tape, a proof embedding it) and what showed it. A session fails ``no-lookahead`` when,
at one of its submissions (the first included), that horizon was beyond its own clock:
the first such submission is remembered with what had shown the later bar ("session
ks_… of the same principal had reached bar 2519", "tape acme-trend read"); the store
keeps the first, whichever process noted it. Reads before the session was opened count
as well, since the row outlives sessions.

Every decision here reads the store, never what this process holds in memory, since
other processes on the same store (a ``kestrel`` beside a ``kestrel-mcp``, door replicas
on one PostgreSQL) move sessions on and close them: the horizon row at each submission,
the count of the principal's sessions, the principal's sessions on the lineage (each
keeps the lineage's key once counted) and another session's clock, which its journal's
last row keeps (written by the step, one more value of its row: no replay; a closed
session's head frame, or a replay for rows of a store from before). A scout cached here
at bar 0 and run to the end by another process is therefore seen at its end when a
second session opens here.

What a submission marks by the row (the note, the raise: :class:`Marks`) is written by
the store's append with its journal row, in one transaction (under the store's hold in
memory): a process killed between the two would leave an accepted step unmarked, and
its session passing ``no-lookahead``.

Cost, O(1) per read and per submission: a read that shows bars past a clock (the tape)
raises the row once; a submission reads the row after its journal row is written and
raises it only when the principal has more than one session on the scenario and its
new clock is beyond the row. While a principal has a single session on a scenario its
own frames cannot be ahead of its own clock, so nothing is written; when a second
session opens, the clocks of the principal's earlier sessions on the scenario are
written once (catching a copy up replays only the journal rows it lacks, once per
opening, never per submission). Reading the row after the journal append (and counting
a session before reading the earlier clocks from the store) leaves no step unseen
between two processes: either the step's read sees the count, or the opener's read sees
the step. That needs the read ordered with the step's commit against the count. Where one
writer commits at a time (SQLite; memory's hold) a read in the step's transaction is. On
PostgreSQL the read, made in the step's transaction before its commit, locks the row
(``FOR UPDATE``) until that commit: the count (an update of the row) either committed
before the read, which sees it, or waits for the step's commit, after which the opener
reads the other sessions' clocks and sees the step. (Unlocked, both could miss: the step
reading one session, the opener the clock before the step committed; hence the read was
once made after the commit, and the marks after it, unwritten by a process killed
between.) A raise by another process (a scout's clock, a tape read) is ordered the same
way: committed before the read, the step sees it and is noted behind; else it waits for
the step, which came before it (its next submission sees it, as a read after the commit
met a raise made just after). A step ahead raises the row it holds. ``FOR UPDATE``, not
``FOR SHARE``: two sessions of a principal stepping at once (two replicas), each sharing
the row and then raising it, would wait for each other (a deadlock, one step failed);
locked outright they take turns from read to commit. No cycle: a step's other locks are
its own session's (its row ``FOR SHARE``, the note's advisory lock), which nothing holds
while waiting for the horizon row, and a count or a lone raise holds the row alone.

Lineages: a scenario, its disguised twins and the scenarios of the same bars
(:mod:`.catalog.lineage`) share one row, keyed by the lineage's tag (a forward
scenario's id), which every process computes alike from the bars whatever else its
catalog holds, since their bars map one to one by index: a principal shown bars of one
twin past a session's clock has been shown them in all. The clocks an opening writes are
those of the principal's sessions on every twin, found by that key in the store
(``RuntimeStore.reached``), a twin this catalog lacks included (a scout run alone on an
import only another runtime's catalog holds). A store from before kept rows by scenario
ids, and sessions without their key or their journal's bars; each runtime re-keys, as it
starts, those its catalog's ids name, keeping the bar each open one reached
(:meth:`Horizons.adopt`).
What showed them is named with the twin it was shown on ("tape goog read", "session ks_…
on goog of the same principal had reached bar 2519"), so ``no-lookahead`` on a disguise
says which twin was seen. The sessions counted are the
principal's on every twin.

Frames, histories and blotters show no bar after their session's clock, and artifacts
are a principal's own sessions' objects, so none of them moves a horizon beyond the
clocks already counted.

The runtime owns its horizons beside its sessions in memory (:mod:`.live`) and hands
them what they need: a session's clock as read from the store (``clock``) and, at each
submission, the session as a :class:`Submitter` (its row and whether it was noted
behind); nothing here imports the sessions' cache.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from kestrel_protocol import KestrelError
from kestrel_protocol.store import Horizon, RuntimeStore, SessionRow

if TYPE_CHECKING:
    from .catalog.lineage import Lineages

__all__ = ["Horizons", "Marks", "Submitter"]

log = logging.getLogger(__name__)


class Submitter(Protocol):
    """What the horizons see of a session that made a submission."""

    @property
    def row(self) -> SessionRow: ...

    behind: bool
    """A submission of the session was made behind the principal's horizon (noted)."""


class Horizons:
    """The horizons of one runtime's principals, kept in ``store``; ``clock(principal,
    sid)`` is the clock bar session ``sid`` has reached (open or closed) in the store."""

    def __init__(
        self,
        store: RuntimeStore,
        clock: Callable[[str, str], int],
        lineages: Callable[[], Lineages] | None = None,
    ) -> None:
        self.store = store
        self._clock = clock
        self._lineages = lineages

    def _key(self, scenario_id: str) -> str:
        """The row's key: the scenario's lineage (:mod:`.catalog.lineage`)."""
        return scenario_id if self._lineages is None else self._lineages().key(scenario_id)

    def adopt(self) -> None:
        """Re-key the rows an upgraded store kept by the ids of this catalog's scenarios
        (``RuntimeStore.adopt_horizons``; the catalog is loaded only when rows wait).
        Each open session given its key whose journal kept no bar (stepped only before
        the upgrade) is replayed here, once, and its clock bar kept in its last journal
        row (``RuntimeStore.keep_bar``): from then every runtime reads it from the store,
        its catalog holding the session's twin or not, and none replays it to know it.
        Where a row joined a row counting sessions, the principal's sessions on the
        lineage are now compared, so their clocks are written, as a second session's
        opening writes them (each named with its twin: no opening names the scenario
        traded). A session that cannot be replayed now (its tape changed since it was
        listed) is logged once, keeps no bar and writes no clock, and is read as before,
        by replay where a catalog holds it: the others' clocks are written and the start
        goes on."""
        lineages = self._lineages
        if lineages is None:
            return
        adopted = self.store.adopt_horizons(lambda: lineages().keys())
        unreplayed: set[str] = set()

        def clock(principal: str, sid: str) -> int | None:
            try:
                return self._clock(principal, sid)
            except KestrelError as error:  # its tape is not served now: the start goes on
                if sid not in unreplayed:
                    unreplayed.add(sid)
                    log.warning("session %s: no clock bar kept (not replayed: %s)", sid, error)
                return None

        for row in adopted:
            for sid in row.unbarred:
                bar = clock(row.principal, sid)
                if bar is not None:
                    self.store.keep_bar(sid, bar)
        for row in adopted:
            if row.joined:
                self._clocks(row.principal, row.scenario_id, "", named=True, read=clock)

    def shown(self, principal: str, scenario_id: str, bar: int, what: str) -> None:
        """``principal`` was shown bars of the scenario up to ``bar`` by ``what``."""
        self.store.raise_horizon(principal, self._key(scenario_id), bar, what)

    def opened(self, principal: str, scenario_id: str, scenario_root: str, sid: str) -> None:
        """Count the session ``sid`` just opened (once, whoever else counts it: another
        replica opening its label meanwhile); the second one on a lineage writes the
        clocks the principal's earlier sessions on its twins reached."""
        if self.store.count_session(principal, self._key(scenario_id), sid) == 2:
            self._clocks(principal, scenario_id, sid)

    def resumed(self, principal: str, scenario_id: str, scenario_root: str, sid: str) -> None:
        """Session ``sid``, open and never stepped, was found under its label: what its
        opening writes is written now if it was not (a process killed as it opened it,
        after its row: the session uncounted, or counted second without the earlier
        clocks), else its steps would be checked against a horizon that never saw the
        principal's other sessions. The store counts a session once, whoever counts it
        (its opener, this, another replica resuming it at once); a session of a store
        from before it kept that is counted only when the principal's sessions outnumber
        the row's count (``short``). Clocks only raise the row."""
        key = self._key(scenario_id)
        horizon = self.store.horizon(principal, key)
        had = 0 if horizon is None else horizon.sessions
        twins = self._twins(scenario_id, scenario_root)
        short = had < sum(len(self.store.labels(principal, root)) for _, root in twins)
        counted = self.store.count_session(principal, key, sid, short=short)
        if counted == 2 or (counted is None and had >= 2):
            self._clocks(principal, scenario_id, sid)

    def _twins(self, scenario_id: str, scenario_root: str) -> list[tuple[str, str]]:
        """The scenario's lineage: each twin's id and root (itself alone, without one)."""
        twins = [(scenario_id, scenario_root)]
        if self._lineages is not None:
            twins = [(t.id, t.scenario.root) for t in self._lineages().twins(scenario_id)] or twins
        return twins

    def _clocks(
        self,
        principal: str,
        scenario_id: str,
        sid: str,
        named: bool = False,
        read: Callable[[str, str], int | None] | None = None,
    ) -> None:
        """Write the clocks the principal's sessions on the lineage other than ``sid``
        reached, found by the lineage's key whatever twin they ran on and whatever this
        catalog holds (``RuntimeStore.reached``), each named with its twin unless it is
        ``scenario_id`` (every one when ``named``): the bar its journal's last row keeps;
        without one (pruned, never stepped, or closed having been stepped only before the
        journal kept bars: :meth:`adopt` keeps an open one's) the clock ``clock`` reads
        (a closed session's head frame, or a replay), unless the session is open on a
        twin this catalog lacks (never stepped: at its opening, which shows no bar a
        twin's opening does not); ``read``, where given, reads it instead (``None``: that
        session's clock is not written: :meth:`adopt` skips one it cannot replay)."""
        order = {twin: i for i, (twin, _) in enumerate(self._twins(scenario_id, ""))}
        sessions = sorted(
            self.store.reached(principal, self._key(scenario_id)),
            key=lambda s: (order.get(s.scenario_id, len(order)), s.scenario_id, s.label),
        )
        for other in sessions:
            bar = other.bar
            if other.session == sid or (
                bar is None and not other.closed and other.scenario_id not in order
            ):
                continue
            if bar is None:
                bar = (read or self._clock)(principal, other.session)
                if bar is None:
                    continue
            on = (
                "" if other.scenario_id == scenario_id and not named else f" on {other.scenario_id}"
            )
            self.shown(principal, scenario_id, bar, _reached(other.session, bar, on))

    def of(self, row: SessionRow) -> tuple[str, str]:
        """The horizon row a submission of the session ``row`` reads (principal, key):
        the store's append reads it after the journal row, in its transaction."""
        return row.principal, self._key(row.scenario_id)

    def marks(self, live: Submitter) -> Marks:
        """What the submissions of ``live`` mark beside their journal rows (kept with the
        session, aimed at each submission by :meth:`Marks.at`)."""
        return Marks(self, live, self.of(live.row))

    def reached(self, row: SessionRow, bar: int) -> None:
        """Session ``row`` has reached clock bar ``bar``: its principal's horizon raised to
        it, named after the session (and its twin, on a lineage). A submission calls it when
        the principal's other sessions may be compared with it; ``Runtime.discard`` before
        the store forgets the session, as a second session's opening would have read it
        from the session itself, so a later one is still checked against what it was shown."""
        on = f" on {row.scenario_id}" if self._twinned(row.scenario_id) else ""
        self.shown(row.principal, row.scenario_id, bar, _reached(row.id, bar, on))

    def _twinned(self, scenario_id: str) -> bool:
        return self._lineages is not None and len(self._lineages().twins(scenario_id)) > 1


class Marks:
    """A session's :class:`kestrel_protocol.store.StepMarks`, aimed by :meth:`at` at one
    submission: the horizon row it reads (``key``: :meth:`Horizons.of`), and, by that row
    as the store's ``append`` read it, the first submission made behind the principal's
    horizon and the new clock when other sessions of the principal on the scenario may be
    compared with it. ``noted``: the submission noted the session behind (its store then
    committed the note, or the step failed and the session is forgotten)."""

    __slots__ = ("_after", "_before", "_horizons", "_live", "_seq", "key", "noted")

    def __init__(self, horizons: Horizons, live: Submitter, key: tuple[str, str]) -> None:
        self._horizons = horizons
        self._live = live
        self.key = key
        self._seq = self._before = self._after = 0
        self.noted = False

    def at(self, seq: int, before: int, after: int) -> Marks:
        """Aimed at submission ``seq``, made at clock bar ``before`` and moving the
        session to ``after``."""
        self._seq = seq
        self._before = before
        self._after = after
        self.noted = False
        return self

    def due(self, horizon: Horizon) -> bool:
        return (horizon.bar > self._before and not self._live.behind) or (
            horizon.sessions > 1 and self._after > horizon.bar
        )

    def mark(self, horizon: Horizon) -> None:
        live = self._live
        self.noted = horizon.bar > self._before and not live.behind
        if self.noted:
            self._horizons.store.add_read(live.row.id, self._seq, self._before, horizon.what)
        if horizon.sessions > 1 and self._after > horizon.bar:
            self._horizons.reached(live.row, self._after)


def _reached(sid: str, bar: int, on: str = "") -> str:
    return f"session {sid}{on} of the same principal had reached bar {bar}"
