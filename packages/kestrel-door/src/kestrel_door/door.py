"""The door's state shared by its two faces: who may call, and on what.

Ports are injected (``transport_for(principal)``, ``mcp_for(transport)``) so this
library never imports the runtime or the MCP server; the composition root wires them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from kestrel_protocol.ports import (
    GrantVerifier,
    LiveTurn,
    RunContext,
    SessionGate,
    Transport,
    TurnCredentialPort,
)
from starlette.requests import Request
from starlette.responses import Response

from .approval import ApprovalPolicy
from .audit import AuditLog
from .auth import Authenticator, bearer_of
from .basic_mcp import BasicMcpHandler
from .config import DoorConfig
from .door_tools import DoorTurnTools

__all__ = ["Door", "McpFactory", "McpHandler", "TransportFactory", "json_response"]

logger = logging.getLogger(__name__)


class McpHandler(Protocol):
    """What the door needs of an MCP server: one JSON-RPC message in, a response or None."""

    async def handle(self, message: Any) -> Any: ...


TransportFactory = Callable[[str], Transport]
McpFactory = Callable[[Transport], McpHandler]


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
        mcp_for: McpFactory | None = None,
        turn_credentials: TurnCredentialPort | None = None,
        grant_verifiers: Sequence[GrantVerifier] = (),
        gate: SessionGate | None = None,
        audit: AuditLog | None = None,
        approval: ApprovalPolicy | None = None,
    ) -> None:
        self.config = config
        self._transport_for = transport_for
        self._mcp_for = mcp_for
        self._auth = Authenticator(turn_credentials, grant_verifiers)
        self._gate = gate
        self._audit = audit
        self._approval = approval
        self._transports: dict[str, Transport] = {}
        self._handlers: dict[str, McpHandler] = {}
        self._basic = BasicMcpHandler()

    def transport(self, principal: str) -> Transport:
        found = self._transports.get(principal)
        if found is None:
            found = self._transports[principal] = self._transport_for(principal)
        return found

    def mcp_handler(self, principal: str) -> McpHandler:
        if self._mcp_for is None:
            return self._basic
        found = self._handlers.get(principal)
        if found is None:
            found = self._handlers[principal] = self._mcp_for(self.transport(principal))
        return found

    def challenge(self, *, invalid: bool) -> Response:
        """401 with the RFC 9728 pointer; ``invalid`` when a bearer was presented."""
        value = f'Bearer resource_metadata="{self.config.metadata_url}"'
        if invalid:
            value += ', error="invalid_token"'
        body = {
            "refusal": {
                "code": "FORBIDDEN",
                "message": "a valid bearer credential is required",
                "detail": {"resourceMetadata": self.config.metadata_url},
            }
        }
        return json_response(body, 401, {"WWW-Authenticate": value})

    def insufficient_scope_header(self, scope: str) -> str:
        return (
            f'Bearer error="insufficient_scope", scope="{scope}", '
            f'resource_metadata="{self.config.metadata_url}"'
        )

    async def authenticate(
        self, request: Request, venue: Literal["mcp", "http"]
    ) -> LiveTurn | Response:
        """The live turn that will run this request's calls, or the 401 to send."""
        header = request.headers.get("authorization")
        found = await self._auth.authenticate(header)
        if found is None:
            return self.challenge(invalid=bearer_of(header) is not None)
        if found.turn is not None:
            return found.turn
        grant = found.grant
        assert grant is not None
        ctx = RunContext(
            venue=venue, presence="present", principal=grant.principal, scopes=grant.scopes
        )
        tools = DoorTurnTools(
            ctx,
            self.transport(grant.principal),
            audit=self._audit,
            approval=self._approval,
            gate=self._gate,
        )
        return LiveTurn(ctx=ctx, tools=tools)

    async def aclose(self) -> None:
        for transport in self._transports.values():
            try:
                await transport.aclose()
            except Exception:
                logger.warning("transport did not close cleanly")
