"""SQLite persistence: content-addressed artifacts, sessions and the submission journal.

One file, ``$KESTREL_HOME/kestrel.db``, in WAL mode, and beside it ``kestrel.db.steps/``,
the step files (:mod:`.steps`). Durability decision: an accepted submission is written
before the response is returned, and survives the process being killed (SIGKILL, a
crash). Most steps are one line appended with one ``write`` to the session's step file
(in the operating system's page cache once ``write`` returns, which a process kill does
not lose); the first submission of a session (which also writes row 0) and one that
changes its status (a stand-down) are one transaction in the journal table, which
``synchronous=NORMAL`` in WAL mode makes survive a kill the same way (the WAL is written
before ``COMMIT`` returns). Only an operating-system crash or power loss may lose the
last few steps, never corrupt the file. ``synchronous=FULL`` would fsync on every step
and cost the per-step path an order of magnitude; set ``KESTREL_SQLITE_SYNCHRONOUS=FULL``
to trade that speed for power-loss durability (step lines are then ``fdatasync``-ed).

The journal table is a rowid table keyed so that a session's rows append in order: the
submission's source, the pentad's root and the root of the frame it produced (a step
line holds the same). Everything else in a pentad is derivable from the journal (its
session from the key, its ``prev`` from the previous row's frame root; row 0 of a
session holds the root of its opening frame), so its canonical bytes are rebuilt, and
checked against the stored root, when they are read. A session's step lines are folded
into the table when it closes, when a store opens or closes, and when an artifact
lookup misses; a pentad becomes a row of the artifact table when its session closes;
until then ``get`` rebuilds it from the journal.

One connection per store, guarded by a lock, so a store may be shared by the event
loop and worker threads; other processes on the same home wait on ``busy_timeout``.
Checkpoints (copying the WAL into the database, with an fsync) run on a background
thread with its own connection every :data:`CHECKPOINT_EVERY` rows, so that a step
never pays for one; SQLite's own auto-checkpoint stays on, far higher, as a backstop.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kestrel_protocol import (
    KestrelError,
    RefusalCode,
    canonical_json,
    kestrel_home,
    root_of,
    root_of_bytes,
)
from kestrel_protocol.store import (
    ArtifactStatus,
    JournalConflict,
    JournalEntry,
    RuntimeStore,
    SessionHead,
    SessionRow,
)

from .steps import StepFile, StepFiles, step_line

__all__ = [
    "OwnedArtifacts",
    "SqliteStore",
    "checked_root",
    "pentad_bytes",
    "pentad_root",
    "verified_artifact",
]

log = logging.getLogger(__name__)

_OWN = "INSERT OR IGNORE INTO owners (root, session) VALUES (?, ?)"
_APPEND = "INSERT INTO journal (key, source, pentad_root, frame_root) VALUES (?, ?, ?, ?)"
_MEDIA_TYPE = "text/x-kestrel"
_sha256 = hashlib.sha256
_dumps = json.JSONEncoder(ensure_ascii=False).encode  # JCS string escaping for str values

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS artifacts (
    root TEXT PRIMARY KEY,
    body BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    scenario_id TEXT NOT NULL,
    scenario_root TEXT NOT NULL,
    label TEXT NOT NULL,
    status TEXT NOT NULL,
    record_root TEXT,
    grade_root TEXT,
    UNIQUE (principal, scenario_root, label)
);
CREATE INDEX IF NOT EXISTS sessions_by_grade ON sessions (grade_root);
CREATE TABLE IF NOT EXISTS owners (  -- whose artifact a root is: a session that made it
    root TEXT NOT NULL,
    session INTEGER NOT NULL,  -- the rowid of the session
    PRIMARY KEY (root, session)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal (
    key INTEGER PRIMARY KEY,  -- (rowid of the session << 32) | seq: appends stay in order
    source TEXT NOT NULL,  -- the submitted source ('' in row 0)
    pentad_root TEXT NOT NULL,  -- '' in row 0
    frame_root TEXT NOT NULL  -- the frame the submission produced (row 0: the opening one)
);
CREATE TABLE IF NOT EXISTS lookahead (
    n INTEGER PRIMARY KEY,  -- the order things were seen in
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,  -- the session's seq then (the read came after that submission)
    bar INTEGER NOT NULL,  -- its clock bar then
    what TEXT NOT NULL  -- 'unsealed' (served while its scenario was not sealed) or the read
);
CREATE INDEX IF NOT EXISTS lookahead_session ON lookahead (session, n);
CREATE TABLE IF NOT EXISTS operations (  -- grade tokens any process can resume
    token TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    session TEXT NOT NULL
) WITHOUT ROWID;
"""

