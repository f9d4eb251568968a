"""What every runtime store adapter (SQLite, PostgreSQL, memory) derives from its rows alike.

Each adapter reads and writes its own tables; from the rows it reads, a session's
journal entries and lookahead reads are built here, and the rows a session's close
writes (its pentads as artifacts, and the roots it then owns) are chosen here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kestrel_protocol.store import JournalEntry

from ..pentads import pentad_bytes

__all__ = ["JournalRow", "closing_rows", "journal_entries", "lookahead_reads"]

JournalRow = tuple[int, str, str, str]
"""A journal row: seq, source, pentad root, frame root (row 0: the opening frame's root)."""


def journal_entries(rows: Iterable[Sequence[Any]], after: int) -> list[JournalEntry]:
    """The entries after seq ``after`` of a session's journal rows (seq, source, pentad
    root, frame root) in seq order, each with the frame root it followed: rows from the
    one at ``after`` (row 0 holds the opening frame's root) or before it."""
    entries = []
    prev = ""
    for seq, source, root, frame in rows:
        if seq > after:
            entries.append(JournalEntry(int(seq), str(source), prev, str(root), str(frame)))
        prev = str(frame)
    return entries


def closing_rows(
    session_id: str, journal: Iterable[JournalEntry], artifacts: Mapping[str, bytes]
) -> tuple[list[tuple[str, bytes]], list[str]]:
    """What a session's close writes besides ``artifacts``: its pentads' artifact rows,
    each the pentad's canonical bytes under its journal root (one whose rebuilt bytes
    disagree is then reported as corrupt when read, never served), in root order (b-tree
    inserts along one path instead of at random pages), but for those ``artifacts``
    holds already (the runtime built them at close); and every root the session then
    owns (those and ``artifacts``'), in order."""
    pentads = sorted(
        (e.pentad_root, pentad_bytes(session_id, e.seq, e.prev, e.source)[1])
        for e in journal
        if e.pentad_root not in artifacts
    )
    owned = sorted({root for root, _ in pentads} | set(artifacts))
    return pentads, owned


def lookahead_reads(
    rows: Iterable[Sequence[Any]],
) -> tuple[bool, list[tuple[int, int, str]]]:
    """From a session's lookahead rows (seq, bar, what) in the order they were seen:
    whether it was ever served unsealed, and its reads."""
    listed = list(rows)
    unsealed = any(row[2] == "unsealed" for row in listed)
    return unsealed, [(int(a), int(b), str(c)) for a, b, c in listed if c != "unsealed"]
