"""Who is calling: a bearer becomes a live turn, or nothing.

Three kinds of bearer, tried in a fixed order: a turn credential (resolved to the
host's live turn, whose own tools run the call), then each configured
``GrantVerifier`` (issued tokens, OAuth access tokens), whose grant the door turns into
its own ``TurnTools``. The bearer itself never leaves this module: nothing downstream
receives it, and nothing here logs it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.ports import Grant, GrantVerifier, LiveTurn, TurnCredentialPort

__all__ = ["Authenticated", "Authenticator", "bearer_of"]

logger = logging.getLogger(__name__)

_MAX_BEARER = 16 * 1024


def bearer_of(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, else ``None``."""
    if not header or len(header) > _MAX_BEARER + 7:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    token = token.strip()
    return token or None


@dataclass(frozen=True, slots=True)
class Authenticated:
    """A caller the door accepts: either a host's live turn or a verified grant."""

    kind: Literal["turn", "issued", "oauth"]
    turn: LiveTurn | None = None
    grant: Grant | None = None

    @property
    def principal(self) -> str:
        if self.turn is not None:
            return self.turn.ctx.principal
        assert self.grant is not None
        return self.grant.principal


class Authenticator:
    """Resolves a presented bearer; ``None`` means 401."""

    def __init__(
        self,
        turn_credentials: TurnCredentialPort | None,
        verifiers: Sequence[GrantVerifier],
        on_failure: Callable[[], None] | None = None,
    ) -> None:
        self._turns = turn_credentials
        self._verifiers = tuple(verifiers)
        self._on_failure = on_failure

    async def authenticate(self, header: str | None) -> Authenticated | None:
        """The caller, or ``None`` (401). Raises ``BACKEND_UNAVAILABLE`` when no verifier
        accepted the bearer and one could not reach its store: an outage is not a bad
        token."""
        token = bearer_of(header)
        if token is None:
            return None
        if self._turns is not None:
            try:
                turn = await self._turns.resolve(token)
            except Exception:  # a port that breaks its contract still must not leak
                logger.warning("turn credential port raised; treated as unresolved")
                turn = None
            if turn is not None:
                return Authenticated(kind="turn", turn=turn)
        outage: KestrelError | None = None
        for verifier in self._verifiers:
            try:
                grant = await verifier.verify(token)
            except KestrelError as exc:
                if exc.code != RefusalCode.BACKEND_UNAVAILABLE:
                    logger.warning("grant verifier %s raised", type(verifier).__name__)
                else:
                    outage = exc
                grant = None
            except Exception:
                logger.warning("grant verifier %s raised", type(verifier).__name__)
                grant = None
            if grant is not None:
                return Authenticated(kind=grant.kind, grant=grant)
        if outage is not None:  # not judged: the store did not answer
            raise outage
        return None
