"""The MCP face as an in-process JSON-RPC 2.0 dispatcher, generated from the surface.

It holds no runtime semantics and names no tool: ``tools/*``, ``resources/*``,
``prompts/*`` and ``completion/complete`` are ``kestrel_protocol.surface``'s methods
over the one dispatcher (``call_tool`` on the transport); this module adds the handshake
of both eras, cancellation, the log level and the JSON-RPC framing. Notifications of a
request (progress, log messages) go to the ``send`` its caller passes to ``handle``.
Three failure shapes stay distinct so a caller can switch on them: a protocol failure
is a JSON-RPC ``error`` (bad arguments are -32602 with ``data.refusal``
``INVALID_ARGUMENT``), a typed Kestrel refusal is a tool result with ``isError: true``
and ``structuredContent.refusal``, and a stand-down is an ordinary result.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

import anyio
from kestrel_protocol import KestrelError
from kestrel_protocol.canonical import DECLINED, fast_loads
from kestrel_protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    JsonRpcNotification,
    JsonRpcProtocolError,
    JsonRpcRequest,
    error_response,
    parse_message,
    readable_id,
)
from kestrel_protocol.mcp import (
    MODERN_REMOVED_METHODS,
    REQUEST_CANCELLED,
    SUPPORTED_VERSIONS,
    Envelope,
    EnvelopeError,
    decorate_modern,
    negotiate_handshake,
    read_envelope,
)
from kestrel_protocol.ports import SecretStore, Transport
from kestrel_protocol.surface import (
    INSTRUCTIONS,
    LOG_LEVEL_KEY,
    SURFACE,
    McpMethods,
    Notifier,
    Recall,
    RpcError,
    Send,
    Surface,
    call_tool,
    log_threshold,
)

from .secrets import SecretTools, secret_tools

__all__ = ["KestrelMcpServer", "create_kestrel_mcp_server"]

logger = logging.getLogger("kestrel_mcp")

try:
    _VERSION = version("kestrel-mcp")
except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
    _VERSION = "0.0.0"

SERVER_INFO: Final = {"name": "kestrel", "title": "Kestrel", "version": _VERSION}

Handler = Callable[[dict[str, Any], Envelope | None, Notifier], Awaitable[dict[str, Any]]]


class KestrelMcpServer:
    """One MCP server over one transport. ``handle`` and ``handle_frame`` never raise."""

    def __init__(
        self,
        transport: Transport,
        *,
        secrets: bool = True,
        secret_store: Callable[[], SecretStore] | None = None,
        page_size: int = 100,
        surface: Surface[Transport] = SURFACE,
    ) -> None:
        self.transport = transport
        # The secret tools are this face's own addition: local-only, never on the door.
        self.surface = surface.plus(secret_tools(SecretTools(secret_store))) if secrets else surface
        self.capabilities = self.surface.capabilities
        self._surface_methods = McpMethods(
            self.surface,
            partial(call_tool, self.surface, transport),
            page_size=page_size,
            recall=Recall(),
            sleep=anyio.sleep,
            validate=False,  # call_tool checks the arguments itself
        )
        self.log_level: int | None = None
        """The level ``logging/setLevel`` set (handshake era); ``None``: no log messages."""
        self._inflight: dict[Any, anyio.CancelScope | None] = {}
        """The requests running, each with its cancel scope (``None``: not cancellable)."""
        self._cancelled: set[Any] = set()
        self.negotiated_version: str | None = None
        self.initialized = False
        m = self._surface_methods
        self._methods: dict[str, Handler] = {
            "initialize": self._initialize,
            "ping": lambda params, envelope, out: _empty(),
            "server/discover": self._discover,
            "logging/setLevel": self._set_level,
            "tools/list": lambda params, envelope, out: m.tools_list(params),
            "tools/call": lambda params, envelope, out: m.tools_call(params, out),
            "resources/list": lambda params, envelope, out: m.resources_list(params),
            "resources/templates/list": lambda params, envelope, out: m.templates_list(params),
            "resources/read": lambda params, envelope, out: m.resources_read(
                params, modern=envelope is not None
            ),
            "prompts/list": lambda params, envelope, out: m.prompts_list(params),
            "prompts/get": lambda params, envelope, out: m.prompts_get(params),
            "completion/complete": lambda params, envelope, out: m.complete(params),
        }

    # ------------------------------------------------------------------ entry points

    async def handle(self, message: Any, send: Send | None = None) -> dict[str, Any] | None:
        """Answer one decoded JSON-RPC message; a notification (or a response) yields ``None``.

        ``send`` writes the request's notifications (progress, log messages) before the
        response is returned; without it the request gets none.
        """
        try:
            plain = self._plain_call(message)
            if plain is not None:
                return await self._call_plainly(*plain)
            if type(message) is not dict and isinstance(
                message, JsonRpcRequest | JsonRpcNotification
            ):
                message = message.to_json()
            if (
                type(message) is dict
                and "id" not in message
                and isinstance(message.get("method"), str)
            ):
                await self._notification(message["method"], message.get("params"))
                return None
            try:
                parsed = parse_message(message)
            except JsonRpcProtocolError as exc:
                return _error(exc.request_id, exc.code, exc.message)
            if not isinstance(parsed, JsonRpcRequest):
                # A response to a request we never send, or a notification: nothing to say.
                return None
            return await self._request(parsed.id, parsed.method, parsed.params, send)
        except Exception:
            logger.exception("unexpected fault while handling a message")
            return _error(readable_id(message), INTERNAL_ERROR, "Internal error")

    async def handle_frame(
        self, raw: str | bytes, send: Send | None = None
    ) -> dict[str, Any] | None:
        """Answer one raw frame (one stdio line); malformed JSON is a parse error (-32700)."""
        data = fast_loads(raw) if type(raw) is bytes else DECLINED
        if data is DECLINED:
            return await self._handle_text(raw, send)
        return await self.handle(data, send)

    async def _handle_text(
        self, raw: str | bytes, send: Send | None = None
    ) -> dict[str, Any] | None:
        """:meth:`handle_frame` by ``json``: what orjson leaves to it, and its errors."""
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else raw
            data = _DECODER.decode(text)
        except (ValueError, RecursionError) as exc:
            reason = "invalid UTF-8" if isinstance(exc, UnicodeDecodeError) else "invalid JSON"
            return _error(None, PARSE_ERROR, f"Parse error: {reason}")
        return await self.handle(data, send)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Run one listed tool and return its ``CallToolResult`` (as JSON data).

        Refusals are results (``isError: true``); an unknown tool or invalid arguments
        raise :class:`~kestrel_protocol.surface.RpcError` (-32602).
        """
        return await self._surface_methods.tools_call({"name": name, "arguments": arguments})

    @property
    def tool_names(self) -> list[str]:
        """The listed tool names, in ``tools/list`` order."""
        return [tool.name for tool in self.surface.listed]

    # ------------------------------------------------------------------ dispatch

    async def _notification(self, method: str, params: Any) -> None:
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

    async def _request(
        self, request_id: Any, method: str, params: Any, send: Send | None
    ) -> dict[str, Any]:
        return self._unless_cancelled(
            request_id, await self._answer(request_id, method, params, send)
        )

    def _unless_cancelled(self, request_id: Any, response: dict[str, Any]) -> dict[str, Any]:
        if request_id in self._cancelled:
            # Cancelled by the client: whatever the outcome, MCP says no response.
            self._cancelled.discard(request_id)
            return _error(request_id, REQUEST_CANCELLED, "Request cancelled")
        return response

    def _plain_call(self, message: Any) -> tuple[int | str, dict[str, Any]] | None:
        """``(id, params)`` of a request that :meth:`_answer` would take through none of
        its general steps, else ``None``: exactly the four members of a well-formed
        ``tools/call`` request, of a listed tool that may change state (so it has no
        cancel scope), with no ``_meta`` (no era envelope, progress token or log level of
        its own) while ``logging/setLevel`` set no level. An agent's every step is one."""
        if type(message) is not dict or len(message) != 4 or self.log_level is not None:
            return None
        request_id = message.get("id")
        params = message.get("params")
        if (
            message.get("method") != "tools/call"
            or message.get("jsonrpc") != "2.0"
            or (type(request_id) is not int and type(request_id) is not str)
            or type(params) is not dict
            or "_meta" in params
        ):
            return None
        name = params.get("name")
        tool = self.surface.find(name) if type(name) is str else None
        if tool is None or not tool.listed or tool.read_only:
            return None
        return request_id, params

    async def _call_plainly(self, request_id: int | str, params: dict[str, Any]) -> dict[str, Any]:
        """:meth:`_request` of a :meth:`_plain_call`: what its general steps come to."""
        self._inflight[request_id] = None  # in flight, and not cancellable once started
        try:
            result = await self._surface_methods.tools_call(params)
        except RpcError as exc:
            return exc.response(request_id)
        except KestrelError as exc:
            return RpcError.of_refusal(exc).response(request_id)
        finally:
            self._inflight.pop(request_id, None)
        return self._unless_cancelled(
            request_id, {"jsonrpc": "2.0", "id": request_id, "result": result}
        )

    async def _answer(
        self, request_id: Any, method: str, params: Any, send: Send | None
    ) -> dict[str, Any]:
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            return _error(request_id, INVALID_PARAMS, "params must be an object")
        try:
            envelope = read_envelope(params)
        except EnvelopeError as exc:
            return _error(request_id, exc.code, exc.message, exc.data)
        handler = self._methods.get(method)
        if handler is None or (envelope is not None and method in MODERN_REMOVED_METHODS):
            return _error(
                request_id, METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method}
            )
        try:
            out = self._notifier(params, envelope, send)
        except RpcError as exc:
            return exc.response(request_id)
        # A call that may change state runs to completion once started (its response is
        # then withheld): it needs no cancel scope of its own.
        cancellable = method != "tools/call" or self._read_only_call(params)
        scope = anyio.CancelScope() if cancellable else None
        self._inflight[request_id] = scope
        try:
            with scope or _UNSCOPED, out.capturing():
                result = await handler(params, envelope, out)
        except RpcError as exc:
            return exc.response(request_id)
        except KestrelError as exc:
            # A refusal outside tools/call (e.g. the backend is down while listing
            # resources) has no result shape to live in: a JSON-RPC error that names it.
            return RpcError.of_refusal(exc).response(request_id)
        finally:
            self._inflight.pop(request_id, None)
            if out.pending:
                with anyio.CancelScope(shield=True):
                    await out.flush()
        if scope is not None and scope.cancel_called:
            return _error(request_id, REQUEST_CANCELLED, "Request cancelled")
        if envelope is not None:
            result = decorate_modern(method, result, SERVER_INFO)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _read_only_call(self, params: dict[str, Any]) -> bool:
        name = params.get("name")
        tool = self.surface.find(name) if isinstance(name, str) else None
        return tool is not None and tool.read_only

    def _notifier(
        self, params: dict[str, Any], envelope: Envelope | None, send: Send | None
    ) -> Notifier:
        """What this request may be sent: progress if it carries a token; log messages at
        the level ``logging/setLevel`` set (handshake era) or its own ``logLevel`` (2026)."""
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        level = self.log_level
        if envelope is not None:
            requested = meta.get(LOG_LEVEL_KEY)
            level = log_threshold(requested) if requested is not None else None
        return Notifier.of(send, progress_token=meta.get("progressToken"), log_level=level)

    # ------------------------------------------------------------------ lifecycle

    async def _initialize(
        self, params: dict[str, Any], envelope: Envelope | None, out: Notifier
    ) -> dict[str, Any]:
        negotiated = negotiate_handshake(params.get("protocolVersion"))
        self.negotiated_version = negotiated
        return {
            "protocolVersion": negotiated,
            "capabilities": self.capabilities,
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        }

    async def _set_level(
        self, params: dict[str, Any], envelope: Envelope | None, out: Notifier
    ) -> dict[str, Any]:
        """``logging/setLevel``: log messages at or above ``level`` from now on."""
        self.log_level = log_threshold(params.get("level"))
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
            "capabilities": self.capabilities,
            "instructions": INSTRUCTIONS,
        }


async def _empty() -> dict[str, Any]:
    return {}


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    return error_response(request_id, code, message, data).to_json()


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


_UNSCOPED: Final = nullcontext()
"""Where a request that cannot be cancelled runs instead of a cancel scope."""

_DECODER: Final = json.JSONDecoder(parse_constant=_refuse_constant)
"""Built once: ``json.loads`` with a keyword builds a new decoder on every call."""


def create_kestrel_mcp_server(
    transport: Transport,
    *,
    secrets: bool = True,
    secret_store: Callable[[], SecretStore] | None = None,
    page_size: int = 100,
    surface: Surface[Transport] = SURFACE,
) -> KestrelMcpServer:
    """Build the MCP face over a transport choice (``local_transport()`` or ``remote_transport``).

    ``secrets=False`` leaves out the three local-only secret tools; ``secret_store``
    replaces the operator store ``kestrel_secrets`` would open; ``surface`` is the tool
    and resource surface to serve (Kestrel's own by default).
    """
    return KestrelMcpServer(
        transport,
        secrets=secrets,
        secret_store=secret_store,
        page_size=page_size,
        surface=surface,
    )
