"""The door's MCP methods for one caller, generated from the surface.

The caller's requests are answered by the one MCP session core
(:class:`~kestrel_protocol.surface.McpSession`, the one stdio MCP serves too) over the
caller's own ``turn.tools.call``: a resource is read, and a prompt's facts fetched, as
the tool calls they project, so a turn credential reads exactly what its turn can, and
every call that reaches the runtime is one call of the turn's tools (guard, approval and
audit included). This module adds the door's guard: every method but the handshake
(``initialize``, ``ping``, ``server/discover``) needs, for a caller holding a grant
(issued or OAuth token), the method's scope from ``METHOD_SCOPES`` (a refusal is 403
``insufficient_scope`` and an audit row).

Log messages: the door keeps no sessions, so ``logging/setLevel`` (handshake era) sets
the level for the caller's principal; a 2026-07-28 request names its own
``io.modelcontextprotocol/logLevel``. Progress and log messages reach the client only
when its POST accepts an SSE response (see :mod:`.mcp_http`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial
from typing import Any, Final

import anyio
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.mcp import server_info
from kestrel_protocol.ports import LiveTurn
from kestrel_protocol.surface import (
    INSTRUCTIONS,
    METHOD_SCOPES,
    TOOL_SCOPE,
    McpSession,
    Recall,
    RpcError,
    Send,
    Surface,
)

from .audit import AuditLog
from .elicit import ApprovalElicitation

__all__ = ["SERVER_INFO", "DoorMcp"]

logger = logging.getLogger(__name__)

SERVER_INFO: Final = server_info("kestrel-door", "kestrel-door", "Kestrel door")


class DoorMcp:
    """One caller's MCP face. ``guarded`` callers (grants) need each method's scope."""

    def __init__(
        self,
        surface: Surface,
        turn: LiveTurn,
        *,
        guarded: bool,
        audit: AuditLog | None = None,
        recall: Recall | None = None,
        log_levels: dict[str, int] | None = None,
        elicitation: ApprovalElicitation | None = None,
    ) -> None:
        self.turn = turn
        self._elicitation = elicitation
        self.scope_challenge: str | None = None
        # A grant's calls go to the door's own tools, which check the arguments first;
        # a turn credential's go to the product's, so they are checked here.
        self.session = McpSession(
            surface,
            turn.tools.call,
            server_info=SERVER_INFO,
            instructions=INSTRUCTIONS,
            cancel_scope=anyio.CancelScope,
            sleep=anyio.sleep,
            validate=not guarded,
            recall=recall,
            log_levels=log_levels,
            log_key=turn.ctx.principal,
            # the guard refers to what it checks, not to this face: a face made per
            # request is then freed when dropped, not left to the cycle collector
            guard=partial(_guard, turn, audit) if guarded else None,
        )

    async def request(
        self, rid: Any, method: str, params: Any, send: Send | None = None
    ) -> dict[str, Any]:
        """The JSON-RPC response to one request; ``send`` carries its notifications."""
        elicit = self._elicitation if method == "tools/call" else None
        if elicit is not None:  # an approval the client was asked for and accepted
            elicit.accept(self.turn.ctx.principal, params)
        response = await self.session.request(rid, method, params, send)
        error = response.get("error")
        if isinstance(error, Mapping):
            self._challenge(error.get("data"))
        elif method == "tools/call":
            result = response.get("result")
            if isinstance(result, Mapping) and result.get("isError"):
                self._challenge(result.get("structuredContent"))
            if elicit is not None and isinstance(result, Mapping):
                asked = elicit.ask(self.turn.ctx.principal, params, result)
                if asked is not None:  # asked of the client rather than refused
                    response = {**response, "result": {**asked, "_meta": result.get("_meta")}}
        return response

    def _challenge(self, data: Any) -> None:
        """Remember an ``insufficient_scope`` refusal: the response is then a 403."""
        refusal = data.get("refusal") if isinstance(data, Mapping) else None
        detail = refusal.get("detail") if isinstance(refusal, Mapping) else None
        if isinstance(detail, Mapping) and detail.get("error") == "insufficient_scope":
            self.scope_challenge = str(detail.get("requiredScope", ""))


def _guard(turn: LiveTurn, audit: AuditLog | None, method: str) -> None:
    """Refuse a grant without the method's scope (``tools/call``: the tool's, in the turn)."""
    scope = METHOD_SCOPES.get(method)
    if scope is None or scope == TOOL_SCOPE:
        return
    if scope in turn.ctx.scopes:
        return
    refusal = KestrelError(
        RefusalCode.FORBIDDEN,
        f"this credential lacks the scope {scope}",
        {"requiredScope": scope, "error": "insufficient_scope"},
    )
    if audit is not None:
        try:
            audit.append(
                principal=turn.ctx.principal,
                venue=turn.ctx.venue,
                tool=method,
                arguments={},
                outcome=refusal.code,
            )
        except Exception:
            logger.exception("audit row could not be written")
    raise RpcError.of_refusal(refusal, method)
