"""Append-only audit rows: who called which tool from where, and how it ended.

A row holds a digest of the arguments, never the arguments: a submitted strategy or a
voucher must not be readable from the audit table, yet the same call is recognisable.
The table refuses UPDATE and DELETE by trigger.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kestrel_protocol import CanonicalizationError, canonical_json
from kestrel_protocol.store import DoorRecords

__all__ = ["AuditLog", "AuditRow", "argument_digest"]


def argument_digest(arguments: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the arguments' canonical JSON (a stable fallback otherwise)."""
    try:
        data = canonical_json(dict(arguments))
    except (CanonicalizationError, TypeError, ValueError):
        data = json.dumps(arguments, sort_keys=True, default=repr).encode("utf-8", "replace")
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class AuditRow:
    seq: int
    time: str
    principal: str
    venue: str
    tool: str
    digest: str
    outcome: str

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "time": self.time,
            "principal": self.principal,
            "venue": self.venue,
            "tool": self.tool,
            "digest": self.digest,
            "outcome": self.outcome,
        }


def _utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class AuditLog:
    """Writes and reads audit rows in the door's store."""

    def __init__(self, store: DoorRecords, now: Callable[[], str] = _utc_now) -> None:
        self._store = store
        self._now = now

    def append(
        self, *, principal: str, venue: str, tool: str, arguments: Mapping[str, Any], outcome: str
    ) -> None:
        self._store.add_audit(
            time=self._now(),
            principal=principal,
            venue=venue,
            tool=tool,
            digest=argument_digest(arguments),
            outcome=outcome,
        )

    def rows(self, principal: str | None = None, limit: int = 100) -> list[AuditRow]:
        """The newest ``limit`` rows, oldest first, optionally for one principal."""
        return [
            AuditRow(e.seq, e.time, e.principal, e.venue, e.tool, e.digest, e.outcome)
            for e in self._store.audit(principal, limit)
        ]
