"""The runtime store's statements, written once for every SQL database (see
:mod:`kestrel_protocol.sql`).

A session's journal is keyed ``(session, seq)``: row 0 holds the root of its opening
frame, row ``n`` the ``n``-th accepted submission's source, pentad root and the root of
the frame it produced; a duplicate ``(session, seq)`` is how two writers racing on one
session are told apart (the loser's insert fails, and writes nothing). An append reads
its session's row in the same statement (``{for_share}``), so that no submission lands
after the close (``{for_update}``) that wrote the session's record, and the row before
its own, so that none lands on a frame other than the session's last: the journal is one
chain whatever a writer held in memory (a session discarded and opened again under the
same id by another process is another chain).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kestrel_protocol.sql import render_all

from .dialect import PREFIXES, TABLES, Dialect
from .tables import FEED_BARS, JOURNAL, SESSIONS, UNKEYED_HORIZONS

__all__ = ["Statements", "upgrade"]

_SESSION_COLUMNS: Final = (
    "id, principal, scenario_id, scenario_root, label, status, record_root, grade_root"
)
_FOLLOWS: Final = "SELECT 1 FROM {journal} WHERE session = ? AND seq = ? AND frame_root = ?"
"""Whether a step follows the session's last frame: its row ``seq - 1`` has that root."""
_APPEND: Final = (
    "INSERT INTO {journal} (session, seq, source, pentad_root, frame_root, bar) VALUES ("
    "(SELECT id FROM {sessions} WHERE id = ? AND status <> 'closed' AND EXISTS"
    f" ({_FOLLOWS})<unmoved>{{for_share}}), ?, ?, ?, ?, ?)"
)
"""A step: one statement, refused once the session is closed or when the frame it was
applied to is not the session's last (another session under the same id: discarded and
opened again by another process): its session is then null, which the table refuses.
(Values, not ``INSERT ... SELECT``: a select that reads the journal would make SQLite copy
its row to a temporary table first.)"""
_UNMOVED: Final = (
    " AND (SELECT bar, what, sessions FROM {horizons} WHERE principal = ? AND scenario = ?)"
    " IS (?, ?, ?)"
)
"""The horizon row is as given (all null: there is none)."""
_BY_ID: Final = "substr(scenario, 1, 7) <> 'sha256:'"
"""A horizon row keyed by a scenario's id, not a lineage tag (``root_of_bytes``'s)."""


