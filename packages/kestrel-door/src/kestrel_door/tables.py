"""The door's tables, each written once (rendered for SQLite and PostgreSQL by
:func:`kestrel_protocol.tables.create_statements`; prefixed ``kestrel_door_`` in
PostgreSQL, whose ``kestrel_meta`` the runtime shares)."""

from __future__ import annotations

from typing import Final

from kestrel_protocol.tables import Column, Index, Table

__all__ = ["BOARD_TABLES", "DOOR_TABLES", "SEAL_TABLES", "TABLES", "TOKENS", "TRIAL_COUNTS"]

TOKENS: Final = Table(
    "tokens",
    (
        Column("id", "text"),
        Column("digest", "bytes", unique=True),
        Column("principal", "text"),
        Column("scopes", "text"),
        Column("label", "text", null=True),
        Column("created_at", "text"),
        Column("revoked_at", "text", null=True),
        Column("scenarios", "text", null=True),  # a trial's only scenarios (space-separated)
        Column("parent", "text", null=True),  # a trial's: the issued token that minted it
        Column("expires_at", "text", null=True),  # RFC 3339 UTC; null: never expires
    ),
    key=("id",),
    indexes=(Index("tokens_by_parent", "parent"),),  # revoking a token finds its trials
)
AUDIT: Final = Table(  # rows are never changed nor deleted
    "audit",
    (
        Column("seq", "serial", autoincrement=True),
        Column("time", "text"),
        Column("principal", "text"),
        Column("venue", "text"),
        Column("tool", "text"),
        Column("digest", "text"),
        Column("outcome", "text"),
    ),
    key=("seq",),
    append_only=True,
)
OPENS: Final = Table(
    "opens",
    (Column("principal", "text"), Column("day", "text"), Column("count", "integer")),
    key=("principal", "day"),
)
OFFERS: Final = Table(
    "offers",
    (
        Column("offer_id", "text"),
        Column("principal", "text"),
        Column("scenario", "text"),
        Column("expires_at", "real"),
    ),
    key=("offer_id",),
)
VOUCHERS_USED: Final = Table(
    "vouchers_used",
    (Column("voucher_id", "text"), Column("used_at", "text"), Column("principal", "text")),
    key=("voucher_id",),
)
SIGNING_KEYS: Final = Table(  # the door's Ed25519 keys (attested grades)
    "signing_keys",
    (
        Column("kid", "text"),
        Column("private", "bytes"),  # the raw 32-byte private key
        Column("created_at", "text"),
    ),
    key=("kid",),
)
REVOKED_KEYS: Final = Table(  # signing keys no longer trusted (keys revoke)
    "revoked_keys",
    (Column("kid", "text"), Column("revoked_at", "text")),
    key=("kid",),
)
SECRETS: Final = Table(  # the door's own secrets: the pseudonym key
    "secrets",
    (Column("name", "text"), Column("value", "bytes"), Column("created_at", "text")),
    key=("name",),
)
APPROVALS: Final = Table(
    "approvals",
    (Column("principal", "text"), Column("tool", "text"), Column("granted_at", "text")),
    key=("principal", "tool"),
)
ARRIVALS: Final = Table(
    "arrivals",
    (
        Column("session", "text"),  # a session on a forward scenario
        Column("seq", "integer"),  # its accepted submission
        Column("arrived_at", "text"),  # the door's clock when the submission arrived
        Column("clock", "integer"),  # the clock bar the submission left the session at
    ),
    key=("session", "seq"),
)
TRIAL_COUNTS: Final = Table(  # how many trials each parent principal has minted
    "trial_counts",
    (
        Column("parent", "text"),
        Column("minted", "integer"),
        # the parent's pseudonym (:mod:`.pseudonyms`), so that its public count is one
        # lookup; null only in a row kept from before it, until the store is opened
        Column("pseudonym", "text", null=True),
    ),
    key=("parent",),
    indexes=(Index("trial_counts_by_pseudonym", "pseudonym"),),
)
TRIALS: Final = Table(  # each trial principal's number among its parent's (1, 2, ...)
    "trials",
    (Column("principal", "text"), Column("parent", "text"), Column("number", "integer")),
    key=("principal",),
    unique=(("parent", "number"),),  # never one number twice
)
BOARD_PROOFS: Final = Table(  # the proofs published on /board (:mod:`.board_records`)
    "board_proofs",
    (Column("root", "text"), Column("agent", "text", null=True), Column("proof", "text")),
    key=("root",),
)
SEALS: Final = Table(  # the scenarios a door seals by --seal (:mod:`.seal_records`)
    "seals",
    (Column("scenario", "text"), Column("served", "text", null=True)),
    key=("scenario",),
)

DOOR_TABLES: Final = (
    TOKENS,
    AUDIT,
    OPENS,
    OFFERS,
    VOUCHERS_USED,
    APPROVALS,
    SIGNING_KEYS,
    REVOKED_KEYS,
    SECRETS,
    ARRIVALS,
    TRIAL_COUNTS,
    TRIALS,
)
"""The tables of the door's records (:mod:`.records`), in the order they are created."""
BOARD_TABLES: Final = (BOARD_PROOFS,)
"""The board's table (:mod:`.board_records`)."""
SEAL_TABLES: Final = (SEALS,)
"""The kept seals' table (:mod:`.seal_records`)."""
TABLES: Final = (*DOOR_TABLES, *BOARD_TABLES, *SEAL_TABLES)
"""Every table of the door's store."""
