"""The door's state shared by its two faces: who may call, and on what.

The transport port is injected (``transport_for(principal)``) so this library never
imports the runtime; the composition root wires it. Both faces are generated from one
:class:`~kestrel_protocol.surface.Surface` (Kestrel's own unless a test passes another).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from kestrel_protocol import KestrelError
from kestrel_protocol.confined import ConfinedTransport
from kestrel_protocol.outage import RETRY_AFTER_S
from kestrel_protocol.ports import (
    GrantVerifier,
    LiveTurn,
    RunContext,
    Transport,
    TurnCredentialPort,
)
from kestrel_protocol.surface import SURFACE, Recall, Surface
from starlette.requests import Request
from starlette.responses import Response

from .approval import ApprovalPolicy, RequireApproval
from .audit import AuditLog
from .auth import Authenticator, bearer_of
from .config import DoorConfig
from .door_tools import DoorTurnTools
from .elicit import ApprovalElicitation
from .guard import refusal_json

__all__ = ["Caller", "Door", "TransportFactory", "json_response", "outage_response"]

logger = logging.getLogger(__name__)

_NO_BEARER = (
    "a bearer credential is required and none was sent (Authorization: Bearer TOKEN; "
    "Kestrel's clients send $KESTREL_API_TOKEN, else the token kept by "
    "kestrel secrets set KESTREL_API_TOKEN)"
)
_NOT_BEARER = (
    "the Authorization header sent holds no bearer credential: send Authorization: Bearer "
    "TOKEN (the scheme word Bearer, a space, then the token)"
)
_INVALID_BEARER = "the bearer credential sent is not valid here: unknown, revoked or expired"

TransportFactory = Callable[[str], Transport]


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a request is from: the live turn that runs its calls.

    ``guarded`` for a grant (issued or OAuth token): the door checks each method's scope.
    A turn credential's turn is its own guard; the door adds nothing to it.
    """

    turn: LiveTurn
    guarded: bool
    token_id: str | None = None
    """The issued token it presented (the parent of a trial it mints); else ``None``."""
    expires_at: str | None = None
    """When the issued token it presented expires (RFC 3339 UTC): a trial it mints ends no
    later; else ``None``."""


def outage_response(exc: KestrelError, *, path: str = "") -> Response:
    """503 with ``Retry-After`` for a store outage before any call (a client retries; its
    token stands); on ``/mcp`` its refusal is a JSON-RPC error's, as the guard's are."""
    retry = str(exc.detail.get("retryAfter", RETRY_AFTER_S))
    body = refusal_json(exc.refusal.to_json(), path=path)
    return json_response(body, 503, {"Retry-After": retry})


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(body, status_code=status, headers=headers, media_type="application/json")


class Door:
    """Authentication and per-principal wiring for one door app."""

    def __init__(
        self,
        config: DoorConfig,
        *,
        transport_for: TransportFactory,
        turn_credentials: TurnCredentialPort | None = None,
        grant_verifiers: Sequence[GrantVerifier] = (),
        audit: AuditLog | None = None,
        approval: ApprovalPolicy | None = None,
        surface: Surface = SURFACE,
    ) -> None:
        self.config = config
        self.surface = surface
        self.audit = audit
        self._transport_for = transport_for
        self._auth = Authenticator(turn_credentials, grant_verifiers)
        self._approval = approval
        self.elicitation = (
            ApprovalElicitation(approval)
            if isinstance(approval, RequireApproval) and config.approve_by_elicitation
            else None
        )
        """Asks a client that can elicit for an approval (``/mcp``, 2026-07-28 era), when
        the operator let clients approve (``--approve-by-elicitation``)."""
        self._transports: dict[str, Transport] = {}
        self._recalls: dict[str, Recall] = {}
        self.log_levels: dict[str, int] = {}
        """Each principal's ``logging/setLevel`` (handshake era; the door has no sessions)."""

    def transport(self, principal: str) -> Transport:
        found = self._transports.get(principal)
        if found is None:
            found = self._transports[principal] = self._transport_for(principal)
        return found

    def recall(self, principal: str) -> Recall:
        """The roots this principal's results named (completion offers only its own)."""
        found = self._recalls.get(principal)
        if found is None:
            found = self._recalls[principal] = Recall()
        return found

    def challenge(self, *, invalid: bool, path: str, sent: bool = False) -> Response:
        """401 with the RFC 9728 pointer; ``invalid`` when a bearer was presented, ``sent``
        when an Authorization header was (a bare token, another scheme). The message says
        which: a caller who sent nothing, one whose header is not ``Bearer TOKEN`` and one
        whose token is unknown here, revoked or expired have different things to fix. On
        ``/mcp`` the refusal is a JSON-RPC error's, as the guard's are."""
        value = f'Bearer resource_metadata="{self.config.metadata_url}"'
        if invalid:
            value += ', error="invalid_token"'
        refusal = {
            "code": "FORBIDDEN",
            "message": _INVALID_BEARER if invalid else _NOT_BEARER if sent else _NO_BEARER,
            "detail": {"resourceMetadata": self.config.metadata_url},
        }
        body = refusal_json(refusal, path=path)
        return json_response(body, 401, {"WWW-Authenticate": value})

    def insufficient_scope_header(self, scope: str) -> str:
        return (
            f'Bearer error="insufficient_scope", scope="{scope}", '
            f'resource_metadata="{self.config.metadata_url}"'
        )

    async def authenticate(
        self, request: Request, venue: Literal["mcp", "http"]
    ) -> Caller | Response:
        """Who is calling (the live turn that will run the calls), or the 401 to send."""
        header = request.headers.get("authorization")
        try:
            found = await self._auth.authenticate(header)
        except KestrelError as exc:  # the store did not answer: 503, the token not judged
            return outage_response(exc, path=request.url.path)
        if found is None:
            invalid = bearer_of(header) is not None
            return self.challenge(invalid=invalid, sent=bool(header), path=request.url.path)
        if found.turn is not None:
            return Caller(found.turn, guarded=False)
        grant = found.grant
        assert grant is not None
        ctx = RunContext(
            venue=venue, presence="present", principal=grant.principal, scopes=grant.scopes
        )
        transport = self.transport(grant.principal)
        if grant.scenarios is not None:  # a trial's: every face sees only its scenarios
            transport = ConfinedTransport(transport, grant.scenarios)
        tools = DoorTurnTools(
            ctx,
            transport,
            audit=self.audit,
            approval=self._approval,
            surface=self.surface,
        )
        turn = LiveTurn(ctx=ctx, tools=tools)
        return Caller(turn, guarded=True, token_id=grant.token_id, expires_at=grant.expires_at)

    async def aclose(self) -> None:
        for transport in self._transports.values():
            try:
                await transport.aclose()
            except Exception:
                logger.warning("transport did not close cleanly")
