"""The MCP face as an in-process JSON-RPC 2.0 dispatcher over the Kestrel SDK.

It holds no runtime semantics: each method marshals an MCP request into one SDK call
and marshals the SDK's protocol object back out verbatim. Three failure shapes stay
distinct so a caller can switch on them: a transport failure is a JSON-RPC ``error``,
a typed Kestrel refusal is a tool result with ``isError: true`` and
``structuredContent.refusal``, and a stand-down is an ordinary result.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

import anyio
from kestrel_protocol import KestrelError, SessionOpened
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
from kestrel_protocol.ports import SecretStore, Transport
from kestrel_sdk import KestrelSession, create_sdk
from pydantic import BaseModel, ValidationError

from . import arguments as a
from .eras import (
    CACHEABLE_METHODS,
    HANDSHAKE_VERSIONS,
    MODERN_REMOVED_METHODS,
    MODERN_VERSIONS,
    REQUEST_CANCELLED,
    RESOURCE_NOT_FOUND_LEGACY,
    SERVER_INFO_KEY,
    Envelope,
    EnvelopeError,
    negotiate_handshake,
    read_envelope,
)
from .instructions import INSTRUCTIONS
from .resources import ARTIFACT_PREFIX, CATALOG_URI, SCENARIO_PREFIX, TEMPLATES, parse_uri
from .secrets import SecretTools
from .tools import SECRET_TOOLS, TOOLS, ToolSpec, tool_aliases

__all__ = ["KestrelMcpServer", "ToolCallError", "ToolResult", "create_kestrel_mcp_server"]

logger = logging.getLogger("kestrel_mcp")

try:
    _VERSION = version("kestrel-mcp")
except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
    _VERSION = "0.0.0"

SERVER_INFO: Final = {"name": "kestrel", "title": "Kestrel", "version": _VERSION}
CAPABILITIES: Final = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "completions": {},
}
ALL_VERSIONS: Final = [*MODERN_VERSIONS, *reversed(HANDSHAKE_VERSIONS)]

# 2026-07-28 cache hints. Lists of tools and templates are fixed for the life of the
# process and the same for everyone; the catalog and the artifacts may be one
# principal's, so they are private.
_CACHE_HINTS: Final[dict[str, tuple[int, str]]] = {
    "server/discover": (3_600_000, "public"),
    "tools/list": (3_600_000, "public"),
    "prompts/list": (3_600_000, "public"),
    "resources/templates/list": (3_600_000, "public"),
    "resources/list": (60_000, "private"),
    "resources/read": (60_000, "private"),
}
_MAX_COMPLETIONS: Final = 100
_MAX_REMEMBERED_ROOTS: Final = 10_000
_RESULT_META: Final = {SERVER_INFO_KEY: SERVER_INFO}
_NOT_FOUND_CODES: Final = frozenset({"UNKNOWN_SCENARIO", "UNKNOWN_ARTIFACT"})


class ToolCallError(Exception):
    """A ``tools/call`` that fails as a protocol error (unknown tool, bad arguments)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


_RpcError = ToolCallError
Handler = Callable[[dict[str, Any], Envelope | None], Awaitable[dict[str, Any]]]


