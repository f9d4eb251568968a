"""The runtime's store port: :class:`RuntimeStore` holds sessions, the per-session
journal (``(session, seq)`` unique: the journal is the truth every process replays),
artifacts and resumable operations, and the rows it hands back. It never decides runtime
semantics. Its adapters are SQLite (embedded, the default), PostgreSQL (shared by any
number of processes) and memory (one process, nothing on disk: for training loops,
sweeps and tests).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, runtime_checkable

from ..store_feed import FeedBar, FeedStatus

__all__ = [
    "Adopted",
    "ArtifactStatus",
    "Horizon",
    "JournalConflict",
    "JournalEntry",
    "Reached",
    "RuntimeStore",
    "SessionHead",
    "SessionRow",
    "StepMarks",
    "StoredSession",
]

ArtifactStatus = Literal["ok", "missing", "corrupt"]


class JournalConflict(Exception):
    """An append found its ``(session, seq)`` taken: another process advanced the session.

    Nothing was written; the caller catches up from the journal and tries again.
    """


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A session as persisted (the engine state is rebuilt from the journal)."""

    id: str
    principal: str
    scenario_id: str
    scenario_root: str
    label: str
    status: str
    record_root: str | None
    grade_root: str | None


@dataclass(slots=True, unsafe_hash=True)
class Horizon:
    """How far one principal has been shown one scenario: the furthest bar (``bar``),
    what showed it (``what``: ``tape acme-trend read``), and how many sessions the
    principal has opened on the scenario (``sessions``).

    Read-only by type (``Final`` members), equal and hashed by value as a frozen one
    would be; not ``frozen=True``: an SQL store makes one on every step (its horizon
    read), and a frozen ``__init__`` sets each member through ``object.__setattr__``
    (≈ 0.40 µs against ≈ 0.12)."""

    bar: Final[int]
    what: Final[str]
    sessions: Final[int]


class StepMarks(Protocol):
    """What a step writes beside its journal row, decided by its horizon row as the step
    read it (:meth:`RuntimeStore.append`): the first submission made behind the horizon
    (``add_read``), a clock that passed it (``raise_horizon``). Every store writes them
    in the journal row's transaction, so that no process killed after the row's commit
    leaves an accepted step unmarked (PostgreSQL's read locks the row until that commit:
    see :mod:`kestrel_sdk.runtime.horizon`)."""

    def due(self, horizon: Horizon) -> bool:
        """Whether :meth:`mark` would write anything for ``horizon``."""
        ...

    def mark(self, horizon: Horizon) -> None:
        """Write them, with the store's ``add_read`` and ``raise_horizon``."""
        ...


@dataclass(frozen=True, slots=True)
class Reached:
    """A session of a principal on a lineage (:meth:`RuntimeStore.reached`): its id,
    scenario id and label, whether it is closed, and the clock bar its last step reached
    as its journal keeps it (``None``: never stepped, pruned, or stepped only before the
    journal kept bars)."""

    session: str
    scenario_id: str
    label: str
    closed: bool
    bar: int | None


@dataclass(frozen=True, slots=True)
class Adopted:
    """A horizon row an upgraded store kept under a scenario's id, re-keyed by
    :meth:`RuntimeStore.adopt_horizons`: whose it was (``principal``, ``scenario_id``),
    whether it joined a row counting sessions too (``joined``: the principal's sessions
    of both are compared from then), and the principal's open sessions on that id it
    gave their key whose last journal row keeps no clock bar (``unbarred``: stepped only
    before the journal kept bars; the runtime replays each once and keeps its bar with
    :meth:`RuntimeStore.keep_bar`)."""

    principal: str
    scenario_id: str
    joined: bool
    unbarred: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SessionHead:
    """How far a session has got in the store: its last seq, its status and the frame
    its last submission produced (``None`` before the first: the journal has no row)."""

    seq: int
    status: str
    frame_root: str | None = None


