"""Transport-level checks before anything else runs: Host, Origin, body size.

Host and Origin validation is the DNS-rebinding defence a loopback server needs (a
browser page on another site must not drive the door through a rebound name). The
body limit is enforced while reading, so a lying or absent ``Content-Length`` does not
get a larger body through.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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


def refusal_bytes(code: str, message: str) -> bytes:
    """The JSON body of a refusal the door sends before (or instead of) any app code."""
    body = {"refusal": {"code": code, "message": message, "detail": {}}}
    return json.dumps(body).encode()


async def _reply(send: Send, status: int, code: str, message: str) -> None:
    body = refusal_bytes(code, message)
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
                too_big = int(length) > self.max_body_bytes
            except ValueError:
                await _reply(send, 400, "INVALID_SOURCE", "Content-Length is not a number")
                return
            if too_big:
                await _reply(send, 413, "LIMIT_EXCEEDED", "request body too large")
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
                    await _reply(send, 413, "LIMIT_EXCEEDED", "request body too large")
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
