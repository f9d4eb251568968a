"""The door's answer to a request no route takes: a refusal, as every other answer.

A path naming no route is 404 and a route asked with a method it does not take is 405
(with ``Allow``), each ``INVALID_ARGUMENT`` naming the method and the path (clipped, as
every refusal quotes what was sent). A trailing ``/`` is not redirected: it is refused
saying so. A ``/v1`` path whose shape is a route's but whose id segment no route could
match (empty, or holding an encoded ``/``, as a session id ``a%2Fb``) is that route's
call with that id, so it is refused as the id is on every face (the id rule of
``docs/spec.md`` §13), not as an unknown path.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from kestrel_protocol import RefusalCode, clipped
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from .door import json_response

__all__ = ["unrouted_handlers"]

Endpoint = Callable[[Request], Awaitable[Response]]
Handler = Callable[[Request, Exception], Awaitable[Response]]
_LISTED = "the /v1 routes are listed at /v1/openapi.json"


@dataclass(frozen=True, slots=True)
class _PathRoute:
    """A route with parameters in its path, and the endpoint that answers it."""

    methods: frozenset[str]
    path: str
    endpoint: Endpoint

    def parameters(self, raw_path: str) -> dict[str, str] | None:
        """The decoded value of each parameter when ``raw_path`` (as sent, still
        percent-encoded) has this route's segments; any segment fills a parameter."""
        wanted, given = self.path.split("/"), raw_path.split("/")
        if len(wanted) != len(given):
            return None
        found: dict[str, str] = {}
        for part, segment in zip(wanted, given, strict=True):
            if part.startswith("{") and part.endswith("}"):
                found[part[1:-1]] = unquote(segment)
            elif unquote(segment) != part:
                return None
        return found


def _raw_path(request: Request) -> str:
    raw = request.scope.get("raw_path")
    if isinstance(raw, bytes):
        return raw.decode("latin-1").split("?", 1)[0]
    return quote(request.url.path)


def _refusal(status: int, message: str, detail: Mapping[str, Any], **headers: str) -> Response:
    body = {"refusal": {"code": RefusalCode.INVALID_ARGUMENT, "message": message, "detail": detail}}
    return json_response(body, status, headers or None)


def unrouted_handlers(served: Sequence[BaseRoute]) -> dict[Any, Handler]:
    """Starlette's exception handlers for 404 and 405: the door's refusals. ``served``
    are the routes of the app (those with a parameter in their path are matched again
    against the path as sent)."""
    known = [
        _PathRoute(frozenset(route.methods or ()), route.path, route.endpoint)
        for route in served
        if isinstance(route, Route)
    ]
    routes = [route for route in known if "{" in route.path and ":" not in route.path]

    async def not_found(request: Request, exc: Exception) -> Response:
        raw = _raw_path(request)
        for route in routes:
            params = route.parameters(raw)
            if params is not None and request.method in route.methods:
                request.scope["path_params"] = params  # the route's own call refuses the id
                return await route.endpoint(request)
        said = f"{request.method} {clipped(raw)}"
        trimmed = raw.rstrip("/")
        trailing = trimmed != raw and any(r.parameters(trimmed) is not None for r in known)
        hint = "; drop its trailing '/'" if trailing else ""
        message = f"the door has no route {said}{hint} ({_LISTED})"
        return _refusal(404, message, {"where": "path", "path": clipped(raw)})

    async def not_allowed(request: Request, exc: Exception) -> Response:
        headers = exc.headers if isinstance(exc, HTTPException) else None
        taken = (headers or {}).get("Allow", "").split(", ")  # from a set: any order
        allow = ", ".join(sorted(taken))
        raw = _raw_path(request)
        message = f"{request.method} is not allowed on {clipped(raw)}; it takes {allow}"
        detail = {"where": "method", "path": clipped(raw), "allow": allow}
        return _refusal(405, message, detail, Allow=allow)

    return {404: not_found, 405: not_allowed}
