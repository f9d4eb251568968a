"""Principals as the door's runtime and statements know them: keyed pseudonyms.

A door opens every session under its principal's pseudonym, ``p_`` + an HMAC-SHA256 of
the principal's name under the door's pseudonym secret, so the session ids, operation
ids and everything else a proof carries derive from the pseudonym, never from the name;
the statement about a grade names the same ``p_…``. Without the secret no list of
candidate names links a pseudonym (or a session id) to a principal. The secret is its
own: 32 random bytes made on first use and kept in the door's store (every replica on
one store reads the same one, so replicas agree on pseudonyms and session ids), never a
signing key, so rotating or revoking keys (:mod:`.keys`) does not change a pseudonym.
"""

from __future__ import annotations

import hmac
import re
import secrets
import threading

from kestrel_protocol.store import DoorRecords

from .keys import utc_now

__all__ = ["PSEUDONYM", "PSEUDONYM_SECRET", "Pseudonyms"]

PSEUDONYM = re.compile(r"p_[0-9a-f]{32}")
"""How every pseudonym is spelled."""

PSEUDONYM_SECRET = "pseudonym"
"""The name of the pseudonym secret in the door's store."""


class Pseudonyms:
    """The principals' pseudonyms at the door whose store is ``records``."""

    def __init__(self, records: DoorRecords) -> None:
        self._records = records
        self._secret: bytes | None = None  # never changes once stored: read once
        self._lock = threading.Lock()

    def _key(self) -> bytes:
        with self._lock:
            if self._secret is None:
                made = secrets.token_bytes(32)
                self._secret = self._records.door_secret(PSEUDONYM_SECRET, made, utc_now())
            return self._secret

    def load(self) -> None:
        """Read (or make) the secret now, so that no request waits on the store for it."""
        self._key()

    def of(self, principal: str) -> str:
        """``principal``'s pseudonym: the same for every replica on this store."""
        data = b"kestrel principal\0" + principal.encode("utf-8")
        return "p_" + hmac.new(self._key(), data, "sha256").hexdigest()[:32]
