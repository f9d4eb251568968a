"""The store ports: where the runtime and the door keep what they persist, and which
store a process uses.

Two ports. The runtime's (:mod:`.runtime_store`) has three adapters: SQLite (embedded,
the default), PostgreSQL (shared by any number of processes) and memory (one process,
nothing on disk: for training loops, sweeps and tests); the door's
(:mod:`.door_records`), the first two. :class:`RuntimeStore` holds sessions, the
per-session journal (``(session, seq)`` unique: the journal is the truth every process
replays), artifacts and resumable operations; :class:`DoorRecords` holds the door's own
bookkeeping (issued tokens, audit rows, vouchers, quotas, approvals). Neither ever
decides runtime semantics.

One setting chooses the store everywhere: ``--store URL`` or ``$KESTREL_STORE``, one of
``sqlite:///PATH`` (default ``$KESTREL_HOME/kestrel.db``), ``postgresql://…`` (or
libpq's ``host=… dbname=…`` form) or ``memory:`` (:mod:`.location`);
:mod:`kestrel_protocol.stores` opens the adapter it names. Printed, a location never
shows a password (:func:`~kestrel_protocol.redact.redact_store_url`).
"""

from __future__ import annotations

from ..store_feed import Arrival, FeedBar, FeedConflict, FeedStatus
from .door_records import (
    OFFERS_KEPT,
    AuditEntry,
    AuditValues,
    DoorRecords,
    PaymentOutcome,
    TokenEntry,
    TokenGrantRow,
)
from .location import MEMORY_URL, STORE_ENV, StoreLocation, store_location
from .runtime_store import (
    Adopted,
    ArtifactStatus,
    Horizon,
    JournalConflict,
    JournalEntry,
    Reached,
    RuntimeStore,
    SessionHead,
    SessionRow,
    StepMarks,
    StoredSession,
)

__all__ = [
    "MEMORY_URL",
    "OFFERS_KEPT",
    "STORE_ENV",
    "Adopted",
    "Arrival",
    "ArtifactStatus",
    "AuditEntry",
    "AuditValues",
    "DoorRecords",
    "FeedBar",
    "FeedConflict",
    "FeedStatus",
    "Horizon",
    "JournalConflict",
    "JournalEntry",
    "PaymentOutcome",
    "Reached",
    "RuntimeStore",
    "SessionHead",
    "SessionRow",
    "StepMarks",
    "StoreLocation",
    "StoredSession",
    "TokenEntry",
    "TokenGrantRow",
    "store_location",
]
