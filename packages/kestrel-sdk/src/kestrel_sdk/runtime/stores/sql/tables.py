"""The runtime store's tables, each written once (rendered for SQLite and PostgreSQL by
:func:`kestrel_protocol.tables.create_statements`; see docs/runtime.md for what each
holds)."""

from __future__ import annotations

from typing import Final

from kestrel_protocol.tables import Column, Index, Table

__all__ = ["FEED_BARS", "HORIZONS", "JOURNAL", "RUNTIME_TABLES", "SESSIONS", "UNKEYED_HORIZONS"]

ARTIFACTS: Final = Table(
    "artifacts",
    (Column("root", "text"), Column("body", "bytes")),
    key=("root",),
    without_rowid=True,
)
SESSIONS: Final = Table(
    "sessions",
    (
        Column("n", "serial"),  # the order sessions were opened in
        Column("id", "text"),
        Column("principal", "text"),
        Column("scenario_id", "text"),
        Column("scenario_root", "text"),
        Column("label", "text"),
        Column("status", "text"),
        Column("record_root", "text", null=True),
        Column("grade_root", "text", null=True),
        # 1 once counted on its principal's horizon row (in that transaction), 0 until;
        # NULL: open, never stepped, before the store kept it (statements.upgrade)
        Column("counted", "integer", null=True),
        # the lineage's key (its horizon row's) once counted; NULL: not counted yet, or
        # counted by a store from before it kept it (until adopted: adopt_horizons)
        Column("lineage", "text", null=True),
    ),
    key=("id",),
    unique=(("principal", "scenario_root", "label"),),
    indexes=(Index("sessions_by_grade", "grade_root"),),
)
OWNERS: Final = Table(  # whose artifact a root is: a session that made it
    "owners",
    (Column("root", "text"), Column("session", "text")),
    key=("root", "session"),
    without_rowid=True,
)
JOURNAL: Final = Table(
    "journal",
    (
        Column("session", "text"),
        Column("seq", "integer"),  # row 0 holds the opening frame's root
        Column("source", "text"),  # the submitted source ('' in row 0)
        Column("pentad_root", "text"),  # '' in row 0
        Column("frame_root", "text"),  # the frame the submission produced (row 0: the opening)
        # the clock bar the submission moved the session to (NULL in row 0, and in rows
        # a store from before it kept it wrote)
        Column("bar", "integer", null=True),
    ),
    key=("session", "seq"),
    indexes=(
        Index("journal_pentad", "pentad_root", using="hash", where="seq > 0", only="postgresql"),
    ),
    without_rowid=True,
)
LOOKAHEAD: Final = Table(
    "lookahead",
    (
        Column("n", "serial"),  # the order things were seen in
        Column("session", "text"),
        Column("seq", "integer"),  # the session's seq then (the read came after it)
        Column("bar", "integer"),  # its clock bar then
        Column("what", "text"),  # 'unsealed' (served while not sealed) or the read
    ),
    key=("n",),
    indexes=(Index("lookahead_session", "session, n"),),
)
_HORIZON_COLUMNS: Final = (
    Column("principal", "text"),
    Column("scenario", "text"),  # the lineage's key (catalog/lineage.py)
    Column("bar", "integer"),  # -1 until a bar is shown
    Column("what", "text"),  # what showed it
    Column("sessions", "integer"),  # sessions the principal opened on the lineage
)
HORIZONS: Final = Table(  # per (principal, lineage): the furthest bar shown
    "horizons", _HORIZON_COLUMNS, key=("principal", "scenario"), without_rowid=True
)
UNKEYED_HORIZONS: Final = Table(  # rows of a store from before lineage tags, by scenario id,
    "unkeyed_horizons",  # until a catalog holding the scenario re-keys them (adopt_horizons)
    _HORIZON_COLUMNS,
    key=("scenario", "principal"),
    without_rowid=True,
)
OPERATIONS: Final = Table(  # grade tokens any process can resume
    "operations",
    (Column("token", "text"), Column("principal", "text"), Column("session", "text")),
    key=("token",),
    without_rowid=True,
)
SESSION_TIMES: Final = Table(  # the operator's dates, in no object or root
    "session_times",
    (
        Column("session", "text"),
        Column("closed_at", "text", null=True),  # UTC, the database's clock at the close
        Column("pruned_at", "text", null=True),  # when its steps were pruned (kestrel prune)
    ),
    key=("session",),
    without_rowid=True,
)
FEED_BARS: Final = Table(  # a forward tape's published bars
    "feed_bars",
    (
        Column("scenario", "text"),
        Column("bar", "integer"),  # the bar's index in the whole tape (a prefix's first)
        Column("bar_time", "text"),
        Column("bar_rows", "text"),  # its canonical tape rows, every symbol, LF-ended
        Column("prefix_root", "text"),  # the root of the tape's prefix ending with it
        Column("published_at", "text"),  # UTC, the publisher's clock: in no object or root
        # its clock read again once the append committed (the bar was visible by then);
        # NULL until written, and in rows a store from before it kept it wrote
        Column("visible_by", "text", null=True),
    ),
    key=("scenario", "bar"),
    without_rowid=True,
)
FEEDS: Final = Table(  # a forward tape's window
    "feeds",
    (
        Column("scenario", "text"),
        Column("frozen", "integer"),  # 1: the window is over, the tape fixed
        Column("unsealed", "integer"),  # 1: the tape is published
    ),
    key=("scenario",),
    without_rowid=True,
)

RUNTIME_TABLES: Final = (
    ARTIFACTS,
    SESSIONS,
    OWNERS,
    JOURNAL,
    LOOKAHEAD,
    HORIZONS,
    UNKEYED_HORIZONS,
    OPERATIONS,
    SESSION_TIMES,
    FEED_BARS,
    FEEDS,
)
"""The runtime's tables, in the order they are created, after :data:`META` (SQLite's
``meta``, the file's schema version; on PostgreSQL the database's ``kestrel_meta``, which
:class:`kestrel_protocol.postgres.PostgresDatabase` creates for every port)."""
