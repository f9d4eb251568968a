"""Turn credentials (seed 004): the door's second way in, for the host's own harness.

A credential states nothing. It is an opaque pointer at "the turn currently in flight
on thread T", minted by the process that owns both the door and the harness. It has
no subject, scope or venue in it, so there is nothing to forge: whatever the
pointed-at turn can already do is exactly what the credential can do, and when no turn
of that thread is in flight it resolves to nothing.

Only a sha256 of each token is kept, looked up by digest and confirmed with a
constant-time comparison, so a memory dump holds no usable bearer and timing says
nothing about near misses. Credentials are kept in order of last use, so every mint
first forgets the ones idle too long from the front of that order: a harness that mints
one per turn and never revokes holds at most one idle period's worth.
"""

from __future__ import annotations

import hmac
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from kestrel_protocol.ports import LiveTurn

from .bearers import bearer_digest, mint_bearer, well_formed_bearer

__all__ = [
    "CREDENTIAL_IDLE_MS",
    "TURN_CREDENTIAL_PREFIX",
    "TurnCredentials",
    "create_turn_credentials",
]

logger = logging.getLogger(__name__)

CREDENTIAL_IDLE_MS = 15 * 60 * 1000
"""A credential unused for this long is forgotten (a harness re-mints per turn anyway)."""

TURN_CREDENTIAL_PREFIX = "kestrel_turn_"
"""Fixed prefix so a leaked token is recognisable (secret scanners) and cheap to triage."""


@dataclass(slots=True)
class _Credential:
    digest: bytes
    thread_id: str
    last_used_ms: float


@dataclass(frozen=True, slots=True)
class _Publication:
    turn: LiveTurn
    serial: int


class TurnCredentials:
    """The seed's ``TurnCredentials``: publish turns, mint, revoke and resolve credentials.

    Thread-safe because a harness may publish from its own worker thread while the door
    resolves on the event loop.
    """

    def __init__(self, now: Callable[[], float] | None = None, idle_ms: float | None = None):
        self._now = now or (lambda: time.monotonic() * 1000.0)
        self._idle_ms = CREDENTIAL_IDLE_MS if idle_ms is None else idle_ms
        self._lock = threading.Lock()
        self._turns: dict[str, _Publication] = {}
        self._credentials: OrderedDict[bytes, _Credential] = OrderedDict()  # by last use
        self._serial = 0

    def publish(self, thread_id: str, turn: LiveTurn) -> Callable[[], None]:
        """Make ``turn`` the one in flight on ``thread_id``; the disposer ends it.

        Publishing grants nothing: it makes credentials already minted for the thread
        resolvable again. Disposing an older publication after a newer one replaced it
        leaves the newer one in place.
        """
        with self._lock:
            self._serial += 1
            publication = _Publication(turn, self._serial)
            self._turns[thread_id] = publication

        def dispose() -> None:
            with self._lock:
                if self._turns.get(thread_id) is publication:
                    del self._turns[thread_id]

        return dispose

    def mint(self, thread_id: str) -> str | None:
        """A new credential for ``thread_id``, or ``None`` when no turn of it is in flight.

        There is no parameter naming a subject: the subject is whatever the live turn is.
        """
        with self._lock:
            if thread_id not in self._turns:
                return None
            now = self._now()
            self._sweep(now)
            token = mint_bearer(TURN_CREDENTIAL_PREFIX)
            digest = bearer_digest(token)
            self._credentials[digest] = _Credential(digest, thread_id, now)
            return token

    def _sweep(self, now: float) -> None:
        """Forget the credentials idle too long (the oldest-used first; caller holds the lock)."""
        credentials = self._credentials
        while credentials:
            oldest = next(iter(credentials.values()))
            if now - oldest.last_used_ms < self._idle_ms:
                return
            del credentials[oldest.digest]

    def revoke(self, token: str) -> None:
        """Forget ``token`` for good; unknown or garbage input is ignored."""
        try:
            digest = bearer_digest(token)
        except Exception:
            return
        with self._lock:
            self._credentials.pop(digest, None)

    async def resolve(self, token: str) -> LiveTurn | None:
        """The live turn ``token`` points at now, or ``None``. Never raises."""
        try:
            return self._resolve(token)
        except Exception:  # the contract: an unresolvable token is simply not a credential
            logger.debug("turn credential did not resolve", exc_info=False)
            return None

    def _resolve(self, token: str) -> LiveTurn | None:
        if not well_formed_bearer(token, TURN_CREDENTIAL_PREFIX):
            return None
        digest = bearer_digest(token)
        with self._lock:
            credential = self._credentials.get(digest)
            if credential is None or not hmac.compare_digest(credential.digest, digest):
                return None
            now = self._now()
            if now - credential.last_used_ms >= self._idle_ms:
                del self._credentials[digest]
                return None
            publication = self._turns.get(credential.thread_id)
            if publication is None:
                return None
            credential.last_used_ms = now
            self._credentials.move_to_end(digest)
            return publication.turn


def create_turn_credentials(
    now: Callable[[], float] | None = None, idle_ms: float | None = None
) -> TurnCredentials:
    """The seed's ``createTurnCredentials``; ``now`` (ms) and ``idle_ms`` are test seams."""
    return TurnCredentials(now=now, idle_ms=idle_ms)
