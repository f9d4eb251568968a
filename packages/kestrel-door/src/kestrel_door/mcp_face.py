"""The door's MCP methods for one caller, generated from the surface.

Every method passes the guard first: a caller holding a grant (issued or OAuth token)
needs the method's scope from ``METHOD_SCOPES`` (a refusal is 403 ``insufficient_scope``
and an audit row). Then ``tools/*``, ``resources/*`` and ``completion/complete`` are the
surface's :class:`~kestrel_protocol.surface.McpMethods` over the caller's own
``turn.tools.call``: a resource is read as the tool call it projects, so a turn
credential reads exactly what its turn can, and every call that reaches the runtime is
one call of the turn's tools (guard, approval and audit included). Only the handshake
(``initialize``, ``ping``, ``server/discover``) is answered here, needing no scope.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, error_response
from kestrel_protocol.mcp import (
    MODERN_REMOVED_METHODS,
    SUPPORTED_VERSIONS,
    EnvelopeError,
    decorate_modern,
    negotiate_handshake,
    read_envelope,
)
from kestrel_protocol.ports import LiveTurn
from kestrel_protocol.surface import (
    INSTRUCTIONS,
    METHOD_SCOPES,
    TOOL_SCOPE,
    McpMethods,
    RpcError,
    Surface,
)

from .audit import AuditLog

__all__ = ["CAPABILITIES", "SERVER_INFO", "DoorMcp"]

logger = logging.getLogger(__name__)

try:
    _VERSION = version("kestrel-door")
except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
    _VERSION = "0.0.0"

SERVER_INFO: Final = {"name": "kestrel-door", "title": "Kestrel door", "version": _VERSION}
CAPABILITIES: Final = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "completions": {},
}

Method = Callable[[Mapping[str, Any], bool], Awaitable[dict[str, Any]]]


def _error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    return error_response(rid, code, message, data).to_json()


class DoorMcp:
    """One caller's MCP face. ``guarded`` callers (grants) need each method's scope."""

    def __init__(
        self,
        surface: Surface[Any],
        turn: LiveTurn,
        *,
        guarded: bool,
        audit: AuditLog | None = None,
    ) -> None:
        self.turn = turn
        self._guarded = guarded
        self._audit = audit
        self.scope_challenge: str | None = None
        m = McpMethods(surface, turn.tools.call)
        self._methods: dict[str, Method] = {
            "initialize": self._initialize,
            "ping": self._ping,
            "server/discover": self._discover,
            "tools/list": lambda p, modern: m.tools_list(p),
            "tools/call": lambda p, modern: m.tools_call(p),
            "resources/list": lambda p, modern: m.resources_list(p),
            "resources/templates/list": lambda p, modern: m.templates_list(p),
            "resources/read": lambda p, modern: m.resources_read(p, modern=modern),
            "completion/complete": lambda p, modern: m.complete(p),
        }

    async def request(self, rid: Any, method: str, params: Any) -> dict[str, Any]:
        """The JSON-RPC response to one request."""
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            return _error(rid, INVALID_PARAMS, "params must be an object")
        try:
            modern = read_envelope(params) is not None
        except EnvelopeError as exc:
            return _error(rid, exc.code, exc.message, exc.data)
        handler = self._methods.get(method)
        if handler is None or (modern and method in MODERN_REMOVED_METHODS):
            return _error(rid, METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})
        try:
            self._guard(method)
            result = await handler(params, modern)
        except RpcError as exc:
            self._challenge(exc.data)
            return exc.response(rid)
        if method == "tools/call" and result.get("isError"):
            self._challenge(result.get("structuredContent"))
        if modern:
            result = decorate_modern(method, result, SERVER_INFO)
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    def _guard(self, method: str) -> None:
        """Refuse a grant without the method's scope (``tools/call``: the tool's, in the turn)."""
        scope = METHOD_SCOPES.get(method)
        if not self._guarded or scope is None or scope == TOOL_SCOPE:
            return
        if scope in self.turn.ctx.scopes:
            return
        refusal = KestrelError(
            RefusalCode.FORBIDDEN,
            f"this credential lacks the scope {scope}",
            {"requiredScope": scope, "error": "insufficient_scope"},
        )
        if self._audit is not None:
            try:
                self._audit.append(
                    principal=self.turn.ctx.principal,
                    venue=self.turn.ctx.venue,
                    tool=method,
                    arguments={},
                    outcome=refusal.code,
                )
            except Exception:
                logger.exception("audit row could not be written")
        raise RpcError.of_refusal(refusal, method)

    def _challenge(self, data: Any) -> None:
        """Remember an ``insufficient_scope`` refusal: the response is then a 403."""
        refusal = data.get("refusal") if isinstance(data, Mapping) else None
        detail = refusal.get("detail") if isinstance(refusal, Mapping) else None
        if isinstance(detail, Mapping) and detail.get("error") == "insufficient_scope":
            self.scope_challenge = str(detail.get("requiredScope", ""))

    async def _initialize(self, params: Mapping[str, Any], modern: bool) -> dict[str, Any]:
        return {
            "protocolVersion": negotiate_handshake(params.get("protocolVersion")),
            "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        }

    async def _ping(self, params: Mapping[str, Any], modern: bool) -> dict[str, Any]:
        return {}

    async def _discover(self, params: Mapping[str, Any], modern: bool) -> dict[str, Any]:
        if not modern:
            raise RpcError(
                INVALID_PARAMS,
                "server/discover needs params._meta with "
                "io.modelcontextprotocol/protocolVersion and clientCapabilities",
            )
        return {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
        }