_SCHEMA_VERSION = "6"
CHECKPOINT_EVERY = 1000
"""Journal rows (folded step lines) between background checkpoints."""
_BACKSTOP_PAGES = 50_000
_SEQ_BITS = 32
_KEYS_MAX = 1024  # sessions whose journal key base is remembered (memory stays bounded)
_OWNED_BODY = (
    "SELECT body FROM artifacts WHERE root = ?1 AND EXISTS (SELECT 1 FROM owners"
    " JOIN sessions ON sessions.rowid = owners.session"
    " WHERE owners.root = ?1 AND sessions.principal = ?2)"
)
_OWNED_JOURNAL = (
    "SELECT journal.key, journal.source FROM journal"
    f" JOIN sessions ON sessions.rowid = journal.key >> {_SEQ_BITS}"
    " WHERE journal.pentad_root = ?1 AND sessions.principal = ?2 LIMIT 1"
)


def _statements(script: str) -> list[str]:
    """Split a schema script into statements (trigger bodies kept whole)."""
    out: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            out.append(pending.strip())
            pending = ""
    return out


_QUOTED: dict[str, str] = {}
_QUOTED_MAX = 512  # distinct short strings remembered (an agent repeats its sources)


def _quoted(text: str) -> str:
    """``text`` as a JCS string; short ones are remembered, since a session id and most
    sources recur on every step."""
    quoted = _QUOTED.get(text)
    if quoted is None:
        quoted = _dumps(text)
        if len(text) <= 256:
            if len(_QUOTED) >= _QUOTED_MAX:
                _QUOTED.clear()
            _QUOTED[text] = quoted
    return quoted


def _unrooted(session_id: str, seq: int, prev: str, source: str) -> tuple[str, str]:
    """The pentad's canonical text without ``root``, split where ``root`` goes."""
    head = f'{{"body":{{"bytes":{_quoted(source)},"mediaType":"{_MEDIA_TYPE}"}},"prev":"{prev}",'
    return head, f'"seq":{seq},"session":{_quoted(session_id)}}}'


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise KestrelError(
            RefusalCode.INVALID_SOURCE,
            "the source is not valid Unicode text (lone surrogate)",
            {"diagnostics": []},
        ) from None


def pentad_root(session_id: str, seq: int, prev: str, source: str) -> str:
    """The root of the pentad binding ``source`` as submission ``seq`` after ``prev``.

    Equal to ``root_of`` of the pentad model (a test proves it) at a fraction of the
    cost: members in JCS order, strings escaped as JCS escapes them. A source that is
    not valid Unicode text is ``INVALID_SOURCE``. This is on every step's path.
    """
    text = (
        f'{{"body":{{"bytes":{_quoted(source)},"mediaType":"{_MEDIA_TYPE}"}},'
        f'"prev":"{prev}","seq":{seq},"session":{_quoted(session_id)}}}'
    )
    try:
        return "sha256:" + _sha256(text.encode("utf-8")).hexdigest()
    except UnicodeEncodeError:
        _utf8(text)  # raises the refusal
        raise


def pentad_bytes(session_id: str, seq: int, prev: str, source: str) -> tuple[str, bytes]:
    """The pentad's root and its canonical bytes (with ``root``)."""
    head, tail = _unrooted(session_id, seq, prev, source)
    root = root_of_bytes(_utf8(head + tail))
    return root, _utf8(f'{head}"root":"{root}",{tail}')


def verified_artifact(
    root: str, body: bytes, where: object
) -> tuple[dict[str, Any] | None, ArtifactStatus]:
    """``body`` parsed, when it is the canonical JSON of an object whose root is ``root``
    (and that claims no other); else ``(None, "corrupt")``, logged with ``where``."""
    try:
        obj = json.loads(body.decode("utf-8"))
        found = root_of(obj) if isinstance(obj, dict) else root_of_bytes(body)
        claimed = obj.get("root") if isinstance(obj, dict) else None
        intact = (
            isinstance(obj, dict)
            and found == root
            and claimed in (None, root)
            and canonical_json(obj) == body
        )
    except (UnicodeDecodeError, ValueError):
        intact = False
        found = root_of_bytes(body)
    if not intact:
        log.error(
            "artifact %s in %s is corrupt (its stored bytes hash to %s); not served",
            root,
            where,
            found,
        )
        return None, "corrupt"
    assert isinstance(obj, dict)
    return obj, "ok"