@dataclass(frozen=True, slots=True)
class Statements:
    """Every statement of the runtime store, rendered by :meth:`of` for one dialect."""

    put: str = (
        "INSERT INTO {artifacts} (root, body) VALUES (?, ?)"
        " ON CONFLICT (root) DO UPDATE SET body = excluded.body"
    )
    own: str = "INSERT INTO {owners} (root, session) VALUES (?, ?) ON CONFLICT DO NOTHING"
    body: str = "SELECT body FROM {artifacts} WHERE root = ?"
    owned_body: str = (
        "SELECT body FROM {artifacts} WHERE root = ? AND EXISTS (SELECT 1 FROM {owners} o"
        " JOIN {sessions} s ON s.id = o.session WHERE o.root = ? AND s.principal = ?)"
    )
    journal_pentad: str = (  # an open session's pentad: its row, and the frame it followed
        "SELECT j.session, j.seq, j.source, p.frame_root FROM {journal} j"
        " LEFT JOIN {journal} p ON p.session = j.session AND p.seq = j.seq - 1"
        " WHERE j.pentad_root = ? AND j.seq > 0 LIMIT 1"
    )
    owned_journal_pentad: str = (
        "SELECT j.session, j.seq, j.source, p.frame_root FROM {journal} j"
        " LEFT JOIN {journal} p ON p.session = j.session AND p.seq = j.seq - 1"
        " JOIN {sessions} s ON s.id = j.session"
        " WHERE j.pentad_root = ? AND j.seq > 0 AND s.principal = ? LIMIT 1"
    )
    session: str = f"SELECT {_SESSION_COLUMNS} FROM {{sessions}} WHERE id = ?"
    graded: str = f"SELECT {_SESSION_COLUMNS} FROM {{sessions}} WHERE grade_root = ?"
    owned_graded: str = (
        f"SELECT {_SESSION_COLUMNS} FROM {{sessions}} WHERE grade_root = ? AND principal = ?"
    )
    sessions: str = f"SELECT {_SESSION_COLUMNS} FROM {{sessions}} ORDER BY n"
    sessions_with: str = f"SELECT {_SESSION_COLUMNS} FROM {{sessions}} WHERE status = ? ORDER BY n"
    sessions_of: str = f"SELECT {_SESSION_COLUMNS} FROM {{sessions}} WHERE principal = ? ORDER BY n"
    labels: str = "SELECT label FROM {sessions} WHERE principal = ? AND scenario_root = ?"
    insert_session: str = (  # not counted yet (count_session)
        f"INSERT INTO {{sessions}} ({_SESSION_COLUMNS}, counted)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT DO NOTHING"
    )
    head: str = (  # the status, and the last row's seq and frame root (none before seq 1)
        "SELECT s.status, j.seq, j.frame_root FROM {sessions} s LEFT JOIN {journal} j"
        " ON j.session = s.id AND j.seq = (SELECT max(seq) FROM {journal} WHERE session = s.id)"
        " WHERE s.id = ?"
    )
    append: str = _APPEND.replace("<unmoved>", "")  # a step (see _APPEND)
    append_unmoved: str = _APPEND.replace("<unmoved>", _UNMOVED)
    """A step refused also when its horizon row is not as given: SQLite's (one writer at a
    time, so what the statement reads is what its commit follows); never PostgreSQL's,
    whose statement reads a snapshot that a commit may follow later."""
    follows: str = _FOLLOWS  # a step that changes the status: applied to the last frame
    append_row: str = (
        "INSERT INTO {journal} (session, seq, source, pentad_root, frame_root, bar)"
        " VALUES (?, ?, ?, ?, ?, ?)"
    )
    change_status: str = (  # seq 1 or a stand-down: the status with the row, atomically
        "UPDATE {sessions} SET status = coalesce(?, status) WHERE id = ? AND status <> 'closed'"
    )
    journal: str = (
        "SELECT seq, source, pentad_root, frame_root FROM {journal}"
        " WHERE session = ? AND seq >= ? ORDER BY seq"
    )
    lock_session: str = "SELECT status FROM {sessions} WHERE id = ?{for_update}"
    last_seq: str = "SELECT coalesce(max(seq), 0) FROM {journal} WHERE session = ?"
    close: str = "UPDATE {sessions} SET status = 'closed', record_root = ? WHERE id = ?"
    set_grade: str = "UPDATE {sessions} SET grade_root = ? WHERE id = ?"
    note_unsealed: str = (
        "INSERT INTO {lookahead} (session, seq, bar, what) SELECT ?, 0, 0, 'unsealed'"
        " WHERE NOT EXISTS (SELECT 1 FROM {lookahead} WHERE session = ? AND what = 'unsealed')"
    )
    later_reads: str = (  # a session keeps its first read only: any noted at a later seq goes
        "DELETE FROM {lookahead} WHERE session = ? AND what <> 'unsealed' AND seq > ?"
    )
    add_read: str = (
        "INSERT INTO {lookahead} (session, seq, bar, what) SELECT ?, ?, ?, ?"
        " WHERE NOT EXISTS (SELECT 1 FROM {lookahead} WHERE session = ? AND what <> 'unsealed')"
    )
    lookahead: str = "SELECT seq, bar, what FROM {lookahead} WHERE session = ? ORDER BY n"
    horizon: str = "SELECT bar, what, sessions FROM {horizons} WHERE principal = ? AND scenario = ?"
    lock_horizon: str = horizon + "{for_update}"
    """A step's read on PostgreSQL, in its transaction with its marks: the row locked
    until it commits (see ``SqlStore.append``)."""
    raise_horizon: str = (  # only ever further
        "INSERT INTO {horizons} (principal, scenario, bar, what, sessions) VALUES (?, ?, ?, ?, 0)"
        " ON CONFLICT (principal, scenario) DO UPDATE SET bar = excluded.bar, what = excluded.what"
        " WHERE excluded.bar > {horizons}.bar"
    )
    mark_counted: str = (  # the session counted by this transaction alone (rowcount 1)
        "UPDATE {sessions} SET counted = 1, lineage = ? WHERE id = ? AND (counted = 0"
        " OR (counted IS NULL AND ?))"
    )
    reached: str = (  # the principal's sessions on a lineage, each with its last row's bar
        "SELECT s.id, s.scenario_id, s.label, s.status, (SELECT j.bar FROM {journal} j"
        " WHERE j.session = s.id ORDER BY j.seq DESC LIMIT 1)"
        " FROM {sessions} s WHERE s.principal = ? AND s.lineage = ?"
    )
    counted_before: str = (  # upgrading: every session but one open and never stepped
        "UPDATE {sessions} SET counted = 1 WHERE status = 'closed'"
        " OR EXISTS (SELECT 1 FROM {journal} WHERE session = {sessions}.id)"
    )
    count_session: str = (
        "INSERT INTO {horizons} (principal, scenario, bar, what, sessions) VALUES (?, ?, -1, '', 1)"
        " ON CONFLICT (principal, scenario) DO UPDATE SET sessions = {horizons}.sessions + 1"
        " RETURNING sessions"
    )
    # a store from before lineage tags: its rows by scenario id set apart when upgraded
    # (set_apart), each re-keyed by a catalog that holds its scenario (adopt_horizons)
    unkeyed: str = "SELECT principal, scenario FROM {unkeyed_horizons}"
    any_unkeyed: str = "SELECT 1 FROM {unkeyed_horizons} LIMIT 1"
    unbarred: str = (  # a row re-keyed: its open sessions whose last journal row has no bar
        "SELECT s.id FROM {sessions} s WHERE s.principal = ? AND s.scenario_id = ?"
        " AND s.counted = 1 AND s.lineage IS NULL AND s.status <> 'closed'"
        " AND EXISTS (SELECT 1 FROM {journal} j WHERE j.session = s.id AND j.bar IS NULL"
        " AND j.seq = (SELECT max(seq) FROM {journal} WHERE session = s.id))"
        " ORDER BY s.id"
    )
    keep_bar: str = (  # an upgraded session's bar, replayed once, where its last row has none
        "UPDATE {journal} SET bar = ? WHERE session = ? AND bar IS NULL"
        " AND seq = (SELECT max(seq) FROM {journal} WHERE session = ?)"
    )
    line_sessions: str = (  # a row re-keyed: the sessions counted on it before get its key
        "UPDATE {sessions} SET lineage = ? WHERE principal = ? AND scenario_id = ?"
        " AND counted = 1 AND lineage IS NULL"
    )
    take_unkeyed: str = (
        "DELETE FROM {unkeyed_horizons} WHERE principal = ? AND scenario = ?"
        " RETURNING bar, what, sessions"
    )
    adopt_horizon: str = (  # the furthest bar and what showed it; the sessions added up
        "INSERT INTO {horizons} (principal, scenario, bar, what, sessions) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (principal, scenario) DO UPDATE SET"
        " bar = CASE WHEN excluded.bar > {horizons}.bar THEN excluded.bar ELSE {horizons}.bar END,"
        " what = CASE WHEN excluded.bar > {horizons}.bar"
        " THEN excluded.what ELSE {horizons}.what END,"
        " sessions = {horizons}.sessions + excluded.sessions"
        " RETURNING sessions"
    )
    set_apart: str = (  # upgrading: every row keyed by an id, not a tag (then keyed_apart)
        "INSERT INTO {unkeyed_horizons} (principal, scenario, bar, what, sessions)"
        " SELECT principal, scenario, bar, what, sessions FROM {horizons}"
        f" WHERE {_BY_ID}"
    )
    keyed_apart: str = f"DELETE FROM {{horizons}} WHERE {_BY_ID}"
    sessions_apart: str = (  # upgrading: the sessions counted without their lineage, a row
        "INSERT INTO {unkeyed_horizons} (principal, scenario, bar, what, sessions)"  # each
        " SELECT DISTINCT principal, scenario_id, -1, '', 0 FROM {sessions} WHERE counted = 1"
        " ON CONFLICT DO NOTHING"
    )
    put_operation: str = (
        "INSERT INTO {operations} (token, principal, session) VALUES (?, ?, ?)"
        " ON CONFLICT (token) DO NOTHING"
    )
    operation: str = "SELECT principal, session FROM {operations} WHERE token = ?"
    # housekeeping: a session's close time (the database's clock, outside every object),
    # what its steps occupy, and pruning them
    stamp_closed: str = (
        "INSERT INTO {session_times} (session, closed_at) VALUES (?, {now})"
        " ON CONFLICT (session) DO NOTHING"
    )
    stored_sessions: str = (  # what a session's steps occupy: the bytes of their rows
        "SELECT s.id, s.principal, s.scenario_id, s.status, s.grade_root, t.closed_at,"
        " t.pruned_at, (SELECT count(*) FROM {journal} j WHERE j.session = s.id),"
        " (SELECT coalesce(sum(length(j.session) + length(j.source) + length(j.pentad_root)"
        " + length(j.frame_root) + 8), 0) FROM {journal} j WHERE j.session = s.id),"
        " (SELECT coalesce(sum(length(a.root) + length(a.body)), 0) FROM {journal} j"
        " JOIN {artifacts} a ON a.root = j.pentad_root WHERE j.session = s.id AND j.seq > 0),"
        " (SELECT coalesce(sum(length(o.root) + length(o.session)), 0) FROM {journal} j"
        " JOIN {owners} o ON o.root = j.pentad_root AND o.session = j.session"
        " WHERE j.session = s.id AND j.seq > 0)"
        " FROM {sessions} s LEFT JOIN {session_times} t ON t.session = s.id ORDER BY s.n"
    )
    pruned_at: str = "SELECT pruned_at FROM {session_times} WHERE session = ?"
    prune_pentads: str = (  # a pentad names its session, so no other owns it; checked still
        "DELETE FROM {artifacts} WHERE root IN"
        " (SELECT pentad_root FROM {journal} WHERE session = ? AND seq > 0)"
        " AND NOT EXISTS (SELECT 1 FROM {owners} o"
        " WHERE o.root = {artifacts}.root AND o.session <> ?)"
    )
    prune_owners: str = (
        "DELETE FROM {owners} WHERE session = ? AND root IN"
        " (SELECT pentad_root FROM {journal} WHERE session = ? AND seq > 0)"
    )
    prune_journal: str = "DELETE FROM {journal} WHERE session = ?"
    prune_lookahead: str = "DELETE FROM {lookahead} WHERE session = ?"
    prune_operations: str = "DELETE FROM {operations} WHERE session = ?"
    discard_artifacts: str = (  # what the session alone owns (its pentads went with prune)
        "DELETE FROM {artifacts} WHERE root IN (SELECT root FROM {owners} WHERE session = ?)"
        " AND NOT EXISTS (SELECT 1 FROM {owners} o"
        " WHERE o.root = {artifacts}.root AND o.session <> ?)"
    )
    discard_owners: str = "DELETE FROM {owners} WHERE session = ?"
    discard_times: str = "DELETE FROM {session_times} WHERE session = ?"
    discard_session: str = "DELETE FROM {sessions} WHERE id = ?"
    stamp_pruned: str = (
        "INSERT INTO {session_times} (session, closed_at, pruned_at) VALUES (?, NULL, {now})"
        " ON CONFLICT (session) DO UPDATE SET pruned_at = excluded.pruned_at"
    )
    # forward tapes: appended bars keyed (scenario, bar) and each feed's window state;
    # an append locks its feed's row (the freeze waits for it, or it sees the freeze)
    feed_bars: str = (
        "SELECT bar, bar_time, bar_rows, prefix_root, published_at, coalesce(visible_by, '')"
        " FROM {feed_bars}"
        " WHERE scenario = ? AND bar >= ? ORDER BY bar"
    )
    last_feed_bar: str = (
        "SELECT bar, bar_time, prefix_root FROM {feed_bars} WHERE scenario = ?"
        " ORDER BY bar DESC LIMIT 1"
    )
    open_feed: str = (
        "INSERT INTO {feeds} (scenario, frozen, unsealed) VALUES (?, 0, 0)"
        " ON CONFLICT (scenario) DO NOTHING"
    )
    stamp_feed: str = (
        "UPDATE {feed_bars} SET published_at = ? WHERE scenario = ? AND bar BETWEEN ? AND ?"
    )
    confirm_feed: str = (
        "UPDATE {feed_bars} SET visible_by = ? WHERE scenario = ? AND bar BETWEEN ? AND ?"
    )
    lock_feed: str = "SELECT frozen, unsealed FROM {feeds} WHERE scenario = ?{for_update}"
    feed_state: str = "SELECT frozen, unsealed FROM {feeds} WHERE scenario = ?"
    append_feed: str = (
        "INSERT INTO {feed_bars} (scenario, bar, bar_time, bar_rows, prefix_root, published_at)"
        " VALUES (?, ?, ?, ?, ?, ?)"
    )
    set_feed_state: str = (
        "UPDATE {feeds} SET frozen = coalesce(?, frozen), unsealed = coalesce(?, unsealed)"
        " WHERE scenario = ?"
    )

    @classmethod
    def of(cls, dialect: Dialect) -> Statements:
        """Every statement rendered for ``dialect``."""
        return render_all(cls(), dialect, TABLES, PREFIXES[dialect.name])


