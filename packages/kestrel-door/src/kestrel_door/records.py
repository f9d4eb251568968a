"""The ``DoorRecords`` port over an SQL database, said once for SQLite and PostgreSQL.

:class:`DoorStatements` are the door's statements, written once and rendered by a
:class:`kestrel_protocol.sql.Dialect` with the door's table prefix (none in its own
SQLite file ``door.db``; ``kestrel_door_`` in a PostgreSQL database shared with the
runtime). :class:`SqlDoorRecords` is the port's logic; an adapter (:mod:`.store`,
:mod:`.postgres`) gives it connections. Every method is one transaction; the row locks
(``{for_update}``) serialise replicas counting the same principal's day or paying the
same offer, each taking the principal's day row before any offer's, so that no two wait
on each other (SQLite's ``BEGIN IMMEDIATE`` takes the whole file instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from kestrel_protocol.sql import Connection, Dialect, SqlAdapter, render_all
from kestrel_protocol.store import (
    OFFERS_KEPT,
    Arrival,
    AuditEntry,
    AuditValues,
    PaymentOutcome,
    TokenEntry,
    TokenGrantRow,
)

from .arrivals import door_time
from .pseudonyms import Pseudonyms
from .tables import DOOR_TABLES

__all__ = ["DoorStatements", "SqlDoorRecords"]


@dataclass(frozen=True, slots=True)
class DoorStatements:
    """Every statement of the door's records, rendered by :meth:`of` for one dialect."""

    add_token: str = (
        "INSERT INTO {tokens} (id, digest, principal, scopes, label, created_at, scenarios,"
        " parent, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    tokens: str = (
        "SELECT id, principal, scopes, label, created_at, revoked_at, scenarios, parent,"
        " expires_at FROM {tokens} ORDER BY created_at, id"
    )
    revoke_token: str = "UPDATE {tokens} SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"
    revoke_minted: str = (  # the live tokens a revoked token minted (one level: trials)
        "UPDATE {tokens} SET revoked_at = ? WHERE parent = ? AND revoked_at IS NULL"
    )
    token_grant: str = (
        "SELECT digest, principal, scopes, scenarios, id, expires_at FROM {tokens}"
        " WHERE digest = ? AND revoked_at IS NULL"
    )
    count_trials: str = (  # the parent's row, so that the next statement can lock it
        "INSERT INTO {trial_counts} (parent, minted, pseudonym) VALUES (?, 0, ?)"
        " ON CONFLICT (parent) DO NOTHING"
    )
    trials_minted: str = "SELECT minted FROM {trial_counts} WHERE parent = ?{for_update}"
    count_trial: str = "UPDATE {trial_counts} SET minted = minted + 1 WHERE parent = ?"
    add_trial: str = "INSERT INTO {trials} (principal, parent, number) VALUES (?, ?, ?)"
    trial_number: str = "SELECT number FROM {trials} WHERE principal = ?"
    trials_minted_by: str = "SELECT minted FROM {trial_counts} WHERE pseudonym = ?"
    unnamed_parents: str = "SELECT parent FROM {trial_counts} WHERE pseudonym IS NULL"
    name_parent: str = (
        "UPDATE {trial_counts} SET pseudonym = ? WHERE parent = ? AND pseudonym IS NULL"
    )
    trial_standing: str = (
        "SELECT t.number, c.minted FROM {trials} t JOIN {trial_counts} c ON c.parent = t.parent"
        " WHERE t.principal = ?"
    )
    add_audit: str = (
        "INSERT INTO {audit} (time, principal, venue, tool, digest, outcome)"
        " VALUES (?, ?, ?, ?, ?, ?)"
    )
    audit: str = (
        "SELECT seq, time, principal, venue, tool, digest, outcome FROM {audit}"
        " ORDER BY seq DESC LIMIT ?"
    )
    audit_of: str = (
        "SELECT seq, time, principal, venue, tool, digest, outcome FROM {audit}"
        " WHERE principal = ? ORDER BY seq DESC LIMIT ?"
    )
    open_day: str = (  # the day's row, so that the next statement can lock it
        "INSERT INTO {opens} (principal, day, count) VALUES (?, ?, 0)"
        " ON CONFLICT (principal, day) DO NOTHING"
    )
    opens: str = "SELECT count FROM {opens} WHERE principal = ? AND day = ?{for_update}"
    count: str = "UPDATE {opens} SET count = count + 1 WHERE principal = ? AND day = ?"
    add_offer: str = (
        "INSERT INTO {offers} (offer_id, principal, scenario, expires_at) VALUES (?, ?, ?, ?)"
    )
    offer: str = (
        "SELECT principal, scenario, expires_at FROM {offers} WHERE offer_id = ?{for_update}"
    )
    spend: str = (
        "INSERT INTO {vouchers_used} (voucher_id, used_at, principal) VALUES (?, ?, ?)"
        " ON CONFLICT (voucher_id) DO NOTHING"
    )
    drop_offer: str = "DELETE FROM {offers} WHERE offer_id = ?"
    trim_offers: str = (  # the principal's most recent offers only: storage stays bounded
        "DELETE FROM {offers} WHERE principal = ? AND offer_id NOT IN (SELECT offer_id"
        " FROM {offers} WHERE principal = ? ORDER BY expires_at DESC, offer_id DESC LIMIT ?)"
    )
    grant_approval: str = (
        "INSERT INTO {approvals} (principal, tool, granted_at) VALUES (?, ?, ?)"
        " ON CONFLICT (principal, tool) DO UPDATE SET granted_at = excluded.granted_at"
    )
    take_approval: str = "DELETE FROM {approvals} WHERE principal = ? AND tool = ?"
    signing_keys: str = (
        "SELECT kid, private, created_at FROM {signing_keys} ORDER BY created_at, kid"
    )
    add_signing_key: str = "INSERT INTO {signing_keys} (kid, private, created_at) VALUES (?, ?, ?)"
    revoke_signing_key: str = (  # only a key the store holds; once
        "INSERT INTO {revoked_keys} (kid, revoked_at) SELECT kid, ? FROM {signing_keys}"
        " WHERE kid = ? ON CONFLICT (kid) DO NOTHING"
    )
    revoked_keys: str = "SELECT kid, revoked_at FROM {revoked_keys} ORDER BY revoked_at, kid"
    add_secret: str = (  # the first replica to make it wins; every other reads that one
        "INSERT INTO {secrets} (name, value, created_at) VALUES (?, ?, ?)"
        " ON CONFLICT (name) DO NOTHING"
    )
    secret: str = "SELECT value FROM {secrets} WHERE name = ?"
    add_arrival: str = (  # a submission's arrival is noted once
        "INSERT INTO {arrivals} (session, seq, arrived_at, clock) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (session, seq) DO NOTHING"
    )
    arrivals: str = "SELECT seq, arrived_at, clock FROM {arrivals} WHERE session = ? ORDER BY seq"

    @classmethod
    def of(cls, dialect: Dialect, prefix: str) -> DoorStatements:
        """Every statement rendered for ``dialect``, tables named ``prefix`` + name."""
        return render_all(cls(), dialect, (t.name for t in DOOR_TABLES), prefix)