def checked_root(obj: Mapping[str, Any]) -> str:
    """``obj``'s root; ``ValueError`` when it carries a ``root`` member that lies."""
    root = root_of(obj)
    claimed = obj.get("root")
    if claimed is not None and claimed != root:
        raise ValueError(f"object claims root {claimed} but its content hashes to {root}")
    return root


class _Checkpointer:
    """A daemon thread that runs passive WAL checkpoints when asked."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def request(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="kestrel-checkpoint", daemon=True
            )
            self._thread.start()
        self._wake.set()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        conn = sqlite3.connect(self._path, isolation_level=None, timeout=30.0)
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error as exc:  # the backstop still checkpoints
                    log.warning("background checkpoint of %s failed: %s", self._path, exc)
        finally:
            conn.close()


class SqliteStore:
    """The ``RuntimeStore`` port over one SQLite file (``<home>/kestrel.db``, or ``path``)."""

    shared = False  # other processes on the file are met by JournalConflict, not polled

    def __init__(self, home: str | Path | None = None, *, path: str | Path | None = None) -> None:
        if path is not None:
            self.path = Path(os.path.abspath(Path(path).expanduser()))
            self.home = self.path.parent
        else:
            self.home = kestrel_home(home)
            self.path = self.home / "kestrel.db"
        self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock = threading.RLock()
        self._keys: dict[str, int] = {}
        self._appends = 0
        self._checkpointer = _Checkpointer(self.path)
        self._conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=30.0
        )
        self._closed = True  # until opened: nothing to fold on a failed open
        sync = os.environ.get("KESTREL_SQLITE_SYNCHRONOUS", "NORMAL").upper()
        if sync not in {"NORMAL", "FULL", "EXTRA"}:
            sync = "NORMAL"
        with self._lock:
            self._conn.execute("PRAGMA busy_timeout = 30000")
            # small pages: a step's commit writes one page to the WAL (new files only)
            self._conn.execute("PRAGMA page_size = 1024")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute(f"PRAGMA synchronous = {sync}")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._conn.execute(f"PRAGMA wal_autocheckpoint = {_BACKSTOP_PAGES}")
            with self._transaction():
                for statement in _statements(_SCHEMA):
                    self._conn.execute(statement)
                self._conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)",
                    (_SCHEMA_VERSION,),
                )
                found = self._conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                # names this database's step files (a new file at the same path never
                # adopts the steps of one moved aside)
                self._conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('steps', ?)",
                    (os.urandom(8).hex(),),
                )
                token = self._conn.execute("SELECT value FROM meta WHERE key = 'steps'").fetchone()
        self._steps = StepFiles(
            self.path.with_name(self.path.name + ".steps"), str(token[0]), sync != "NORMAL"
        )
        if found[0] != _SCHEMA_VERSION:
            self.close()
            raise KestrelError(
                RefusalCode.BACKEND_UNAVAILABLE,
                f"{self.path} has store schema {found[0]}; this Kestrel needs schema "
                f"{_SCHEMA_VERSION} (move the file aside to start afresh)",
                {"path": str(self.path)},
            )
        self._closed = False
        self.fold_steps()  # what a process left unfolded (a crash, a kill)

    @property
    def location(self) -> str:
        return str(self.path)

    # -- plumbing -------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        """Fold the step files and close the connections (idempotent)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                try:
                    self.fold_steps()
                except (sqlite3.Error, OSError) as exc:  # the next open folds them
                    log.warning("folding the step files of %s failed: %s", self.path, exc)
            self._steps.close()
        self._checkpointer.stop()
        with self._lock, suppress(sqlite3.ProgrammingError):
            self._conn.close()

    # -- step files (see .steps) -------------------------------------------------------

    def fold_steps(self) -> None:
        """Move every step file's lines of this database into the journal table."""
        with self._lock:
            for rowid in self._steps.rowids():
                try:
                    self._fold(rowid)
                except KestrelError as exc:  # corrupt: that session refuses to resume
                    log.error("step file of session rowid %d not folded: %s", rowid, exc)

    def _fold(self, rowid: int) -> None:
        base = rowid << _SEQ_BITS
        with self._steps.locked(rowid, create=False) as step:
            if step is None:
                return
            with self._transaction() as conn:
                found = conn.execute(
                    "SELECT status FROM sessions WHERE rowid = ?", (rowid,)
                ).fetchone()
                if found is None:
                    log.warning("step file %s names no session; left as it is", step.path)
                    return
                self._fold_into(conn, base, step)
            if found[0] == "closed":  # a close that was killed before it removed the file
                self._steps.drop(rowid, unlink=True)
            else:
                self._emptied(step)

    def _fold_into(self, conn: sqlite3.Connection, base: int, step: StepFile) -> None:
        """Insert the step file's lines the table lacks (inside the caller's transaction,
        the file's lock held); the caller empties the file after the commit."""
        lines, _ = step.lines(self._table_last(conn, base))
        conn.executemany(
            _APPEND,
            [(base | seq, source, root, frame) for seq, source, root, frame in lines],
        )
        self._appends += len(lines)
        if self._appends >= CHECKPOINT_EVERY:
            self._appends = 0
            self._checkpointer.request()

    @staticmethod
    def _emptied(step: StepFile) -> None:
        os.ftruncate(step.fd, 0)
        step.size = 0

    @staticmethod
    def _table_last(conn: sqlite3.Connection, base: int) -> int:
        """The session's last seq in the journal table (0 when it has no row)."""
        last = conn.execute(
            "SELECT max(key) FROM journal WHERE key >= ? AND key < ?",
            (base, base + (1 << _SEQ_BITS)),
        ).fetchone()[0]
        return 0 if last is None else int(last) - base

    def _merged(self, base: int, after: int) -> tuple[list[tuple[int, str, str, str]], str]:
        """The session's rows (seq, source, pentad root, frame root) after ``after`` from
        the table and its step file, and the frame root the first one followed. The
        caller holds ``_lock``.

        The table is read with the step file's lock held, as every fold and append holds
        it: read before it, another process could commit a row and append the next line
        in between, and the file would look as if it skipped a seq.
        """
        conn = self._conn
        with self._steps.locked(base >> _SEQ_BITS, create=False) as step:
            table_last = self._table_last(conn, base)
            start = min(after, table_last)
            rows = [
                (int(key) - base, str(source), str(root), str(frame))
                for key, source, root, frame in conn.execute(
                    "SELECT key, source, pentad_root, frame_root FROM journal"
                    " WHERE key >= ? AND key <= ? ORDER BY key",
                    (base + start, base + table_last),
                )
            ]
            if step is not None:
                lines, end = step.lines(table_last)
                rows.extend(lines)
                if end == os.fstat(step.fd).st_size:  # no torn tail: appends may be fast
                    step.size = end
                    step.seq = rows[-1][0] if rows else 0
        prev = ""
        out = []
        for row in rows:
            if row[0] > after:
                out.append(row)
            else:
                prev = row[3]
        return out, prev

    def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` (``"ok"`` when the file is sound)."""
        with self._lock:
            row = self._conn.execute("PRAGMA integrity_check").fetchone()
        return str(row[0])

    # -- artifacts (ArtifactStore) ---------------------------------------------------

    def put(self, obj: Mapping[str, Any]) -> str:
        """Store ``obj``'s canonical bytes under its root; idempotent.

        An object carrying a ``root`` member that is not the root of its content is
        refused: the store never holds a lie.
        """
        root = checked_root(obj)
        self.put_raw(root, canonical_json(obj))
        return root

    def put_raw(self, root: str, body: bytes) -> None:
        """Store bytes the caller already canonicalised and hashed (the hot path)."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO artifacts (root, body) VALUES (?, ?)", (root, body)
            )

    def lookup(
        self, root: str, principal: str | None = None
    ) -> tuple[dict[str, Any] | None, ArtifactStatus]:
        """The stored object and whether it was found intact.

        With ``principal``, only an artifact of one of that principal's sessions is
        found: another's is ``missing``, by the same queries as a root never stored (so
        neither the answer nor the path says it exists). A row whose bytes do not hash
        to its root is logged as corrupt and not returned.
        """
        with self._lock:
            if principal is None:
                row = self._conn.execute(
                    "SELECT body FROM artifacts WHERE root = ?", (root,)
                ).fetchone()
            else:
                row = self._conn.execute(_OWNED_BODY, (root, principal)).fetchone()
            if row is None:  # a pentad of a session not yet closed
                row = self._journal_pentad(root, principal)
            if row is None and self._steps.rowids():  # or still in a step file
                self.fold_steps()
                row = self._journal_pentad(root, principal)
        if row is None:
            return None, "missing"
        return verified_artifact(root, bytes(row[0]), self.path)

    def _journal_pentad(self, root: str, principal: str | None) -> tuple[bytes] | None:
        """The bytes of an open session's pentad rebuilt from its journal row (``b""``
        when the row's neighbours are gone), or ``None`` when no row (of ``principal``'s
        sessions, when given) has that root."""
        if principal is None:
            found = self._conn.execute(
                "SELECT key, source FROM journal WHERE pentad_root = ? LIMIT 1", (root,)
            ).fetchone()
        else:
            found = self._conn.execute(_OWNED_JOURNAL, (root, principal)).fetchone()
        if found is None:
            return None
        key, source = int(found[0]), str(found[1])
        prev = self._conn.execute(
            "SELECT frame_root FROM journal WHERE key = ?", (key - 1,)
        ).fetchone()
        session = self._conn.execute(
            "SELECT id FROM sessions WHERE rowid = ?", (key >> _SEQ_BITS,)
        ).fetchone()
        if prev is None or session is None:
            return (b"",)
        seq = key & ((1 << _SEQ_BITS) - 1)
        try:
            return (pentad_bytes(str(session[0]), seq, str(prev[0]), source)[1],)
        except KestrelError:  # a stored source that is not valid text: corrupt
            return (b"",)

    def get(self, root: str) -> dict[str, Any] | None:
        """The object verbatim, or ``None`` when absent or corrupt."""
        return self.lookup(root)[0]

    def has(self, root: str) -> bool:
        """Whether an intact object is stored under ``root``."""
        return self.lookup(root)[1] == "ok"

    # -- sessions ---------------------------------------------------------------------

    def session(self, session_id: str) -> SessionRow | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT id, principal, scenario_id, scenario_root, label, status, record_root,"
                " grade_root FROM sessions WHERE id = ?",
                (session_id,),
            ).fetchone()
        return SessionRow(*row) if row is not None else None

    def graded_session(self, grade_root: str, principal: str | None = None) -> SessionRow | None:
        """The session whose grade is ``grade_root`` (only among ``principal``'s when
        given; another's is ``None`` by the same query as an unknown root)."""
        query = (
            "SELECT id, principal, scenario_id, scenario_root, label, status, record_root,"
            " grade_root FROM sessions WHERE grade_root = ?1"
        )
        if principal is not None:
            query += " AND principal = ?2"
        args = (grade_root,) if principal is None else (grade_root, principal)
        with self._lock:
            row = self._conn.execute(query, args).fetchone()
        return SessionRow(*row) if row is not None else None

    def sessions(self, status: str | None = None) -> list[SessionRow]:
        query = (
            "SELECT id, principal, scenario_id, scenario_root, label, status, record_root,"
            " grade_root FROM sessions"
        )
        args: tuple[str, ...] = ()
        if status is not None:
            query += " WHERE status = ?"
            args = (status,)
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY rowid", args).fetchall()
        return [SessionRow(*row) for row in rows]

    def labels(self, principal: str, scenario_root: str) -> set[str]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT label FROM sessions WHERE principal = ? AND scenario_root = ?",
                (principal, scenario_root),
            ).fetchall()
        return {str(row[0]) for row in rows}

    def insert_session(self, row: SessionRow) -> bool:
        """Insert a new session; ``False`` when its id already exists (a concurrent open)."""
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO sessions (id, principal, scenario_id, scenario_root,"
                " label, status, record_root, grade_root) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.id,
                    row.principal,
                    row.scenario_id,
                    row.scenario_root,
                    row.label,
                    row.status,
                    row.record_root,
                    row.grade_root,
                ),
            )
            return cursor.rowcount == 1

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
    ) -> None:
        """Persist one accepted submission, committed before this returns.

        ``prev`` (the frame root the submission was applied to) is stored only with
        seq 1, as row 0; later ones are the previous row's frame root. A duplicate seq
        (another process advanced the session) raises ``JournalConflict`` and writes
        nothing.
        """
        base = self._keys.get(session_id)
        if base is None:
            base = self._base(session_id)
        if seq == 1 or status is not None:
            row = (base | seq, source, pentad_root, frame_root)
            self._append_rare(base, row, prev if seq == 1 else None, status)
            return
        line = step_line(seq, pentad_root, frame_root, _quoted(source))
        with self._lock:
            step = self._steps.cached(base >> _SEQ_BITS)
            if step is None or not self._steps.fast_append(step, seq, line):
                self._append_slow(session_id, base, seq, line)

    def _append_slow(self, session_id: str, base: int, seq: int, line: bytes) -> None:
        """Append after finding out what the step file holds now: another process (or
        store) appended, folded or closed the session, or this store has not seen it."""
        rowid = base >> _SEQ_BITS
        found = self._conn.execute("SELECT status FROM sessions WHERE rowid = ?", (rowid,))
        if found.fetchone() in (None, ("closed",)):  # closed elsewhere: make no file
            raise JournalConflict(f"session {session_id} is closed")
        with self._steps.locked(rowid, create=True) as step:
            assert step is not None
            found = self._conn.execute(
                "SELECT status FROM sessions WHERE rowid = ?", (rowid,)
            ).fetchone()
            table_last = self._table_last(self._conn, base)
            lines, end = step.lines(table_last)
            head = lines[-1][0] if lines else table_last
            if end != os.fstat(step.fd).st_size:
                os.ftruncate(step.fd, end)  # a torn line: its write never returned
            step.size = end
            step.seq = head
            if found is None or found[0] == "closed" or head != seq - 1:
                raise JournalConflict(f"session {session_id} is at seq {head}, not {seq - 1}")
            step.write(line, self._steps.sync)
            step.seq = seq

    def _append_rare(
        self, base: int, row: tuple[int, str, str, str], prev: str | None, status: str | None
    ) -> None:
        """Seq 1 (with row 0) or a status change: one transaction in the table, after
        folding the session's step file (so the table's rows stay in order)."""
        rowid = base >> _SEQ_BITS
        with self._lock, self._steps.locked(rowid, create=False) as step:
            try:
                with self._transaction() as conn:
                    if step is not None:
                        self._fold_into(conn, base, step)
                    if prev is not None:
                        conn.execute(_APPEND, (base, "", "", prev))
                    conn.execute(_APPEND, row)
                    if status is not None:
                        conn.execute(
                            "UPDATE sessions SET status = ? WHERE rowid = ?", (status, rowid)
                        )
            except sqlite3.IntegrityError:
                raise JournalConflict(f"journal key {row[0]} is taken") from None
            if step is not None:
                self._emptied(step)
                step.seq = row[0] - base

    def _base(self, session_id: str) -> int:
        """The journal key of seq 0 of a session (its rowid shifted)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT rowid FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        if row is None:
            raise KeyError(f"no session {session_id}")
        base = int(row[0]) << _SEQ_BITS
        if len(self._keys) >= _KEYS_MAX:
            self._keys.clear()
        self._keys[session_id] = base
        return base

    def head(self, session_id: str) -> SessionHead | None:
        """The session's last seq and status; ``None`` when there is no such session."""
        with self._lock:
            row = self._conn.execute(
                "SELECT rowid, status FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return None
            base = int(row[0]) << _SEQ_BITS
            table_last = self._table_last(self._conn, base)
            rows, _ = self._merged(base, table_last)
        return SessionHead(rows[-1][0] if rows else table_last, str(row[1]))

    def journal(self, session_id: str, after: int = 0) -> list[JournalEntry]:
        """A session's accepted submissions after seq ``after``, in order (each with the
        frame root it followed)."""
        low, _ = self._range(session_id)
        with self._lock:
            rows, prev = self._merged(low, after)
        entries = []
        for seq, source, root, frame in rows:
            entries.append(JournalEntry(seq, source, prev, root, frame))
            prev = frame
        return entries

    def _range(self, session_id: str) -> tuple[int, int]:
        base = self._keys.get(session_id)
        if base is None:
            base = self._base(session_id)
        return base, base + (1 << _SEQ_BITS)

    def finish(
        self,
        session_id: str,
        journal: list[JournalEntry],
        artifacts: Mapping[str, bytes],
        record_root: str,
    ) -> None:
        """Close a session in one transaction: the pentads of ``journal`` (its entries)
        become artifacts, with ``artifacts`` (record, head frame, blotter), and its
        status becomes closed. Each pentad is stored under its journal root; one whose
        rebuilt bytes disagree is then reported as corrupt when read, never served. When
        the journal moved past ``journal`` meanwhile (another process), nothing is written
        and ``JournalConflict`` is raised."""
        # in key order: b-tree inserts along one path instead of at random pages
        pentads = sorted(
            (e.pentad_root, pentad_bytes(session_id, e.seq, e.prev, e.source)[1]) for e in journal
        )
        low, _ = self._range(session_id)
        owner = low >> _SEQ_BITS
        with self._lock, self._steps.locked(owner, create=False) as step:
            with self._transaction() as conn:
                if step is not None:
                    self._fold_into(conn, low, step)
                if self._table_last(conn, low) != (journal[-1].seq if journal else 0):
                    raise JournalConflict(f"session {session_id} moved past {journal[-1:]}")
                conn.executemany(
                    "INSERT OR REPLACE INTO artifacts (root, body) VALUES (?, ?)", pentads
                )
                for root, body in artifacts.items():
                    conn.execute(
                        "INSERT OR REPLACE INTO artifacts (root, body) VALUES (?, ?)", (root, body)
                    )
                owned = sorted({root for root, _ in pentads} | set(artifacts))
                conn.executemany(_OWN, [(root, owner) for root in owned])
                conn.execute(
                    "UPDATE sessions SET status = 'closed', record_root = ? WHERE id = ?",
                    (record_root, session_id),
                )
            if step is not None:  # folded: the session's steps are all in the table now
                self._steps.drop(owner, unlink=True)

    # -- lookahead ------------------------------------------------------------------------

    def note_unsealed(self, session_id: str) -> None:
        """Remember (once) that the session was served while its scenario was not sealed."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO lookahead (session, seq, bar, what) SELECT ?, 0, 0, 'unsealed'"
                " WHERE NOT EXISTS (SELECT 1 FROM lookahead WHERE session = ?"
                " AND what = 'unsealed')",
                (session_id, session_id),
            )

    def add_read(self, session_id: str, seq: int, bar: int, what: str) -> None:
        """Remember a read that held bars after the session's clock (``bar``) at ``seq``."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO lookahead (session, seq, bar, what) VALUES (?, ?, ?, ?)",
                (session_id, seq, bar, what),
            )

    def lookahead(self, session_id: str) -> tuple[bool, list[tuple[int, int, str]]]:
        """Whether the session was ever served unsealed, and its reads (seq, bar, what)
        in the order they happened."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT seq, bar, what FROM lookahead WHERE session = ? ORDER BY n",
                (session_id,),
            ).fetchall()
        unsealed = any(row[2] == "unsealed" for row in rows)
        return unsealed, [(int(a), int(b), str(c)) for a, b, c in rows if c != "unsealed"]

    def set_grade(self, session_id: str, grade_root: str, body: bytes) -> None:
        """Store a grade and remember it as the session's grade."""
        owner = self._range(session_id)[0] >> _SEQ_BITS
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO artifacts (root, body) VALUES (?, ?)", (grade_root, body)
            )
            conn.execute(_OWN, (grade_root, owner))
            conn.execute(
                "UPDATE sessions SET grade_root = ? WHERE id = ?", (grade_root, session_id)
            )

    # -- operations -------------------------------------------------------------------

    def put_operation(self, token: str, principal: str, session_id: str) -> None:
        """Remember whose and which session's grade ``token`` resumes (idempotent)."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO operations (token, principal, session) VALUES (?, ?, ?)",
                (token, principal, session_id),
            )

    def operation(self, token: str) -> tuple[str, str] | None:
        """The (principal, session id) of an operation token, or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT principal, session FROM operations WHERE token = ?", (token,)
            ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))


@dataclass(frozen=True, slots=True)
class OwnedArtifacts:
    """A store's reads limited to one principal's artifacts (a remote caller's view:
    another principal's artifact is missing)."""

    store: RuntimeStore
    principal: str

    def get(self, root: str) -> dict[str, Any] | None:
        return self.store.lookup(root, self.principal)[0]
