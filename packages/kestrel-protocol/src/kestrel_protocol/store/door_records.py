"""The door's store port: :class:`DoorRecords` holds the door's own bookkeeping (issued
tokens, audit rows, vouchers, quotas, approvals, signing keys, forward sessions'
arrivals), and the rows it hands back. It never decides runtime semantics. Its adapters
are SQLite (``door.db`` beside the runtime's file) and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from ..store_feed import Arrival

__all__ = [
    "OFFERS_KEPT",
    "AuditEntry",
    "AuditValues",
    "DoorRecords",
    "PaymentOutcome",
    "TokenEntry",
    "TokenGrantRow",
]

PaymentOutcome = Literal["paid", "no-offer", "expired", "used"]
OFFERS_KEPT = 8
"""A principal's most recent payment offers kept (older ones lapse): refused opens do
not grow the door's storage without bound."""


@dataclass(frozen=True, slots=True)
class TokenEntry:
    """An issued token as stored: its hash, never the token."""

    id: str
    principal: str
    scopes: str  # space-separated
    label: str | None
    created_at: str
    revoked_at: str | None
    scenarios: str | None = None
    """Space-separated: the only scenarios the token's principal sees (a trial's); ``None``
    for the whole catalog."""
    parent: str | None = None
    """The id of the issued token that minted it (a trial's): revoking that one revokes
    this one too. ``None`` for a token the operator issued, or a trial an OAuth token
    minted."""
    expires_at: str | None = None
    """When the door stops accepting it (RFC 3339 UTC, to the second); ``None``: never (a
    token issued so, or before tokens expired)."""


@dataclass(frozen=True, slots=True)
class AuditEntry:
    seq: int
    time: str
    principal: str
    venue: str
    tool: str
    digest: str
    outcome: str


TokenGrantRow = tuple[bytes, str, str, str | None, str, str | None]
"""An unrevoked token as the door verifies it: digest, principal, scopes, scenarios, id,
expires_at (in order)."""
AuditValues = tuple[str, str, str, str, str, str]
"""An audit row to append: time, principal, venue, tool, digest, outcome (in order)."""


@runtime_checkable
class DoorRecords(Protocol):
    """The door's own tables. Every method is one atomic transaction.

    Contract: tokens are stored by digest only; audit rows are append-only (the store
    refuses updates and deletes); ``revoke_token`` revokes the token and every live token
    it minted (its ``parent``) at once; ``count_open_or_offer`` counts a free open while
    ``used < quota`` for the day, else records the offer (keeping the principal's
    :data:`OFFERS_KEPT` most recent, the older dropped), atomically; ``pay`` checks the
    offer and spends the voucher id once, atomically with counting the open.
    """

    @property
    def location(self) -> str: ...

    def close(self) -> None: ...

    def add_token(self, row: TokenEntry, digest: bytes) -> None: ...
    # a trial's token (``row.principal``, a trial of the principal ``of``) and the trial's
    # number among ``of``'s trials (1, 2, ... in mint order; a trial minted again keeps its
    # first) and how many trials ``of`` has minted with it, in one transaction: never one
    # number twice, whichever replica mints
    def add_trial_token(self, row: TokenEntry, digest: bytes, of: str) -> tuple[int, int]: ...
    # the trial's number and how many trials its parent has minted so far (None: no trial
    # numbered), read together
    def trial_standing(self, principal: str) -> tuple[int, int] | None: ...
    # how many trials the parent principal whose pseudonym is given has minted (0: none;
    # each count row keeps its parent's pseudonym, written with it)
    def trials_minted_by(self, pseudonym: str) -> int: ...
    def tokens(self) -> list[TokenEntry]: ...
    # ``None`` when no live token ``token_id``; else how many live tokens it minted were
    # revoked with it, in the same transaction
    def revoke_token(self, token_id: str, at: str) -> int | None: ...
    # (digest, principal, scopes, scenarios, id, expires_at) of the unrevoked token with that
    # digest (whether it has expired is the door's to judge: the store keeps no clock)
    def token_grant(self, digest: bytes) -> TokenGrantRow | None: ...

    def add_audit(
        self, *, time: str, principal: str, venue: str, tool: str, digest: str, outcome: str
    ) -> None: ...
    def add_audits(self, rows: Sequence[AuditValues]) -> None: ...
    def audit(self, principal: str | None, limit: int) -> list[AuditEntry]: ...

    def count_open_or_offer(
        self,
        principal: str,
        day: str,
        quota: int,
        offer: tuple[str, str, float],  # (offer id, scenario, expires at epoch)
    ) -> bool: ...
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
    ) -> PaymentOutcome: ...

    def grant_approval(self, principal: str, tool: str, at: str) -> None: ...
    def take_approval(self, principal: str, tool: str) -> bool: ...

    # signing keys: (kid, Ed25519 private key, created at), oldest first
    def signing_keys(self) -> list[tuple[str, bytes, str]]: ...
    def add_signing_key(self, kid: str, private: bytes, created_at: str) -> None: ...
    # a revoked key stays stored (never signs, published as revoked); True when revoked now
    def revoke_signing_key(self, kid: str, at: str) -> bool: ...
    def revoked_signing_keys(self) -> dict[str, str]: ...  # kid -> revoked at

    # the door's secret ``name``: ``new`` stored if there is none yet; the stored one
    def door_secret(self, name: str, new: bytes, created_at: str) -> bytes: ...

    # forward sessions: each accepted submission's arrival (once per (session, seq): a
    # second note of the same seq keeps the first), in seq order
    def add_arrival(self, session_id: str, arrival: Arrival) -> None: ...
    def arrivals(self, session_id: str) -> list[Arrival]: ...
    # the door's clock (RFC 3339 UTC to the microsecond), one for every process on the
    # store: when a submission arrived and when a bar was published are compared, and a
    # replica or feed whose host clock ran behind would sign a late decision on time
    # (PostgreSQL: the database server's clock; SQLite, one host's file: that host's)
    def now(self) -> str: ...