class SqlDoorRecords(SqlAdapter):
    """The ``DoorRecords`` port's logic over SQL; an adapter supplies the connections."""

    sql: ClassVar[DoorStatements]

    def _audit_transaction(self, rows: int) -> AbstractContextManager[Connection]:
        """The transaction ``rows`` audit rows are written in (see the adapters): one
        row commits on its own, several in one transaction."""
        return self._connection() if rows == 1 else self._transaction()

    # -- issued tokens ------------------------------------------------------------------

    def add_token(self, row: TokenEntry, digest: bytes) -> None:
        with self._connection() as conn:
            conn.execute(self.sql.add_token, _token_values(row, digest))

    @cached_property
    def _pseudonyms(self) -> Pseudonyms:
        """The principals' pseudonyms at this store (its secret read once)."""
        return Pseudonyms(self)

    def add_trial_token(self, row: TokenEntry, digest: bytes, of: str) -> tuple[int, int]:
        sql = self.sql
        pseudonym = self._pseudonyms.of(of)  # before the transaction: it may read the secret
        with self._transaction() as conn:
            conn.execute(sql.count_trials, (of, pseudonym))
            minted = conn.execute(sql.trials_minted, (of,)).fetchone()  # locks the count
            known = conn.execute(sql.trial_number, (row.principal,)).fetchone()
            count = int(minted[0]) + (known is None)
            number = int(known[0]) if known is not None else count
            if known is None:  # a trial minted again keeps its first number
                conn.execute(sql.count_trial, (of,))
                conn.execute(sql.add_trial, (row.principal, of, number))
            conn.execute(sql.add_token, _token_values(row, digest))
            return number, count

    def trial_standing(self, principal: str) -> tuple[int, int] | None:
        with self._connection() as conn:
            row = conn.execute(self.sql.trial_standing, (principal,)).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def trials_minted_by(self, pseudonym: str) -> int:
        with self._connection() as conn:
            row = conn.execute(self.sql.trials_minted_by, (pseudonym,)).fetchone()
        return 0 if row is None else int(row[0])

    def _name_trial_parents(self) -> None:
        """Keep each parent's pseudonym beside its count where a row kept from before
        the column lacks it (an upgraded store, when it is opened): every count is then
        found by its pseudonym."""
        with self._connection() as conn:
            parents = [str(row[0]) for row in conn.execute(self.sql.unnamed_parents).fetchall()]
        if not parents:
            return
        named = [(self._pseudonyms.of(parent), parent) for parent in parents]
        with self._transaction() as conn:
            for values in named:
                conn.execute(self.sql.name_parent, values)

    def tokens(self) -> list[TokenEntry]:
        with self._connection() as conn:
            rows = conn.execute(self.sql.tokens).fetchall()
        return [TokenEntry(*row) for row in rows]

    def revoke_token(self, token_id: str, at: str) -> int | None:
        with self._transaction() as conn:
            if int(conn.execute(self.sql.revoke_token, (at, token_id)).rowcount) == 0:
                return None
            return int(conn.execute(self.sql.revoke_minted, (at, token_id)).rowcount)

    def token_grant(self, digest: bytes) -> TokenGrantRow | None:
        with self._connection() as conn:
            row = conn.execute(self.sql.token_grant, (digest,)).fetchone()
        if row is None:
            return None
        only = None if row[3] is None else str(row[3])
        expires = None if row[5] is None else str(row[5])
        return bytes(row[0]), str(row[1]), str(row[2]), only, str(row[4]), expires

    # -- audit ----------------------------------------------------------------------------

    def add_audit(
        self, *, time: str, principal: str, venue: str, tool: str, digest: str, outcome: str
    ) -> None:
        self.add_audits([(time, principal, venue, tool, digest, outcome)])

    def add_audits(self, rows: Sequence[AuditValues]) -> None:
        """The rows, in order, in one transaction."""
        with self._audit_transaction(len(rows)) as conn:
            for row in rows:
                conn.execute(self.sql.add_audit, row)

    def audit(self, principal: str | None, limit: int) -> list[AuditEntry]:
        """The newest ``limit`` rows, oldest first, optionally for one principal."""
        with self._connection() as conn:
            if principal is None:
                found = conn.execute(self.sql.audit, (limit,)).fetchall()
            else:
                found = conn.execute(self.sql.audit_of, (principal, limit)).fetchall()
        return [AuditEntry(*row) for row in reversed(found)]

    # -- quota, offers, vouchers ----------------------------------------------------------

    def count_open_or_offer(
        self, principal: str, day: str, quota: int, offer: tuple[str, str, float]
    ) -> bool:
        sql = self.sql
        with self._transaction() as conn:
            conn.execute(sql.open_day, (principal, day))
            row = conn.execute(sql.opens, (principal, day)).fetchone()
            if row is not None and int(row[0]) < quota:
                conn.execute(sql.count, (principal, day))
                return True
            conn.execute(sql.add_offer, (offer[0], principal, offer[1], offer[2]))
            conn.execute(sql.trim_offers, (principal, principal, OFFERS_KEPT))
            return False

    def pay(
        self,
        offer_id: str,
        principal: str,
        *,
        scenario: str,
        voucher_id: str,
        now: float,
        used_at: str,
        day: str,
    ) -> PaymentOutcome:
        sql = self.sql
        with self._transaction() as conn:
            # the day's row first, as a refused open locks it before trimming offers: in
            # the other order a payment and a refused open of one principal deadlock
            conn.execute(sql.open_day, (principal, day))
            conn.execute(sql.opens, (principal, day))
            offer = conn.execute(sql.offer, (offer_id,)).fetchone()
            if offer is None or offer[0] != principal or offer[1] != scenario:
                return "no-offer"
            if offer[2] <= now:
                return "expired"
            if conn.execute(sql.spend, (voucher_id, used_at, principal)).rowcount != 1:
                return "used"
            conn.execute(sql.drop_offer, (offer_id,))
            conn.execute(sql.count, (principal, day))
            return "paid"

    # -- approvals ------------------------------------------------------------------------

    def grant_approval(self, principal: str, tool: str, at: str) -> None:
        with self._connection() as conn:
            conn.execute(self.sql.grant_approval, (principal, tool, at))

    def take_approval(self, principal: str, tool: str) -> bool:
        with self._connection() as conn:
            return int(conn.execute(self.sql.take_approval, (principal, tool)).rowcount) > 0

    # -- signing keys: (kid, Ed25519 private key, created at), oldest first ----------------

    def signing_keys(self) -> list[tuple[str, bytes, str]]:
        with self._connection() as conn:
            rows = conn.execute(self.sql.signing_keys).fetchall()
        return [(str(kid), bytes(private), str(at)) for kid, private, at in rows]

    def add_signing_key(self, kid: str, private: bytes, created_at: str) -> None:
        with self._connection() as conn:
            conn.execute(self.sql.add_signing_key, (kid, private, created_at))

    def revoke_signing_key(self, kid: str, at: str) -> bool:
        with self._connection() as conn:
            return int(conn.execute(self.sql.revoke_signing_key, (at, kid)).rowcount) > 0

    def revoked_signing_keys(self) -> dict[str, str]:
        with self._connection() as conn:
            rows = conn.execute(self.sql.revoked_keys).fetchall()
        return {str(kid): str(at) for kid, at in rows}

    # -- the door's own secrets (the pseudonym key): made once, never changed ------------

    def door_secret(self, name: str, new: bytes, created_at: str) -> bytes:
        with self._transaction() as conn:
            conn.execute(self.sql.add_secret, (name, new, created_at))
            row = conn.execute(self.sql.secret, (name,)).fetchone()
        return bytes(row[0])

    # -- forward sessions: when each submission arrived ----------------------------------

    def add_arrival(self, session_id: str, arrival: Arrival) -> None:
        with self._connection() as conn:
            conn.execute(
                self.sql.add_arrival,
                (session_id, arrival.seq, arrival.arrived_at, arrival.clock),
            )

    def arrivals(self, session_id: str) -> list[Arrival]:
        with self._connection() as conn:
            rows = conn.execute(self.sql.arrivals, (session_id,)).fetchall()
        return [Arrival(int(seq), str(at), int(clock)) for seq, at, clock in rows]

    def now(self) -> str:
        """The door's clock: this host's, every process on a SQLite file being on one host
        (the PostgreSQL adapter reads the database server's: one for every replica)."""
        return door_time()


def _token_values(row: TokenEntry, digest: bytes) -> tuple[object, ...]:
    """``row``'s values in the order of ``add_token``'s columns."""
    return (
        row.id,
        digest,
        row.principal,
        row.scopes,
        row.label,
        row.created_at,
        row.scenarios,
        row.parent,
        row.expires_at,
    )
