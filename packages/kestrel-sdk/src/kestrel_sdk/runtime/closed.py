"""What a close computed, kept for the session's grade and proof in the same process.

Closing a session the runtime holds live leaves its engine at the record's head with
everything a grade measures (its equity trace, fills, account and clock), and writes
the record and the blotter: the grade measures that engine and the proof splices their
canonical bytes and the pentads' (no object made of them), where a session closed
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
    blotter (the artifacts the close stored), and of the journal it closed each pentad's
    canonical bytes (``pentads``, as the close built and stored them, each one's root
    the record's), in the journal's order; ``None`` when the store rebuilt them (some
    row's root was not its own).

    A list of bytes, not the journal's entries: what a close keeps lives through the
    grade and into the proof, and an object per submission kept so long is one the
    cycle collector moves to its oldest generation and traverses again at every full
    collection, long after the proof has let it go."""

    record: SessionRecord
    engine: SessionEngine
    record_bytes: bytes
    blotter_bytes: bytes
    pentads: list[bytes] | None

    @classmethod
    def of(
        cls,
        record: SessionRecord,
        engine: SessionEngine,
        stored: tuple[bytes, bytes],
        journal: list[JournalEntry],
        pentads: list[bytes] | None,
    ) -> Closed:
        """What to keep of a close that stored ``record`` and the blotter (``stored``:
        their bytes) after ``journal``'s rows, ``pentads`` their bytes (or None; None too
        unless the rows are seq 1, 2, ... in order, as a store's journal holds them)."""
        if journal and journal[-1].seq != len(journal):
            pentads = None
        return cls(record, engine, *stored, pentads)
