"""MCP over Streamable HTTP at ``/mcp``, both protocol eras, without server sessions.

Every POST carries one JSON-RPC message (or, for 2025-03-26 clients, a batch) and is
answered with one JSON body: notifications and responses get ``202``. A request whose
client accepts ``text/event-stream`` and that produces notifications (progress while a
grade runs, log messages) is answered as an SSE stream instead: those notifications,
then the response. The door keeps no ``Mcp-Session-Id`` state, so GET (a
server-to-client SSE stream) and DELETE are ``405``. A ``2026-07-28`` request must
also agree with its routing headers (``MCP-Protocol-Version``, ``Mcp-Method``,
``Mcp-Name``), each present once (:mod:`.mcp_era` holds what that era asks).

This module is the transport only: each request is answered by the caller's
:class:`~kestrel_door.mcp_face.DoorMcp`, generated from the surface, which guards every
method and reaches the runtime only through the caller's ``turn.tools.call``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
from kestrel_protocol.jsonrpc import (
    BATCH_REFUSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JsonRpcProtocolError,
    JsonRpcRequest,
    McpErrorCode,
    decode_frame,
    error_response,
    parse_message,
    readable_id,
)
from kestrel_protocol.mcp import (
    HANDSHAKE_VERSIONS,
    MODERN_VERSIONS,
    SUPPORTED_VERSIONS,
)
from kestrel_protocol.surface import Send, Tool, frame_bytes
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope
from starlette.types import Send as AsgiSend

from .door import Caller, Door, json_response
from .guard import MCP_PATH
from .mcp_era import MODERN_STATUS, envelope_missing, header_mismatch, modern_envelope
from .mcp_face import DoorMcp

__all__ = ["mcp_routes"]

logger = logging.getLogger(__name__)


def _error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    return error_response(rid, code, message, data).to_json()


def _accepted(request: Request) -> set[str]:
    accept = request.headers.get("accept")
    if accept is None:
        return {"*/*"}
    return {part.split(";")[0].strip().lower() for part in accept.split(",")}


def _accepts_json(request: Request) -> bool:
    return bool(_accepted(request) & {"application/json", "application/*", "*/*"})


def _accepts_sse(request: Request) -> bool:
    """Whether the client listed ``text/event-stream`` itself (a bare ``*/*`` is not
    taken as a promise to read SSE)."""
    return bool(_accepted(request) & {"text/event-stream", "text/*"})


async def _unless_disconnected(
    request: Request,
    dispatch: Callable[[Any], Awaitable[dict[str, Any] | None]],
    message: Any,
) -> tuple[dict[str, Any] | None, bool]:
    """Run ``dispatch(message)``, cancelled if the client disconnects first."""
    answer: dict[str, Any] | None = None
    gone = False
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            nonlocal gone
            while (await request.receive())["type"] != "http.disconnect":
                pass
            gone = True
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        answer = await dispatch(message)
        tg.cancel_scope.cancel()
    return answer, gone


class _Exchange:
    """One POST's messages, answered by the caller's MCP face."""

    def __init__(self, door: Door, caller: Caller) -> None:
        principal = caller.turn.ctx.principal
        self.face = DoorMcp(
            door.surface,
            caller.turn,
            guarded=caller.guarded,
            audit=door.audit,
            recall=door.recall(principal),
            log_levels=door.log_levels,
            elicitation=door.elicitation if caller.guarded else None,
        )
        self.config, self.surface = door.config, door.surface

    @property
    def scope_challenge(self) -> str | None:
        return self.face.scope_challenge

    def silent(self, params: Any) -> bool:
        """Whether a request with ``params`` can send no notification (answered as JSON)."""
        return self.face.session.silent(params)

    async def dispatch(self, message: Any, send: Send | None = None) -> dict[str, Any] | None:
        """One message in; its response, or ``None`` for a notification/response.
        ``send`` carries the request's notifications (none without it)."""
        try:  # classified as every MCP face classifies a message (one wording of each fault)
            parsed = parse_message(message)
        except JsonRpcProtocolError as exc:
            if _notification(message):
                return None  # never answered, well formed or not: the door acts on none
            return _error(exc.request_id, exc.code, exc.message)
        if not isinstance(parsed, JsonRpcRequest):
            return None  # a notification changes nothing on a stateless door; a response to us
        rid, method = parsed.id, parsed.method
        try:
            with anyio.fail_after(self.config.call_timeout_s(self._tool(method, parsed.params))):
                return await self.face.request(rid, method, parsed.params, send)
        except TimeoutError:
            return _error(rid, INTERNAL_ERROR, "the call timed out")
        except Exception:
            logger.exception("MCP request %s failed", method)
            return _error(rid, INTERNAL_ERROR, "internal error")

    def _tool(self, method: str, params: Any) -> Tool | None:
        """The tool a ``tools/call`` names (``None`` for any other request, or a name
        that is no tool: the face refuses it as it always does)."""
        if method != "tools/call" or not isinstance(params, Mapping):
            return None
        name = params.get("name")
        return self.surface.find(name) if isinstance(name, str) else None


def _notification(message: Any) -> bool:
    """Whether ``message`` is a notification (a JSON-RPC 2.0 message naming a method, with
    no ``id``), however malformed its method or params: ``202``, as every notification."""
    return (
        isinstance(message, dict)
        and "id" not in message
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
    )


def _is_request(message: Any) -> bool:
    """Whether ``message`` is a well-formed request: the era's rules (its envelope, its
    headers) are checked on one; a malformed message is refused as every face refuses it."""
    try:
        return isinstance(parse_message(message), JsonRpcRequest)
    except JsonRpcProtocolError:
        return False


def _outage(answer: Mapping[str, Any]) -> int | None:
    """``Retry-After`` seconds when ``answer`` is a tool's store-outage refusal."""
    result = answer.get("result")
    content = result.get("structuredContent") if isinstance(result, Mapping) else None
    refusal = content.get("refusal") if isinstance(content, Mapping) else None
    if not isinstance(refusal, Mapping) or refusal.get("code") != "BACKEND_UNAVAILABLE":
        return None
    detail = refusal.get("detail")
    retry = detail.get("retryAfter") if isinstance(detail, Mapping) else None
    return retry if isinstance(retry, int) else None


def _response(
    door: Door, exchange: _Exchange, answer: dict[str, Any] | None, modern: bool
) -> Response:
    """The HTTP response carrying one answer (``202`` for none)."""
    if answer is None:
        return Response(status_code=202)
    status = 200
    headers: dict[str, str] = {}
    retry = _outage(answer)
    if retry is not None:  # the store did not answer: a transport error the client retries
        status = 503
        headers["Retry-After"] = str(retry)
    elif exchange.scope_challenge:
        status = 403
        headers["WWW-Authenticate"] = door.insufficient_scope_header(exchange.scope_challenge)
    elif modern and "error" in answer:
        status = MODERN_STATUS.get(int(answer["error"].get("code", 0)), 200)
    elif (
        "error" in answer
        and answer["error"].get("code") == INVALID_REQUEST
        and answer.get("id") is None
    ):
        status = 400
    # json's bytes of the answer, a tool result's JSON spliced in, never encoded again
    body = frame_bytes(answer)
    return Response(body, status_code=status, headers=headers, media_type="application/json")


def _event(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + frame_bytes(message) + b"\n\n"


class _Streamed:
    """One request answered as SSE once it sends a notification, else as plain JSON.

    The request runs here, inside the response: until its first notification nothing
    is sent, so an answer without notifications keeps its JSON status (403, 400, ...).
    In the 2026-07-28 era a client that closes the connection cancels the request.
    """

    def __init__(self, door: Door, exchange: _Exchange, message: Any, modern: bool) -> None:
        self._door = door
        self._exchange = exchange
        self._message = message
        self._modern = modern

    async def __call__(self, scope: Scope, receive: Receive, send: AsgiSend) -> None:
        tx, rx = anyio.create_memory_object_stream[dict[str, Any]](64)
        answer: list[dict[str, Any] | None] = []
        gone = started = False
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                async with tx:
                    answer.append(await self._exchange.dispatch(self._message, tx.send))

            async def watch() -> None:
                nonlocal gone
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone = True
                tg.cancel_scope.cancel()

            if self._modern:
                tg.start_soon(watch)
            tg.start_soon(run)
            async with rx:
                async for notification in rx:
                    if not started:
                        started = True
                        await send(
                            {
                                "type": "http.response.start",
                                "status": 200,
                                "headers": [
                                    (b"content-type", b"text/event-stream"),
                                    (b"cache-control", b"no-cache"),
                                ],
                            }
                        )
                    body = _event(notification)
                    await send({"type": "http.response.body", "body": body, "more_body": True})
            tg.cancel_scope.cancel()
        if not started:
            response = (
                Response(status_code=204)
                if gone or not answer
                else _response(self._door, self._exchange, answer[0], self._modern)
            )
            await response(scope, receive, send)
            return
        last = answer[0] if answer else None
        body = _event(last) if last is not None else b""
        await send({"type": "http.response.body", "body": body, "more_body": False})


def mcp_routes(door: Door) -> list[Route]:
    async def post(request: Request) -> Response:
        caller = await door.authenticate(request, "mcp")
        if isinstance(caller, Response):
            return caller
        try:
            message = decode_frame(await request.body())  # as stdio reads a line
        except JsonRpcProtocolError as unreadable:
            return json_response(unreadable.to_response().to_json(), 400)
        # Every error below answers with the request's id when it has a readable one.
        rid = readable_id(message)
        if not _accepts_json(request):
            return json_response(
                _error(rid, INVALID_REQUEST, "Accept must include application/json"), 406
            )
        ctype = request.headers.get("content-type", "application/json").split(";")[0].strip()
        if ctype.lower() != "application/json":
            return json_response(
                _error(rid, INVALID_REQUEST, "Content-Type must be application/json"), 415
            )
        version = request.headers.get("mcp-protocol-version")
        modern = version in MODERN_VERSIONS
        if version is not None and not modern and version not in HANDSHAKE_VERSIONS:
            # -32022 with the supported list: a modern client can pick one and retry.
            data = {"supported": list(SUPPORTED_VERSIONS), "requested": version}
            text = f"unsupported MCP-Protocol-Version {version!r}"
            return json_response(
                _error(rid, McpErrorCode.UNSUPPORTED_PROTOCOL_VERSION, text, data), 400
            )
        exchange = _Exchange(door, caller)
        if isinstance(message, list):
            if modern or not message:
                return json_response(_error(None, INVALID_REQUEST, BATCH_REFUSED), 400)
            answers = [a for a in [await exchange.dispatch(m) for m in message] if a is not None]
            return json_response(answers) if answers else Response(status_code=202)
        if version is None and modern_envelope(message):
            missing_header = "a 2026-07-28 request needs its MCP-Protocol-Version header"
            return json_response(_error(rid, McpErrorCode.HEADER_MISMATCH, missing_header), 400)
        if modern and _is_request(message):  # (a malformed one is refused as such, below)
            missing = envelope_missing(message)
            if missing is not None:
                return json_response(_error(rid, INVALID_PARAMS, missing), 400)
            mismatch = header_mismatch(request, message)
            if mismatch is not None:
                return json_response(_error(rid, McpErrorCode.HEADER_MISMATCH, mismatch), 400)
        if (
            isinstance(message, dict)
            and "id" in message
            and _accepts_sse(request)
            and not exchange.silent(message.get("params"))
        ):  # it may send notifications: streamed once it does
            return _Streamed(door, exchange, message, modern)  # type: ignore[return-value]
        if modern:
            # 2026-07-28: a client closing the connection *is* cancellation.
            answer, gone = await _unless_disconnected(request, exchange.dispatch, message)
            if gone:
                return Response(status_code=204)
        else:
            answer = await exchange.dispatch(message)
        return _response(door, exchange, answer, modern)

    async def not_allowed(request: Request) -> Response:
        caller = await door.authenticate(request, "mcp")
        if isinstance(caller, Response):
            return caller
        return Response(status_code=405, headers={"Allow": "POST"})

    return [
        Route(MCP_PATH, post, methods=["POST"]),
        Route(MCP_PATH, not_allowed, methods=["GET", "DELETE"]),
    ]
