"""Housekeeping in memory (a part of :class:`.memory.MemoryStore`): what every session
occupies, and pruning or discarding a closed, graded session, with the contract the SQL
adapters keep. A memory store keeps no time: its dates are None, or "" once pruned.
"""

from __future__ import annotations

from kestrel_protocol.store import StoredSession

from .memory_tables import MemorySession, MemoryTables

__all__ = ["MemoryHousekeeping"]


class MemoryHousekeeping(MemoryTables):
    """The housekeeping methods of the memory store."""

    def stored_sessions(self) -> list[StoredSession]:
        with self._lock:
            return [self._stored(found) for found in self._sessions.values()]

    def _stored(self, found: MemorySession) -> StoredSession:
        row = found.row
        journal = found.journal
        sid = len(row.id)
        size = sum(
            sid + len(source) + len(root) + len(frame) + 8 for _, source, root, frame in journal
        )
        size += sum(
            len(root) * 2 + sid + len(self._artifacts.get(root, b""))
            for _, _, root, _ in journal[1:]
        )  # as the SQL stores count them: a pentad's artifact row and its owner row
        return StoredSession(
            id=row.id,
            principal=row.principal,
            scenario_id=row.scenario_id,
            status=row.status,
            graded=row.grade_root is not None,
            closed_at=None,
            pruned_at="" if found.pruned else None,
            steps=len(journal),
            step_bytes=size,
        )

    def pruned(self, session_id: str) -> str | None:
        with self._lock:
            found = self._sessions.get(session_id)
            return "" if found is not None and found.pruned else None

    def prune(self, session_id: str) -> bool:
        """As every adapter (see ``RuntimeStore``)."""
        with self._lock:
            found = self._sessions.get(session_id)
            if found is None or found.pruned or found.row.status != "closed":
                return False
            if found.row.grade_root is None:
                return False
            for _, _, root, _ in found.journal[1:]:
                self._pentads.pop(root, None)
                owners = tuple(sid for sid in self._owners.get(root, ()) if sid != session_id)
                if owners:
                    self._owners[root] = owners
                else:
                    self._owners.pop(root, None)
                    self._artifacts.pop(root, None)
            found.journal.clear()
            found.bar = None
            found.reads.clear()
            for token, (_, sid) in list(self._operations.items()):
                if sid == session_id:
                    del self._operations[token]
            found.pruned = True
            return True

    def discard(self, session_id: str) -> bool:
        """As every adapter (see ``RuntimeStore``)."""
        with self._lock:
            found = self._sessions.get(session_id)
            if found is None or found.row.status != "closed" or found.row.grade_root is None:
                return False
            self.prune(session_id)  # its steps (nothing more when already pruned)
            owners = self._owners
            for root, had in list(owners.items()):  # what it owns beyond its steps: a few
                if session_id in had:
                    rest = tuple(sid for sid in had if sid != session_id)
                    if rest:
                        owners[root] = rest
                    else:
                        del owners[root]
                        self._artifacts.pop(root, None)
            self._graded.pop(found.row.grade_root, None)
            del self._sessions[session_id]
            return True

    def reclaim(self) -> None:
        """Nothing to do: what is dropped is the garbage collector's."""

    def footprint(self) -> int:
        """Nothing on disk."""
        return 0
