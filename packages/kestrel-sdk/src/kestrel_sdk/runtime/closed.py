"""What a close computed, kept for the session's grade and proof in the same process.

Closing a session the runtime holds live leaves its engine at the record's head with
everything a grade measures (its equity trace, fills, account and clock), and writes
the record and the blotter: the grade measures that engine and the proof splices their
canonical bytes (the blotter's object made then, from its text), where a session closed
elsewhere (another process, or before a restart or an eviction) is replayed from its
pentads and read back from its artifacts.
A verifier's replay (``kestrel verify``) stays the check of either.
"""

from __future__ import annotations

from dataclasses import dataclass

from kestrel_protocol import SessionRecord
from kestrel_protocol.store import JournalEntry

from .engine import SessionEngine

__all__ = ["Closed"]


@dataclass(frozen=True, eq=False)
class Closed:
    """A session's close in this process: its ``record``, its closed ``engine`` (at the
    record's head; its blotter is the record's), the canonical bytes of the record and
    blotter (the artifacts the close stored), the ``journal`` it closed (the pentads'
    rows) and its ``pentads``' canonical bytes as the close built and stored them (in
    the journal's order; None when the store rebuilt them)."""

    record: SessionRecord
    engine: SessionEngine
    record_bytes: bytes
    blotter_bytes: bytes
    journal: list[JournalEntry]
    pentads: list[bytes] | None
