"""The door's MCP methods for one caller, generated from the surface.

Every method passes the guard first: a caller holding a grant (issued or OAuth token)
needs the method's scope from ``METHOD_SCOPES`` (a refusal is 403 ``insufficient_scope``
and an audit row). Then ``tools/*``, ``resources/*``, ``prompts/*`` and
``completion/complete`` are the surface's :class:`~kestrel_protocol.surface.McpMethods`
over the caller's own ``turn.tools.call``: a resource is read, and a prompt's facts
fetched, as the tool calls they project, so a turn credential reads exactly what its
turn can, and every call that reaches the runtime is one call of the turn's tools
(guard, approval and audit included). Only the handshake (``initialize``, ``ping``,
``server/discover``) is answered here, needing no scope.

Log messages: the door keeps no sessions, so ``logging/setLevel`` (handshake era) sets
the level for the caller's principal; a 2026-07-28 request names its own
``io.modelcontextprotocol/logLevel``. Progress and log messages reach the client only
when its POST accepts an SSE response (see :mod:`.mcp_http`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

import anyio
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
    LOG_LEVEL_KEY,
    METHOD_SCOPES,
    TOOL_SCOPE,
    McpMethods,
    Notifier,
    Recall,
    RpcError,
    Send,
    Surface,
    log_threshold,
)

from .audit import AuditLog

__all__ = ["SERVER_INFO", "DoorMcp"]

logger = logging.getLogger(__name__)

try:
    _VERSION = version("kestrel-door")
except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
    _VERSION = "0.0.0"

SERVER_INFO: Final = {"name": "kestrel-door", "title": "Kestrel door", "version": _VERSION}

Method = Callable[[Mapping[str, Any], bool, Notifier], Awaitable[dict[str, Any]]]


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
        recall: Recall | None = None,
        log_levels: dict[str, int] | None = None,
    ) -> None:
        self.turn = turn
        self._guarded = guarded
        self._audit = audit
        self._capabilities = surface.capabilities
        self._log_levels: dict[str, int] = {} if log_levels is None else log_levels
        self.scope_challenge: str | None = None
        # A grant's calls go to the door's own tools, which check the arguments first;
        # a turn credential's go to the product's, so they are checked here.
        m = McpMethods(
            surface, turn.tools.call, recall=recall, sleep=anyio.sleep, validate=not guarded
        )
        self._methods: dict[str, Method] = {
            "initialize": self._initialize,
            "ping": self._ping,
            "server/discover": self._discover,
            "logging/setLevel": self._set_level,
            "tools/list": lambda p, modern, out: m.tools_list(p),
            "tools/call": lambda p, modern, out: m.tools_call(p, out),
            "resources/list": lambda p, modern, out: m.resources_list(p),
            "resources/templates/list": lambda p, modern, out: m.templates_list(p),
            "resources/read": lambda p, modern, out: m.resources_read(p, modern=modern),
            "prompts/list": lambda p, modern, out: m.prompts_list(p),
            "prompts/get": lambda p, modern, out: m.prompts_get(p),
            "completion/complete": lambda p, modern, out: m.complete(p),
        }

    async def request(
        self, rid: Any, method: str, params: Any, send: Send | None = None
    ) -> dict[str, Any]:
        """The JSON-RPC response to one request; ``send`` carries its notifications."""
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
            out = self._notifier(params, modern, send)
            try:
                with out.capturing():
                    result = await handler(params, modern, out)
            finally:
                with anyio.CancelScope(shield=True):
                    await out.flush()
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

    def _notifier(self, params: Mapping[str, Any], modern: bool, send: Send | None) -> Notifier:
        meta = params.get("_meta")
        meta = meta if isinstance(meta, Mapping) else {}
        level = self._log_levels.get(self.turn.ctx.principal)
        if modern:
            requested = meta.get(LOG_LEVEL_KEY)
            level = log_threshold(requested) if requested is not None else None
        return Notifier.of(send, progress_token=meta.get("progressToken"), log_level=level)

    def _challenge(self, data: Any) -> None:
        """Remember an ``insufficient_scope`` refusal: the response is then a 403."""
        refusal = data.get("refusal") if isinstance(data, Mapping) else None
        detail = refusal.get("detail") if isinstance(refusal, Mapping) else None
        if isinstance(detail, Mapping) and detail.get("error") == "insufficient_scope":
            self.scope_challenge = str(detail.get("requiredScope", ""))

    async def _initialize(
        self, params: Mapping[str, Any], modern: bool, out: Notifier
    ) -> dict[str, Any]:
        return {
            "protocolVersion": negotiate_handshake(params.get("protocolVersion")),
            "capabilities": self._capabilities,
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        }

    async def _ping(self, params: Mapping[str, Any], modern: bool, out: Notifier) -> dict[str, Any]:
        return {}

    async def _set_level(
        self, params: Mapping[str, Any], modern: bool, out: Notifier
    ) -> dict[str, Any]:
        """``logging/setLevel``: this principal's log messages at or above ``level``."""
        self._log_levels[self.turn.ctx.principal] = log_threshold(params.get("level"))
        return {}

    async def _discover(
        self, params: Mapping[str, Any], modern: bool, out: Notifier
    ) -> dict[str, Any]:
        if not modern:
            raise RpcError(
                INVALID_PARAMS,
                "server/discover needs params._meta with "
                "io.modelcontextprotocol/protocolVersion and clientCapabilities",
            )
        return {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": self._capabilities,
            "instructions": INSTRUCTIONS,
        }
