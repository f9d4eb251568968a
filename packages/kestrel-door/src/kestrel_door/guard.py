"""Transport-level checks before anything else runs: Host, Origin, body size.

Host and Origin validation is the DNS-rebinding defence a loopback server needs (a
browser page on another site must not drive the door through a rebound name). The
body limit is enforced while reading, so a lying or absent ``Content-Length`` does not
get a larger body through. A body over the limit is refused ``LIMIT_EXCEEDED`` naming
the door's limit (``detail.limit == "requestBytes"``) and the body's size, before any
call, so it is told apart from a call's own limits (a source's 64 KiB) on every path.

On ``/mcp`` every such refusal (and the door's 401) is the ``data.refusal`` of a JSON-RPC
error (``-32600``, id null: the body's id was never read), whose message is the
refusal's, so an MCP client shows it; elsewhere it is a ``{refusal}`` body.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import anyio
from kestrel_protocol.jsonrpc import INVALID_REQUEST
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MCP_PATH", "GuardMiddleware", "matches", "refusal_bytes", "refusal_json"]

MCP_PATH: Final = "/mcp"
"""Where the door serves MCP (streamable HTTP)."""


def matches(value: str, patterns: Sequence[str]) -> bool:
    """``value`` equals a pattern, or a ``prefix:*`` pattern with any port."""
    value = value.lower()
    for raw in patterns:
        pattern = raw.lower()
        if pattern in ("*", value):
            return True
        if pattern.endswith(":*"):
            prefix = pattern[:-2]
            if value == prefix:
                return True
            if value.startswith(prefix + ":") and value[len(prefix) + 1 :].isdigit():
                return True
    return False


def refusal_json(refusal: Mapping[str, Any], *, path: str = "") -> dict[str, Any]:
    """The body of a refusal the door sends before any call, for a request to ``path``:
    on ``/mcp`` a JSON-RPC error carrying it, as every ``/mcp`` error carries a refusal
    (so an MCP client shows it); elsewhere ``{refusal}``."""
    if path != MCP_PATH:
        return {"refusal": dict(refusal)}
    data = {"refusal": dict(refusal)}
    error = {"code": INVALID_REQUEST, "message": refusal["message"], "data": data}
    return {"jsonrpc": "2.0", "id": None, "error": error}


def refusal_bytes(
    code: str, message: str, detail: Mapping[str, Any] | None = None, *, path: str = ""
) -> bytes:
    """The bytes of :func:`refusal_json` for the refusal ``{code, message, detail}``."""
    refusal = {"code": code, "message": message, "detail": dict(detail or {})}
    return json.dumps(refusal_json(refusal, path=path)).encode()


def _too_large(limit: int, found: int | None) -> tuple[str, dict[str, Any]]:
    """The message and detail of a body over the door's limit: its size when the
    ``Content-Length`` said it (``found``), else that it ran past the limit while read."""
    size = f"{found} bytes" if found is not None else f"over {limit} bytes"
    message = (
        f"the request body is {size}; the door's limit on a request body is {limit} bytes "
        "(kestrel-door serve --max-body), checked before any call"
    )
    detail: dict[str, Any] = {"limit": "requestBytes", "max": limit}
    if found is not None:
        detail["found"] = found
    return message, detail


async def _reply(
    scope: Scope,
    send: Send,
    status: int,
    code: str,
    message: str,
    *,
    detail: Mapping[str, Any] | None = None,
) -> None:
    body = refusal_bytes(code, message, detail, path=scope["path"])
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class GuardMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Sequence[str],
        allowed_origins: Sequence[str],
        max_body_bytes: int,
        body_timeout_s: float = 30.0,
    ) -> None:
        self.app = app
        self.body_timeout_s = body_timeout_s
        self.allowed_hosts = tuple(allowed_hosts)
        self.allowed_origins = tuple(allowed_origins)
        self.max_body_bytes = max_body_bytes

    async def _refuse_body(self, scope: Scope, send: Send, found: int | None) -> None:
        message, detail = _too_large(self.max_body_bytes, found)
        await _reply(scope, send, 413, "LIMIT_EXCEEDED", message, detail=detail)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if not matches(host, self.allowed_hosts):
            await _reply(
                scope, send, 421, "FORBIDDEN", "this Host is not served (DNS-rebinding defence)"
            )
            return
        origin = headers.get("origin")
        if origin is not None and not matches(origin, self.allowed_origins):
            await _reply(scope, send, 403, "FORBIDDEN", "this Origin is not allowed")
            return
        length = headers.get("content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                await _reply(scope, send, 400, "INVALID_ARGUMENT", "Content-Length is not a number")
                return
            if declared > self.max_body_bytes:
                await self._refuse_body(scope, send, declared)
                return

        # Read the whole body here, bounded, then replay it: the app never sees more
        # than the limit, and the 413 is sent before any app code has run.
        # A client that trickles its body is cut off (408) rather than holding a worker.
        chunks: list[bytes] = []
        seen = 0
        with anyio.move_on_after(self.body_timeout_s) as scope_timer:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                seen += len(chunk)
                if seen > self.max_body_bytes:
                    await self._refuse_body(scope, send, None)
                    return
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
        if scope_timer.cancelled_caught:
            await _reply(
                scope, send, 408, "LIMIT_EXCEEDED", "the request body took too long to arrive"
            )
            return
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
