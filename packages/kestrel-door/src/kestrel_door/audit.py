"""Append-only audit rows: who called which tool from where, and how it ended.

A row holds a digest of the arguments, never the arguments: a submitted strategy or a
voucher must not be readable from the audit table, yet the same call is recognisable.
The table refuses UPDATE and DELETE by trigger.

On the event loop a call's row is written by :meth:`AuditLog.record`: the rows of the
calls that reach it in one step of the loop are committed together, in the order they
came, and each call goes on once its row is committed (as when each was its own
commit). Under `door_http.py`'s 32 clients a commit took 3.6 rows on average, where
each row was a commit on the loop (an SQLite commit is most of a row's cost, and each
lets worker threads take the interpreter from the loop).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
from kestrel_protocol import CanonicalizationError, canonical_json
from kestrel_protocol.store import AuditValues, DoorRecords

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


@dataclass(slots=True, eq=False)
class _Batch:
    """The rows one commit will write, and how it went."""

    rows: list[AuditValues]
    written: anyio.Event = field(default_factory=anyio.Event)
    error: Exception | None = None


class AuditLog:
    """Writes and reads audit rows in the door's store."""

    def __init__(self, store: DoorRecords, now: Callable[[], str] = _utc_now) -> None:
        self._store = store
        self._now = now
        self._open: _Batch | None = None  # the rows of this step of the event loop

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

    async def record(
        self, *, principal: str, venue: str, tool: str, arguments: Mapping[str, Any], outcome: str
    ) -> None:
        """:meth:`append` on the event loop: returns once the row is committed, with the
        rows of the other calls that came in the same step (see the module); raises what
        the commit raised. A caller cancelled while it waits leaves its row to be
        written all the same."""
        row = (self._now(), principal, venue, tool, argument_digest(arguments), outcome)
        batch = self._open
        if batch is not None:
            batch.rows.append(row)
            await batch.written.wait()
            if batch.error is not None:
                raise batch.error
            return
        batch = self._open = _Batch([row])
        await anyio.lowlevel.cancel_shielded_checkpoint()  # the step's other calls join
        self._open = None
        try:
            self._store.add_audits(batch.rows)
        except Exception as exc:
            batch.error = exc
            raise
        finally:
            batch.written.set()

    def rows(self, principal: str | None = None, limit: int = 100) -> list[AuditRow]:
        """The newest ``limit`` rows, oldest first, optionally for one principal."""
        return [
            AuditRow(e.seq, e.time, e.principal, e.venue, e.tool, e.digest, e.outcome)
            for e in self._store.audit(principal, limit)
        ]