def upgrade(dialect: Dialect, since: int) -> list[str]:
    """The statements upgrading, in place, a store of the schema before a forward tape's
    bars kept the clock read after their append committed (``since`` 3: SQLite's 10,
    PostgreSQL's 6: the column, NULL in the rows kept, which say only ``published_at``),
    before sessions kept their lineage and journal rows their clock bar too (2: SQLite's
    9, PostgreSQL's 5), before horizons were keyed by lineage tags too (1: SQLite's 8,
    PostgreSQL's 4) or before each session kept whether it was counted too (0: SQLite's
    7, PostgreSQL's 3).
    Without the flag: the column, and every session counted but one still open and never
    stepped, whose opening may have been killed before it counted it (the opening's own
    repair decides: ``RuntimeStore.count_session`` with ``short``). Then every horizon
    row keyed by a scenario id set apart, each re-keyed by the first catalog holding its
    scenario (``RuntimeStore.adopt_horizons``): which id is whose tag only a catalog
    knows. Then the sessions' lineage and the journal's bar, both NULL in the rows kept:
    each (principal, scenario id) of sessions counted before is set apart as a row that
    shows nothing and counts no session, so that the catalog re-keying it gives them their
    lineage (``adopt_horizons``; where the principal's row of that id was set apart
    already, with it)."""
    prefix = PREFIXES[dialect.name]
    sql = Statements.of(dialect)
    statements = []
    if since < 1:
        statements += [SESSIONS.add_column("counted", dialect, prefix), sql.counted_before]
    if since < 2:
        statements += [*UNKEYED_HORIZONS.create(dialect, prefix), sql.set_apart, sql.keyed_apart]
    if since < 3:
        statements += [
            SESSIONS.add_column("lineage", dialect, prefix),
            JOURNAL.add_column("bar", dialect, prefix),
            sql.sessions_apart,
        ]
    return [*statements, FEED_BARS.add_column("visible_by", dialect, prefix)]
