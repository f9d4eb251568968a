"""The one MCP session core: what stdio MCP and the door's ``/mcp`` answer, both eras.

:class:`McpSession` answers one decoded request (``id``, ``method``, ``params``): the
era envelope (``params._meta``), the method table (the handshake here, resource
subscriptions :mod:`.subscriptions`'s, everything else the surface's
:class:`~.methods.McpMethods` over one tool caller), the face's guard,
the request's notifier (progress, log messages), cancellation and the 2026-07-28
decoration. A face adds only its framing: stdio reads and writes lines
(``kestrel_mcp``), the door reads POSTs and answers JSON or SSE (``kestrel_door``).
``handle`` also takes a whole decoded message, notifications and malformed ones
included, the way a line of stdio arrives.

Every request takes the same path; the work a request does not need is not done (no
envelope without ``_meta``, no notifier when nothing can be sent, no cancel scope for a
call that changes state: such a call runs to completion once started, its response
withheld if it was cancelled).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from contextlib import AbstractContextManager, nullcontext
from types import MappingProxyType
from typing import Any, Final, Protocol

from ..errors import KestrelError
from ..jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    JsonRpcNotification,
    JsonRpcProtocolError,
    JsonRpcRequest,
    error_response,
    parse_message,
    readable_id,
)
from ..mcp import (
    MODERN_REMOVED_METHODS,
    REQUEST_CANCELLED,
    SUPPORTED_VERSIONS,
    Envelope,
    EnvelopeError,
    decorate_modern,
    negotiate_handshake,
    read_envelope,
)
from ..quoting import clipped
from .methods import McpMethods, Sleep, ToolCaller
from .notify import LOG_LEVEL_KEY, SILENT, Notifier, Send, log_threshold
from .recall import Recall
from .rpc import RpcError
from .subscriptions import SUBSCRIBING, Subscriptions
from .surface import Surface

__all__ = ["CancelScope", "Guard", "McpSession"]

logger = logging.getLogger(__name__)

Guard = Callable[[str], None]
"""Checks that the caller may call a method; raises :class:`RpcError` when not."""
Handler = Callable[
    ["McpSession", dict[str, Any], "Envelope | None", Notifier], Awaitable[dict[str, Any]]
]
"""A method's handler: the session, the request's params, its envelope and notifier."""


class CancelScope(AbstractContextManager[Any], Protocol):
    """What the session needs of a cancel scope (``anyio.CancelScope`` is one: the face
    passes it in, so this package needs nothing but pydantic)."""

    @property
    def cancel_called(self) -> bool: ...

    def cancel(self) -> None: ...


_UNSCOPED: Final = nullcontext()
"""Where a request that cannot be cancelled runs instead of a cancel scope."""
_REQUEST_MEMBERS: Final = frozenset({"jsonrpc", "id", "method", "params"})


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    return error_response(request_id, code, message, data).to_json()


class McpSession(Subscriptions):
    """One client's MCP session over one surface and one tool caller.

    ``validate=False`` when the caller checks a tool's arguments itself (the one
    dispatcher does), so each call is checked once. ``log_levels[log_key]`` is the level
    ``logging/setLevel`` set (stdio: its own session; the door: the principal's, shared
    by its requests). ``guard`` runs before every method (the door's scopes).
    ``cancel_scope`` and ``sleep`` are the event loop's (``anyio.CancelScope``,
    ``anyio.sleep``): a request's scope, and the wait between an operation's steps.
    """

    def __init__(
        self,
        surface: Surface,
        call: ToolCaller,
        *,
        server_info: Mapping[str, Any],
        instructions: str,
        cancel_scope: Callable[..., CancelScope],
        sleep: Sleep,
        validate: bool = True,
        page_size: int = 100,
        recall: Recall | None = None,
        log_levels: MutableMapping[str, int] | None = None,
        log_key: str = "",
        guard: Guard | None = None,
        subscriptions: bool = False,
    ) -> None:
        self.surface = surface
        self.server_info = dict(server_info)
        self.instructions = instructions
        self.methods = McpMethods(
            surface, call, page_size=page_size, recall=recall, sleep=sleep, validate=validate
        )
        self._scope = cancel_scope
        self._log_levels: MutableMapping[str, int] = {} if log_levels is None else log_levels
        self._log_key = log_key
        self._guard = guard
        self._inflight: dict[Any, CancelScope | None] = {}
        """The requests running, each with its cancel scope (``None``: not cancellable)."""
        self._cancelled: set[Any] = set()
        self._subscribed = set()
        self._subscriptions = subscriptions
        self.negotiated_version: str | None = None
        self.initialized = False

    @property
    def log_level(self) -> int | None:
        """The level ``logging/setLevel`` set (handshake era); ``None``: no log messages."""
        return self._log_levels.get(self._log_key)

    @property
    def capabilities(self) -> dict[str, Any]:
        """What ``initialize`` announces: the surface's, with ``resources.subscribe``
        where this session keeps subscriptions (a handshake-era method: ``server/
        discover`` announces the surface's own)."""
        found = self.surface.capabilities
        if self._subscriptions and "resources" in found:
            return {**found, "resources": {**found["resources"], "subscribe": True}}
        return found

    def silent(self, params: Any) -> bool:
        """Whether a request with ``params`` can be sent no notification before its
        response (no progress token, no log level asked for or set, no subscription to
        tell of), so a face need not prepare to stream its answer."""
        if self._subscribed or self._log_levels.get(self._log_key) is not None:
            return False
        meta = params.get("_meta") if isinstance(params, Mapping) else None
        if not isinstance(meta, Mapping):
            return True
        return meta.get("progressToken") is None and meta.get(LOG_LEVEL_KEY) is None

    # ------------------------------------------------------------------ messages

    async def handle(self, message: Any, send: Send | None = None) -> dict[str, Any] | None:
        """Answer one decoded JSON-RPC message; a notification (or a response) yields
        ``None``. Never raises: an unexpected fault is a -32603 error."""
        try:
            if (
                type(message) is dict
                and message.keys() <= _REQUEST_MEMBERS
                and message.get("jsonrpc") == "2.0"
                and type(method := message.get("method")) is str
                and method
                and (type(params := message.get("params")) is dict or "params" not in message)
            ):  # well formed (every request of a working client): nothing to parse
                request_id = message.get("id", _NO_ID)
                if request_id is _NO_ID:
                    self.notify(method, params)
                    return None
                if type(request_id) is int or type(request_id) is str:
                    return await self.request(request_id, method, params, send)
            if type(message) is not dict and isinstance(
                message, JsonRpcRequest | JsonRpcNotification
            ):
                message = message.to_json()
            try:
                parsed = parse_message(message)
            except JsonRpcProtocolError as exc:
                if type(message) is dict and "id" not in message:
                    # Never answered (a notification), and never acted on unless well formed.
                    logger.debug("ignoring a malformed notification: %s", exc.message)
                    return None
                return _error(exc.request_id, exc.code, exc.message)
            if isinstance(parsed, JsonRpcNotification):
                self.notify(parsed.method, parsed.params)
                return None
            if not isinstance(parsed, JsonRpcRequest):
                return None  # a response to a request we never send: nothing to say
            return await self.request(parsed.id, parsed.method, parsed.params, send)
        except Exception:
            logger.exception("unexpected fault while handling a message")
            return _error(readable_id(message), INTERNAL_ERROR, "Internal error")

    def notify(self, method: str, params: Any) -> None:
        """A notification: ``initialized``, or ``cancelled`` (of a request in flight)."""
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled" and isinstance(params, dict):
            request_id = params.get("requestId")
            if isinstance(request_id, str | int) and request_id in self._inflight:
                self._cancelled.add(request_id)
                scope = self._inflight[request_id]
                if scope is not None:
                    scope.cancel()
        else:
            logger.debug("ignoring notification %s", method)

    async def request(
        self, request_id: Any, method: str, params: Any, send: Send | None = None
    ) -> dict[str, Any]:
        """The JSON-RPC response to one request; ``send`` carries its notifications."""
        response = await self._answer(request_id, method, params, send)
        if request_id in self._cancelled:
            # Cancelled by the client: whatever the outcome, MCP says no response.
            self._cancelled.discard(request_id)
            return _error(request_id, REQUEST_CANCELLED, "Request cancelled")
        return response

    async def _answer(
        self, request_id: Any, method: str, params: Any, send: Send | None
    ) -> dict[str, Any]:
        if params is None:
            params = {}
        elif type(params) is not dict:
            if not isinstance(params, dict):
                return _error(request_id, INVALID_PARAMS, "params must be an object")
            params = dict(params)
        envelope: Envelope | None = None
        if "_meta" in params:
            try:
                envelope = read_envelope(params)
            except EnvelopeError as exc:
                return _error(request_id, exc.code, exc.message, exc.data)
        handler = METHODS.get(method)
        if (
            handler is None
            or (envelope is not None and method in MODERN_REMOVED_METHODS)
            or (method in SUBSCRIBING and not self._subscriptions)
        ):
            return _error(
                request_id,
                METHOD_NOT_FOUND,
                f"Method not found: {clipped(method)}",
                {"method": clipped(method)},
            )
        scope: CancelScope | None = None
        try:
            if self._guard is not None:
                self._guard(method)
            # SILENT for most requests: no _meta, no log level set (nothing to look up)
            meta = "_meta" in params or self._log_levels
            out = self._notifier(params, envelope, send) if meta else SILENT
            # A call that may change state runs to completion once started (its response
            # is then withheld): it needs no cancel scope of its own.
            if method != "tools/call" or self._read_only_call(params):
                scope = self._scope()
            self._inflight[request_id] = scope
            try:
                if scope is None and out is SILENT:  # nothing to cancel, capture or send
                    result = await handler(self, params, envelope, out)
                else:
                    with scope or _UNSCOPED, out.capturing():
                        result = await handler(self, params, envelope, out)
            finally:
                self._inflight.pop(request_id, None)
                if out is not SILENT and out.pending:
                    with self._scope(shield=True):
                        await out.flush()
            if self._subscribed and method == "tools/call" and send is not None:
                await self._tell_updated(params, result, send)
        except RpcError as exc:
            return exc.response(request_id)
        except KestrelError as exc:
            # A refusal outside tools/call (e.g. the backend is down while listing
            # resources) has no result shape to live in: a JSON-RPC error that names it.
            return RpcError.of_refusal(exc).response(request_id)
        if scope is not None and scope.cancel_called:
            return _error(request_id, REQUEST_CANCELLED, "Request cancelled")
        if envelope is not None:
            result = decorate_modern(method, result, self.server_info)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _read_only_call(self, params: dict[str, Any]) -> bool:
        name = params.get("name")
        tool = self.surface.find(name) if type(name) is str else None
        return tool is not None and tool.read_only

    def _notifier(
        self, params: dict[str, Any], envelope: Envelope | None, send: Send | None
    ) -> Notifier:
        """What this request may be sent: progress if it carries a token; log messages at
        the level ``logging/setLevel`` set (handshake era) or its own ``logLevel`` (2026)."""
        level = self._log_levels.get(self._log_key)
        meta = params.get("_meta")
        if type(meta) is not dict:
            if level is None:
                return SILENT
            meta = {}
        if envelope is not None:
            requested = meta.get(LOG_LEVEL_KEY)
            level = log_threshold(requested) if requested is not None else None
        return Notifier.of(send, progress_token=meta.get("progressToken"), log_level=level)

    # ------------------------------------------------------------------ handshake

    async def _initialize(
        self, params: dict[str, Any], envelope: Envelope | None, out: Notifier
    ) -> dict[str, Any]:
        negotiated = negotiate_handshake(params.get("protocolVersion"))
        self.negotiated_version = negotiated
        return {
            "protocolVersion": negotiated,
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
            "instructions": self.instructions,
        }

    async def _set_level(
        self, params: dict[str, Any], envelope: Envelope | None, out: Notifier
    ) -> dict[str, Any]:
        """``logging/setLevel``: log messages at or above ``level`` from now on."""
        self._log_levels[self._log_key] = log_threshold(params.get("level"))
        return {}

    async def _discover(
        self, params: dict[str, Any], envelope: Envelope | None, out: Notifier
    ) -> dict[str, Any]:
        if envelope is None:
            raise RpcError(
                INVALID_PARAMS,
                "server/discover needs params._meta with "
                "io.modelcontextprotocol/protocolVersion and clientCapabilities",
            )
        return {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": self.surface.capabilities,
            "instructions": self.instructions,
        }


_NO_ID: Final = object()

METHODS: Final[Mapping[str, Handler]] = MappingProxyType(
    {
        "initialize": McpSession._initialize,
        "ping": lambda s, params, envelope, out: _empty(),
        "server/discover": McpSession._discover,
        "logging/setLevel": McpSession._set_level,
        "tools/list": lambda s, params, envelope, out: s.methods.tools_list(params),
        "tools/call": lambda s, params, envelope, out: s.methods.tools_call(params, out),
        "resources/list": lambda s, params, envelope, out: s.methods.resources_list(params),
        "resources/templates/list": lambda s, params, envelope, out: s.methods.templates_list(
            params
        ),
        "resources/read": lambda s, params, envelope, out: s.methods.resources_read(
            params, modern=envelope is not None
        ),
        "resources/subscribe": McpSession._subscribe,
        "resources/unsubscribe": McpSession._unsubscribe,
        "prompts/list": lambda s, params, envelope, out: s.methods.prompts_list(params),
        "prompts/get": lambda s, params, envelope, out: s.methods.prompts_get(params),
        "completion/complete": lambda s, params, envelope, out: s.methods.complete(params),
    }
)
"""Every JSON-RPC method an MCP session answers, and its handler: one table for every
session (a session holds no table of its own, so one made per request, as the door's
are, is freed as soon as it is dropped rather than left to the cycle collector)."""


async def _empty() -> dict[str, Any]:
    return {}
