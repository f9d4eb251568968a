"""Transport-level checks before anything else runs: Host, Origin, body size.

Host and Origin validation is the DNS-rebinding defence a loopback server needs (a
browser page on another site must not drive the door through a rebound name). The
body limit is enforced while reading, so a lying or absent ``Content-Length`` does not
get a larger body through. A body over the limit is refused ``LIMIT_EXCEEDED`` naming
the door's limit (``detail.limit == "requestBytes"``) and the body's size, before any
call, so it is told apart from a call's own limits (a source's 64 KiB) on every path; on
``/mcp`` that refusal is the ``data`` of a JSON-RPC error (``-32600``, id null).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
from kestrel_protocol.jsonrpc import INVALID_REQUEST
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .mcp_http import MCP_PATH

__all__ = ["GuardMiddleware", "matches", "refusal_bytes"]


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


def refusal_bytes(code: str, message: str, detail: Mapping[str, Any] | None = None) -> bytes:
    """The JSON body of a refusal the door sends before (or instead of) any app code."""
    body = {"refusal": {"code": code, "message": message, "detail": dict(detail or {})}}
    return json.dumps(body).encode()


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
    send: Send, status: int, code: str, message: str, detail: Mapping[str, Any] | None = None
) -> None:
    await _send_json(send, status, refusal_bytes(code, message, detail))


async def _send_json(send: Send, status: int, body: bytes) -> None:
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
        if scope["path"] != MCP_PATH:
            await _reply(send, 413, "LIMIT_EXCEEDED", message, detail)
            return
        # On /mcp the refusal is a JSON-RPC error's data, as every /mcp error carries
        # one, so an MCP client shows it (its id was in the body never read: null).
        refusal = {"code": "LIMIT_EXCEEDED", "message": message, "detail": detail}
        error = {"code": INVALID_REQUEST, "message": message, "data": {"refusal": refusal}}
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
        await _send_json(send, 413, body)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if not matches(host, self.allowed_hosts):
            await _reply(send, 421, "FORBIDDEN", "this Host is not served (DNS-rebinding defence)")
            return
        origin = headers.get("origin")
        if origin is not None and not matches(origin, self.allowed_origins):
            await _reply(send, 403, "FORBIDDEN", "this Origin is not allowed")
            return
        length = headers.get("content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                await _reply(send, 400, "INVALID_SOURCE", "Content-Length is not a number")
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
            await _reply(send, 408, "LIMIT_EXCEEDED", "the request body took too long to arrive")
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
