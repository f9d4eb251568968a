"""The SQLite store's journal table, read together with the step files (:mod:`..steps`).

The journal table is a rowid table keyed so that a session's rows append in order:
``(rowid of the session << SEQ_BITS) | seq``. A row holds the submission's source, the
pentad's root and the root of the frame it produced (a step line holds the same); row 0
of a session holds the root of its opening frame. A session's rows are the table's,
then its step file's lines that follow them; its status is the sessions table's, or the
one its step file's last line carries (a stand-down not yet folded).
"""

from __future__ import annotations

import sqlite3

from ..pentads import stored_pentad_bytes
from ..steps import StepFile, StepFiles, StepRow

__all__ = [
    "APPEND",
    "SEQ_BITS",
    "fold_lines",
    "head_of",
    "journal_pentad",
    "rows",
    "set_status",
    "table_last",
]

SEQ_BITS = 32
APPEND = "INSERT INTO journal (key, source, pentad_root, frame_root) VALUES (?, ?, ?, ?)"
_OWNED_JOURNAL = (
    "SELECT journal.key, journal.source FROM journal"
    f" JOIN sessions ON sessions.rowid = journal.key >> {SEQ_BITS}"
    " WHERE journal.pentad_root = ?1 AND sessions.principal = ?2 LIMIT 1"
)


def table_last(conn: sqlite3.Connection, base: int) -> int:
    """The session's last seq in the journal table (0 when it has no row)."""
    last = conn.execute(
        "SELECT max(key) FROM journal WHERE key >= ? AND key < ?",
        (base, base + (1 << SEQ_BITS)),
    ).fetchone()[0]
    return 0 if last is None else int(last) - base


def set_status(conn: sqlite3.Connection, base: int, status: str) -> None:
    """Store the status a step changed the session to (inside the caller's transaction).
    A step changes an open session's status only, so a session closed meanwhile (by
    another process) keeps its status."""
    conn.execute(
        "UPDATE sessions SET status = ? WHERE rowid = ? AND status = 'open'",
        (status, base >> SEQ_BITS),
    )


def fold_lines(conn: sqlite3.Connection, base: int, step: StepFile) -> int:
    """Insert the step file's lines the table lacks, and the status a line carries
    (inside the caller's transaction, the file's lock held); how many. The caller
    removes the file after the commit."""
    lines, _, _, status = step.lines(table_last(conn, base))
    conn.executemany(
        APPEND, [(base | seq, source, root, frame) for seq, source, root, frame in lines]
    )
    if status is not None:
        set_status(conn, base, status)
    return len(lines)


def rows(
    conn: sqlite3.Connection, steps: StepFiles, base: int, after: int
) -> tuple[list[StepRow], str | None]:
    """The session's rows (seq, source, pentad root, frame root) from the table and its
    step file: from the one at seq ``after`` (or the table's last, when the file holds
    ``after``) on; and the status its file's last line carries (``None``: none). The
    caller holds the store's lock.

    The table is read with the step file's lock held, as every fold and append holds
    it: read before it, another process could commit a row and append the next line
    in between, and the file would look as if it skipped a seq.
    """
    status = None
    with steps.locked(base >> SEQ_BITS, create=False) as step:
        last = table_last(conn, base)
        start = min(after, last)
        found = [
            (int(key) - base, str(source), str(root), str(frame))
            for key, source, root, frame in conn.execute(
                "SELECT key, source, pentad_root, frame_root FROM journal"
                " WHERE key >= ? AND key <= ? ORDER BY key",
                (base + start, base + last),
            )
        ]
        if step is not None:
            lines, end, written, status = step.lines(last)
            found.extend(lines)
            if end == written:  # no torn tail: appends may be fast
                step.size = end
                step.seq = found[-1][0] if found else 0
                step.map()
    return found, status


def head_of(conn: sqlite3.Connection, steps: StepFiles, base: int) -> tuple[int, str | None]:
    """The session's last seq (table or step file) and the status its file's last line
    carries, reading one line of the file at most. The caller holds the store's lock."""
    with steps.locked(base >> SEQ_BITS, create=False) as step:
        last = table_last(conn, base)
        found = step.last() if step is not None else None
    if found is None or found[0] <= last:
        return last, None
    return found


def journal_pentad(conn: sqlite3.Connection, root: str, principal: str | None) -> bytes | None:
    """The bytes of an open session's pentad rebuilt from its journal row (``b""``
    when the row's neighbours are gone), or ``None`` when no row (of ``principal``'s
    sessions, when given) has that root."""
    if principal is None:
        found = conn.execute(
            "SELECT key, source FROM journal WHERE pentad_root = ? LIMIT 1", (root,)
        ).fetchone()
    else:
        found = conn.execute(_OWNED_JOURNAL, (root, principal)).fetchone()
    if found is None:
        return None
    key, source = int(found[0]), str(found[1])
    prev = conn.execute("SELECT frame_root FROM journal WHERE key = ?", (key - 1,)).fetchone()
    session = conn.execute("SELECT id FROM sessions WHERE rowid = ?", (key >> SEQ_BITS,)).fetchone()
    if prev is None or session is None:
        return b""
    seq = key & ((1 << SEQ_BITS) - 1)
    return stored_pentad_bytes(str(session[0]), seq, str(prev[0]), source)