def _json_text(value: Any) -> str:
    """The compact JSON text of a result, members in the object's own order.

    The same JSON as ``structuredContent`` (it parses to the identical value, so its
    canonical bytes and root are the object's); not re-sorted, because this runs on
    every call and sorting buys a reader nothing.
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class ToolResult(dict[str, Any]):
    """A ``CallToolResult`` whose one text content is exactly the JSON of ``structuredContent``.

    The stdio writer uses that to put the structured object on the wire by splicing
    the text in, instead of encoding the same object a second time.
    """

    __slots__ = ("json_text",)

    def __init__(self, structured: Any, text: str, is_error: bool = False) -> None:
        super().__init__(content=[{"type": "text", "text": text}], structuredContent=structured)
        if is_error:
            self["isError"] = True
        self.json_text = text


def _refusal_of(exc: BaseException) -> dict[str, Any] | None:
    """The ``{code, message, detail}`` of a typed Kestrel refusal, else ``None``.

    A refusal is recognised by its string ``code`` (``SdkLocalError``,
    ``KestrelClientError``, a secret-store refusal, or any newer subclass).
    """
    if isinstance(exc, KestrelError):
        return exc.refusal.to_json()
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None)
    if isinstance(code, str) and code and isinstance(message, str):
        detail = getattr(exc, "detail", None)
        return {
            "code": code,
            "message": message,
            "detail": detail if isinstance(detail, dict) else {},
        }
    return None


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    return error_response(request_id, code, message, data).to_json()


def _validation_summary(exc: ValidationError) -> list[dict[str, str]]:
    return [
        {
            "path": ".".join(str(part) for part in err["loc"]) or "(arguments)",
            "message": err["msg"],
        }
        for err in exc.errors(include_url=False, include_input=False, include_context=False)
    ]


def _paginate(items: list[Any], cursor: Any, page_size: int) -> tuple[list[Any], str | None]:
    """A deterministic page of ``items``; cursors are opaque offsets (``"o<n>"``)."""
    start = 0
    if cursor is not None:
        if not isinstance(cursor, str) or not (
            cursor == "" or (cursor.startswith("o") and cursor[1:].isdigit())
        ):
            raise _RpcError(INVALID_PARAMS, "Invalid cursor", {"cursor": cursor})
        start = int(cursor[1:]) if cursor else 0
        if start > len(items):
            raise _RpcError(INVALID_PARAMS, "Invalid cursor", {"cursor": cursor})
    end = start + page_size
    return items[start:end], (f"o{end}" if end < len(items) else None)


class KestrelMcpServer:
    """One MCP server over one SDK. ``handle`` and ``handle_frame`` never raise."""

    def __init__(
        self,
        transport: Transport,
        *,
        secrets: bool = True,
        secret_store: Callable[[], SecretStore] | None = None,
        page_size: int = 100,
    ) -> None:
        self.sdk = create_sdk(transport)
        self._page_size = max(1, page_size)
        self._specs: tuple[ToolSpec, ...] = TOOLS + (SECRET_TOOLS if secrets else ())
        self._by_name = tool_aliases(self._specs)
        self._listing = [spec.listing() for spec in self._specs]
        self._secrets = SecretTools(secret_store)
        self._sessions: dict[str, KestrelSession] = {}
        self._roots: dict[str, None] = {}
        self._inflight: dict[Any, tuple[anyio.CancelScope, bool]] = {}
        self._cancelled: set[Any] = set()
        self.negotiated_version: str | None = None
        self.initialized = False
        self._methods: dict[str, Handler] = {
            "initialize": self._initialize,
            "ping": self._ping,
            "server/discover": self._discover,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "resources/list": self._resources_list,
            "resources/templates/list": self._templates_list,
            "resources/read": self._resources_read,
            "completion/complete": self._complete,
        }
        self._tools: dict[str, Callable[[Any], Awaitable[dict[str, Any]]]] = {
            "kestrel_catalog": self._t_catalog,
            "kestrel_validate": self._t_validate,
            "kestrel_session_open": self._t_open,
            "kestrel_session_submit": self._t_submit,
            "kestrel_session_frame": self._t_frame,
            "kestrel_session_blotter": self._t_blotter,
            "kestrel_session_close": self._t_close,
            "kestrel_grade": self._t_grade,
            "kestrel_operation_resume": self._t_resume,
            "kestrel_secrets_set": self._t_secrets_set,
            "kestrel_secrets_unset": self._t_secrets_unset,
            "kestrel_secrets_list": self._t_secrets_list,
        }

    # ------------------------------------------------------------------ entry points

    async def handle(self, message: Any) -> dict[str, Any] | None:
        """Answer one decoded JSON-RPC message; a notification (or a response) yields ``None``."""
        try:
            if isinstance(message, JsonRpcRequest | JsonRpcNotification):
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
            return await self._request(parsed.id, parsed.method, parsed.params)
        except Exception:
            logger.exception("unexpected fault while handling a message")
            return _error(readable_id(message), INTERNAL_ERROR, "Internal error")

    async def handle_frame(self, raw: str | bytes) -> dict[str, Any] | None:
        """Answer one raw frame (one stdio line); malformed JSON is a parse error (-32700)."""
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else raw
            data = _DECODER.decode(text)
        except (ValueError, RecursionError) as exc:
            reason = "invalid UTF-8" if isinstance(exc, UnicodeDecodeError) else "invalid JSON"
            return _error(None, PARSE_ERROR, f"Parse error: {reason}")
        return await self.handle(data)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Run one tool and return its ``CallToolResult`` (as JSON data).

        Refusals are results (``isError: true``); an unknown tool or invalid arguments
        raise :class:`ToolCallError` carrying the JSON-RPC code (-32602).
        """
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self._tools_call(params, None)

    @property
    def tool_names(self) -> list[str]:
        """The listed tool names, in ``tools/list`` order."""
        return [spec.name for spec in self._specs]

    # ------------------------------------------------------------------ dispatch

    async def _notification(self, method: str, params: Any) -> None:
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled" and isinstance(params, dict):
            request_id = params.get("requestId")
            entry = self._inflight.get(request_id) if isinstance(request_id, str | int) else None
            if entry is not None:
                scope, cancellable = entry
                self._cancelled.add(request_id)
                if cancellable:
                    scope.cancel()
        else:
            logger.debug("ignoring notification %s", method)

    async def _request(self, request_id: Any, method: str, params: Any) -> dict[str, Any]:
        response = await self._answer(request_id, method, params)
        if request_id in self._cancelled:
            # Cancelled by the client: whatever the outcome, MCP says no response.
            self._cancelled.discard(request_id)
            return _error(request_id, REQUEST_CANCELLED, "Request cancelled")
        return response

    async def _answer(self, request_id: Any, method: str, params: Any) -> dict[str, Any]:
        if params is None:
            params = {}
        elif not isinstance(params, dict):
            return _error(request_id, INVALID_PARAMS, "params must be an object")
        try:
            envelope = read_envelope(params)
        except EnvelopeError as exc:
            return _error(request_id, exc.code, exc.message, exc.data)
        if envelope is not None and method in MODERN_REMOVED_METHODS:
            return _error(
                request_id, METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method}
            )
        handler = self._methods.get(method)
        if handler is None:
            return _error(
                request_id, METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method}
            )
        cancellable = method != "tools/call" or self._read_only_call(params)
        scope = anyio.CancelScope()
        self._inflight[request_id] = (scope, cancellable)
        try:
            with scope:
                result = await handler(params, envelope)
        except _RpcError as exc:
            return _error(request_id, exc.code, exc.message, exc.data)
        except Exception as exc:
            # A refusal outside tools/call (e.g. the backend is down while listing
            # resources) has no result shape to live in: a JSON-RPC error that names it.
            refusal = _refusal_of(exc)
            if refusal is None:
                raise
            return _error(
                request_id,
                INTERNAL_ERROR,
                f"Kestrel refused: {refusal['code']}: {refusal['message']}",
                {"refusal": refusal},
            )
        finally:
            self._inflight.pop(request_id, None)
        if scope.cancel_called:
            return _error(request_id, REQUEST_CANCELLED, "Request cancelled")
        if envelope is not None:
            result = self._modern(method, result)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _read_only_call(self, params: dict[str, Any]) -> bool:
        name = params.get("name")
        spec = self._by_name.get(name) if isinstance(name, str) else None
        return spec is not None and spec.read_only

    @staticmethod
    def _modern(method: str, result: dict[str, Any]) -> dict[str, Any]:
        """Decorate a result for 2026-07-28: ``resultType``, cache hints, ``serverInfo``."""
        result["resultType"] = "complete"
        if method in CACHEABLE_METHODS:
            ttl, scope = _CACHE_HINTS[method]
            result["ttlMs"] = ttl
            result["cacheScope"] = scope
        meta = result.get("_meta")
        result["_meta"] = {**meta, **_RESULT_META} if isinstance(meta, dict) else _RESULT_META
        return result

    # ------------------------------------------------------------------ lifecycle

    async def _initialize(
        self, params: dict[str, Any], envelope: Envelope | None
    ) -> dict[str, Any]:
        negotiated = negotiate_handshake(params.get("protocolVersion"))
        self.negotiated_version = negotiated
        return {
            "protocolVersion": negotiated,
            "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        }

    async def _ping(self, params: dict[str, Any], envelope: Envelope | None) -> dict[str, Any]:
        return {}

    async def _discover(self, params: dict[str, Any], envelope: Envelope | None) -> dict[str, Any]:
        if envelope is None:
            raise _RpcError(
                INVALID_PARAMS,
                "server/discover needs params._meta with "
                "io.modelcontextprotocol/protocolVersion and clientCapabilities",
            )
        return {
            "supportedVersions": ALL_VERSIONS,
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
        }

    # ------------------------------------------------------------------ tools

    async def _tools_list(
        self, params: dict[str, Any], envelope: Envelope | None
    ) -> dict[str, Any]:
        page, next_cursor = _paginate(self._listing, params.get("cursor"), self._page_size)
        result: dict[str, Any] = {"tools": page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def _tools_call(
        self, params: dict[str, Any], envelope: Envelope | None
    ) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise _RpcError(INVALID_PARAMS, "tools/call needs a string 'name'")
        spec = self._by_name.get(name)
        if spec is None:
            raise _RpcError(INVALID_PARAMS, f"Unknown tool: {name}", {"tool": name})
        raw_args = params.get("arguments")
        if raw_args is None:
            raw_args = {}
        elif not isinstance(raw_args, dict):
            raise _RpcError(INVALID_PARAMS, f"Arguments of {spec.name} must be an object")
        try:
            args = spec.args.model_validate(raw_args)
        except ValidationError as exc:
            errors = _validation_summary(exc)
            first = errors[0]
            raise _RpcError(
                INVALID_PARAMS,
                f"Invalid arguments for {spec.name}: {first['path']}: {first['message']}",
                {"tool": spec.name, "errors": errors},
            ) from None
        try:
            structured = await self._tools[spec.name](args)
        except Exception as exc:
            refusal = _refusal_of(exc)
            if refusal is None:
                raise
            body = {"refusal": refusal}
            return ToolResult(body, _json_text(body), is_error=True)
        return ToolResult(structured, _json_text(structured))

    def _session(self, session_id: str) -> KestrelSession:
        session = self._sessions.get(session_id)
        return session if session is not None else self.sdk.session(session_id)

    def _remember(self, *roots: Any) -> None:
        """Keep recent artifact roots for completion (bounded: a long run must not grow)."""
        for root in roots:
            if isinstance(root, str) and root.startswith("sha256:"):
                self._roots.pop(root, None)
                self._roots[root] = None
        while len(self._roots) > _MAX_REMEMBERED_ROOTS:
            del self._roots[next(iter(self._roots))]

    async def _t_catalog(self, args: BaseModel) -> dict[str, Any]:
        return (await self.sdk.catalog()).to_json()

    async def _t_validate(self, args: a.ValidateArgs) -> dict[str, Any]:
        return (await self.sdk.validate(args.source, args.scenario)).to_json()

    async def _t_open(self, args: a.OpenArgs) -> dict[str, Any]:
        gated = await self.sdk.open_session(args.scenario, args.label, args.payment)
        if gated.gated or gated.session is None:
            return SessionOpened(gated=True, payment=gated.payment).to_json()
        session = gated.session
        self._sessions[session.id] = session
        return SessionOpened(gated=False, session_id=session.id).to_json()

    async def _t_submit(self, args: a.SubmitArgs) -> dict[str, Any]:
        response = await self._session(args.session_id).submit(args.source)
        self._remember(response.pentad.root)
        return response.to_json()

    async def _t_frame(self, args: a.SessionArgs) -> dict[str, Any]:
        return (await self._session(args.session_id).frame()).to_json()

    async def _t_blotter(self, args: a.SessionArgs) -> dict[str, Any]:
        return (await self._session(args.session_id).blotter()).to_json()

    async def _t_close(self, args: a.SessionArgs) -> dict[str, Any]:
        record = await self._session(args.session_id).close()
        self._sessions.pop(args.session_id, None)
        self._remember(record.root, record.blotter_root, *record.pentads)
        return record.to_json()

    async def _t_grade(self, args: a.GradeArgs) -> dict[str, Any]:
        result = await self.sdk.grade(args.session_id)
        self._remember(getattr(result, "root", None), getattr(result, "record", None))
        return result.to_json()

    async def _t_resume(self, args: a.ResumeArgs) -> dict[str, Any]:
        result = await self.sdk.resume(args.token)
        self._remember(getattr(result, "root", None), getattr(result, "record", None))
        return result.to_json()

    async def _t_secrets_set(self, args: a.SecretSetArgs) -> dict[str, Any]:
        return await self._secrets.set(args.key, args.value)

    async def _t_secrets_unset(self, args: a.SecretKeyArgs) -> dict[str, Any]:
        return await self._secrets.unset(args.key)

    async def _t_secrets_list(self, args: BaseModel) -> dict[str, Any]:
        return await self._secrets.list()

    # ------------------------------------------------------------------ resources

    async def _resources_list(
        self, params: dict[str, Any], envelope: Envelope | None
    ) -> dict[str, Any]:
        catalog = await self.sdk.catalog()
        resources: list[dict[str, Any]] = [
            {
                "uri": CATALOG_URI,
                "name": "catalog",
                "title": "Kestrel catalog",
                "description": "Every scenario and the four statement kinds (kestrel.catalog).",
                "mimeType": "application/json",
            }
        ]
        for scenario in catalog.scenarios:
            resources.append(
                {
                    "uri": SCENARIO_PREFIX + scenario.id,
                    "name": f"scenario {scenario.id}",
                    "title": scenario.title,
                    "mimeType": "application/json",
                }
            )
            resources.append(
                {
                    "uri": SCENARIO_PREFIX + scenario.id + "/tape",
                    "name": f"tape {scenario.id}",
                    "title": f"{scenario.title} (tape)",
                    "mimeType": "text/csv",
                }
            )
        page, next_cursor = _paginate(resources, params.get("cursor"), self._page_size)
        result: dict[str, Any] = {"resources": page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def _templates_list(
        self, params: dict[str, Any], envelope: Envelope | None
    ) -> dict[str, Any]:
        page, next_cursor = _paginate(list(TEMPLATES), params.get("cursor"), self._page_size)
        result: dict[str, Any] = {"resourceTemplates": page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def _resources_read(
        self, params: dict[str, Any], envelope: Envelope | None
    ) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise _RpcError(INVALID_PARAMS, "resources/read needs a string 'uri'")
        ref = parse_uri(uri)
        if ref is None:
            raise self._not_found(uri, envelope)
        try:
            if ref.kind == "catalog":
                text, mime = _json_text((await self.sdk.catalog()).to_json()), "application/json"
            elif ref.kind == "scenario":
                scenario = await self.sdk.scenario(ref.value)
                text, mime = _json_text(scenario.to_json()), "application/json"
            elif ref.kind == "tape":
                text, mime = await self.sdk.tape(ref.value), "text/csv"
            else:
                text, mime = _json_text(await self.sdk.artifact(ref.value)), "application/json"
        except Exception as exc:
            refusal = _refusal_of(exc)
            if refusal is None:
                raise
            if refusal["code"] in _NOT_FOUND_CODES:
                raise self._not_found(uri, envelope) from None
            raise _RpcError(
                INTERNAL_ERROR,
                f"Kestrel refused the read: {refusal['code']}: {refusal['message']}",
                {"uri": uri, "refusal": refusal},
            ) from None
        return {"contents": [{"uri": uri, "mimeType": mime, "text": text}]}

    @staticmethod
    def _not_found(uri: str, envelope: Envelope | None) -> _RpcError:
        # 2025-11-25 and older: -32002; 2026-07-28 (SEP-2164): -32602 with data.uri.
        code = RESOURCE_NOT_FOUND_LEGACY if envelope is None else INVALID_PARAMS
        return _RpcError(code, f"Resource not found: {uri}", {"uri": uri})

    async def _complete(self, params: dict[str, Any], envelope: Envelope | None) -> dict[str, Any]:
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise _RpcError(INVALID_PARAMS, "completion/complete needs 'ref' and 'argument'")
        if ref.get("type") == "ref/prompt":
            raise _RpcError(INVALID_PARAMS, "Kestrel has no prompts", {"ref": ref})
        name, value = argument.get("name"), argument.get("value", "")
        if not isinstance(name, str) or not isinstance(value, str):
            raise _RpcError(INVALID_PARAMS, "argument needs a string 'name' and 'value'")
        template = ref.get("uri")
        candidates: list[str] = []
        if template in (SCENARIO_PREFIX + "{id}", SCENARIO_PREFIX + "{id}/tape") and name == "id":
            catalog = await self.sdk.catalog()
            candidates = [s.id for s in catalog.scenarios if s.id.startswith(value)]
        elif template == ARTIFACT_PREFIX + "{root}" and name == "root":
            wanted = value if value.startswith("sha256:") or not value else "sha256:" + value
            candidates = [root for root in reversed(self._roots) if root.startswith(wanted)]
        values = candidates[:_MAX_COMPLETIONS]
        return {
            "completion": {
                "values": values,
                "total": len(candidates),
                "hasMore": len(candidates) > len(values),
            }
        }


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


_DECODER: Final = json.JSONDecoder(parse_constant=_refuse_constant)
"""Built once: ``json.loads`` with a keyword builds a new decoder on every call."""


def create_kestrel_mcp_server(
    transport: Transport,
    *,
    secrets: bool = True,
    secret_store: Callable[[], SecretStore] | None = None,
    page_size: int = 100,
) -> KestrelMcpServer:
    """Build the MCP face over a transport choice (``local_transport()`` or ``remote_transport``).

    ``secrets=False`` leaves out the three local-only secret tools (the door's
    Streamable HTTP face serves everything else); ``secret_store`` replaces the
    operator store ``kestrel_secrets`` would open.
    """
    return KestrelMcpServer(
        transport, secrets=secrets, secret_store=secret_store, page_size=page_size
    )