@dataclass(frozen=True, slots=True)
class StoredSession:
    """A session as the operator's housekeeping sees it (``kestrel home``, ``kestrel
    prune``): what it is, when it closed and was pruned, and what its steps occupy.

    ``closed_at`` and ``pruned_at`` are UTC text (``2026-11-01T09:30:00Z``) stamped by
    the store's database (``None``: not closed, or closed before stores stamped closes;
    a memory store keeps no time: ``closed_at`` is ``None`` and ``pruned_at`` ``""`` once
    pruned). No root, object or answer of the runtime holds them: they only date a
    session for the operator.
    """

    id: str
    principal: str
    scenario_id: str
    status: str
    graded: bool
    closed_at: str | None
    pruned_at: str | None
    steps: int  # journal rows it holds (0 once pruned)
    step_bytes: int  # bytes of its journal rows and its pentads (what pruning removes)


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One accepted submission: what its pentad binds and the frame root it produced."""

    seq: int
    source: str
    prev: str  # the frame root it was applied to
    pentad_root: str  # as stored; rebuilding the pentad from the entry may disagree
    frame_root: str


@runtime_checkable
class RuntimeStore(Protocol):
    """The runtime's persistence: artifacts, sessions, the journal, operations.

    Contract:

    - ``append`` commits one accepted submission durably before it returns (it survives
      the process being SIGKILLed); a taken ``(session, seq)``, a closed or missing
      session, or a ``prev`` that is not the session's last frame root (another session
      under the same id: discarded and opened again) raises :class:`JournalConflict`
      and writes nothing. Seq 1 also writes row 0 (``prev``,
      the opening frame's root); a ``status`` is stored with the row, atomically, and
      ``clock`` (the clock bar the step moved the session to) in it.
      With ``horizon`` (a principal and a horizon key), it returns that horizon row as
      the step's commit leaves it before its ``marks`` (``None`` when there is none),
      read after the row in the step's transaction, where the marks are written.
    - ``count_session(principal, key, sid)`` counts session ``sid`` on that horizon row
      once, whoever asks and however often: the session's row keeps whether it was
      counted, set in the transaction that adds it to the row's ``sessions``; it
      returns the row's count then, or ``None`` when ``sid`` was counted already (or is
      unknown). A session from a store made before the flag was kept (its opening,
      never stepped, may have been killed before counting it) is counted only when the
      caller says the count is ``short`` of the principal's sessions. The session keeps
      ``key`` (its lineage) from then: ``reached(principal, key)`` lists the principal's
      sessions on it, each with the clock bar its journal's last row keeps, whatever
      catalog the process asking holds (one read, no replay).
    - ``adopt_horizons(keys)`` re-keys the horizon rows a store from before lineage
      tags kept under a scenario's id (set apart when the store was upgraded): each
      such row whose id ``keys()`` maps (a catalog's scenario ids to their horizon
      keys; called only when such rows wait) joins the row of its key, in one
      transaction (the furthest bar with what showed it, the sessions added up: each
      session was counted on one row), and is gone from the rows set apart. It returns
      an :class:`Adopted` for each row it re-keyed (whether it joined a row counting
      sessions too). Rows of ids ``keys`` lacks wait for a process whose catalog has
      them. Sessions a store from before counted without their key are given it the same
      way (those of the ids ``keys`` maps), the open ones whose last journal row keeps no
      bar named (``Adopted.unbarred``). ``keep_bar(sid, bar)`` writes ``bar`` into the
      session's last journal row where that row keeps none (a step appended meanwhile
      keeps its own: nothing is written), so ``reached`` reads it from then.
    - ``journal(sid, after=n)`` returns the entries with seq > n in order, each with the
      frame root it followed; ``head`` is the last seq, the status and the last frame
      root, one cheap read.
    - Artifacts are content-addressed: ``lookup`` serves only bytes that hash to their
      root (else ``"corrupt"``, logged, never served); an open session's pentads are
      rebuilt from its journal. With a ``principal``, only artifacts its own sessions
      made are found (another's is ``"missing"``, by the same queries).
    - ``shared`` is true when other processes may advance the same sessions at any time
      (a database server): the runtime then checks a session's head before each use.
    - Operation tokens map to (principal, session) so any process can resume them.
    - A forward tape's bars are keyed ``(scenario, index)``: ``append_feed`` writes a
      batch (consecutive indexes) in one transaction, committed before it returns; an
      index taken, or a feed frozen, raises
      :class:`~kestrel_protocol.store_feed.FeedConflict` and writes nothing. Each bar's
      ``published_at`` is ``clock()``, read after the batch is checked and written, as
      the last thing before the commit (no reader saw the batch before, however long it
      took), and its ``visible_by`` ``clock()`` read again once the commit is done,
      written in a transaction of its own before ``append_feed`` returns (every reader
      could see the batch by then; ``""`` until written); the bars given carry neither.
      ``feed_bars(sid, after)`` returns the bars with index >= ``after`` in order;
      ``feed_state`` is ``None`` for a scenario the store holds nothing of;
      ``set_feed_state`` changes only the flags given (frozen, unsealed).
    - ``prune`` removes a closed, graded session's steps (journal rows, pentads,
      lookahead reads, operation tokens) in one transaction and marks it pruned; its row,
      record, head frame, blotter and grade stay, and horizons are never touched (a
      principal never sees a scenario afresh). An open, ungraded, pruned or unknown
      session is left as it is (``False``). ``discard`` forgets a closed, graded session
      whole, in one transaction: what ``prune`` removes, its row and dates, and every
      artifact no other session owns (record, head frame, blotter, grade); horizons are
      never touched here either (the runtime first raises its principal's to the bar the
      session reached: ``Runtime.discard``). An open, ungraded or unknown session is left
      as it is (``False``). ``reclaim`` gives the freed space back where the database
      can; ``footprint`` is what the store occupies on disk.
    """

    @property
    def location(self) -> str:
        """Where the data lives, for messages (no password)."""
        ...

    @property
    def shared(self) -> bool: ...

    def close(self) -> None: ...

    # artifacts
    def put(self, obj: Mapping[str, Any]) -> str: ...
    def put_raw(self, root: str, body: bytes) -> None: ...
    def lookup(
        self, root: str, principal: str | None = None
    ) -> tuple[dict[str, Any] | None, ArtifactStatus]: ...
    def get(self, root: str) -> dict[str, Any] | None: ...
    def has(self, root: str) -> bool: ...

    # sessions and the journal
    def session(self, session_id: str) -> SessionRow | None: ...
    def graded_session(
        self, grade_root: str, principal: str | None = None
    ) -> SessionRow | None: ...
    def sessions(self, status: str | None = None) -> list[SessionRow]: ...
    def sessions_of(self, principal: str) -> list[SessionRow]: ...
    def labels(self, principal: str, scenario_root: str) -> set[str]: ...
    def insert_session(self, row: SessionRow) -> bool: ...
    def head(self, session_id: str) -> SessionHead | None: ...
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
    ) -> Horizon | None: ...
    def journal(self, session_id: str, after: int = 0) -> list[JournalEntry]: ...
    def finish(
        self,
        session_id: str,
        journal: list[JournalEntry],
        artifacts: Mapping[str, bytes],
        record_root: str,
    ) -> None: ...
    def set_grade(self, session_id: str, grade_root: str, body: bytes) -> None: ...

    # lookahead: whether a session was served unsealed, and its first read past its clock
    # (``add_read`` keeps the one at the lowest seq, whichever process noted it)
    def note_unsealed(self, session_id: str) -> None: ...
    def add_read(self, session_id: str, seq: int, bar: int, what: str) -> None: ...
    def lookahead(self, session_id: str) -> tuple[bool, list[tuple[int, int, str]]]: ...

    # horizons: per (principal, scenario), the furthest bar shown (one row, O(1))
    def horizon(self, principal: str, scenario_id: str) -> Horizon | None: ...
    def raise_horizon(self, principal: str, scenario_id: str, bar: int, what: str) -> None: ...
    def count_session(
        self, principal: str, scenario_id: str, session_id: str, *, short: bool = False
    ) -> int | None: ...
    def adopt_horizons(self, keys: Callable[[], Mapping[str, str]]) -> list[Adopted]: ...
    def keep_bar(self, session_id: str, bar: int) -> None: ...
    def reached(self, principal: str, key: str) -> list[Reached]: ...

    # forward tapes: appended bars keyed (scenario, index) and the window's state
    def feed_bars(self, scenario_id: str, after: int = 0) -> list[FeedBar]: ...
    def append_feed(
        self, scenario_id: str, bars: list[FeedBar], clock: Callable[[], str]
    ) -> None: ...
    def feed_state(self, scenario_id: str) -> FeedStatus | None: ...
    def set_feed_state(
        self, scenario_id: str, *, frozen: bool | None = None, unsealed: bool | None = None
    ) -> None: ...

    # operations
    def put_operation(self, token: str, principal: str, session_id: str) -> None: ...
    def operation(self, token: str) -> tuple[str, str] | None: ...

    # housekeeping: the operator's view of what is kept, and pruning it
    def stored_sessions(self) -> list[StoredSession]: ...
    def pruned(self, session_id: str) -> str | None: ...
    def prune(self, session_id: str) -> bool: ...
    def discard(self, session_id: str) -> bool: ...
    def reclaim(self) -> None: ...
    def footprint(self) -> int: ...
