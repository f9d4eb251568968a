"""The ``/v1`` HTTP face (docs/spec.md §10), generated from the surface: one route per tool.

Each tool that declares a :class:`~kestrel_protocol.surface.Route` gets it here, and
each route is one call of the caller's ``turn.tools.call``, so the HTTP face and the
MCP face of the door share one guard, one approval path and one audit row per call. A
route only translates HTTP to a tool call and the result back: a refusal is its 4xx
with ``{refusal}``, arguments that do not fit are 400 ``INVALID_ARGUMENT``, a gated
open is 402 with its Offer, a still-running operation is 202, and a ``text/csv`` route
answers the result's text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
from kestrel_protocol import RefusalCode
from kestrel_protocol.jsonrpc import JsonRpcProtocolError, decode_frame
from kestrel_protocol.outage import RETRY_AFTER_S
from kestrel_protocol.surface import (
    SCOPE_READ,
    ArgumentError,
    Tool,
    ToolResult,
    input_schema,
    result_refusal,
)
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .door import Caller, Door, json_response
from .http_status import status_for
from .openapi import openapi_document

__all__ = ["v1_routes"]

Endpoint = Callable[[Request], Awaitable[Response]]


def _refusal(
    code: str, message: str, status: int, detail: Mapping[str, Any] | None = None
) -> Response:
    body = {"refusal": {"code": code, "message": message, "detail": dict(detail or {})}}
    return json_response(body, status)


def _bad_request(message: str) -> Response:
    return _refusal(RefusalCode.INVALID_ARGUMENT, message, 400, {"where": "request"})


async def _json_body(request: Request) -> dict[str, Any] | Response:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = decode_frame(raw)  # read as the MCP faces read a frame
    except JsonRpcProtocolError:
        return _bad_request("the request body is not JSON")
    if not isinstance(data, dict):
        return _bad_request("the request body must be a JSON object")
    return data


async def _source_body(request: Request) -> dict[str, Any] | Response:
    """A JSON object, or the raw source of a ``text/x-kestrel`` (or plain text) body."""
    ctype = request.headers.get("content-type", "")
    if not ctype.startswith(("text/x-kestrel", "text/plain")):
        return await _json_body(request)
    try:
        return {"source": (await request.body()).decode("utf-8")}
    except UnicodeDecodeError:
        return _bad_request("the source is not UTF-8")


_BOOLEANS = {"true": True, "false": False}


def _query_types(tool: Tool) -> dict[str, str]:
    """The JSON type of each argument a tool's route carries in its query."""
    assert tool.route is not None
    if not tool.route.query:
        return {}
    properties = input_schema(tool.arguments).get("properties", {})
    types: dict[str, str] = {}
    for argument in tool.route.query:
        schema = properties.get(argument, {})
        options = [schema, *schema.get("anyOf", ())]
        types[argument] = next((str(o["type"]) for o in options if "type" in o), "string")
    return types


def _query_value(value: str, kind: str) -> Any:
    """A query parameter as its argument: a flag's ``true``/``false`` as a boolean, an
    integer argument's digits as an integer, anything else as it came."""
    if kind == "boolean":
        return _BOOLEANS.get(value, value)
    if kind == "integer" and value.lstrip("-").isdigit() and len(value) <= 18:
        return int(value)
    return value


def _query_arguments(
    query: Mapping[str, str], types: Mapping[str, str], request: Request
) -> dict[str, Any]:
    """The arguments a route's query carries, typed as their arguments are.

    Any other query parameter, or a value of the wrong kind, is passed on as it came, so
    the tool's model refuses it as INVALID_ARGUMENT naming it, exactly as in a JSON body.
    """
    argument_of = {param: argument for argument, param in query.items()}
    found: dict[str, Any] = {}
    for name, value in request.query_params.multi_items():
        argument = argument_of.get(name, name)
        kind = types.get(argument, "string") if name in argument_of else "string"
        found[argument] = _query_value(value, kind)
    return found


def _result_response(door: Door, result: Mapping[str, Any], tool: Tool) -> Response:
    if result.get("isError"):
        refusal = result_refusal(result)
        if refusal is None or not isinstance(refusal.get("code"), str):
            return _refusal("BACKEND_UNAVAILABLE", "the tool failed without a refusal", 502)
        code = str(refusal["code"])
        headers: dict[str, str] = {}
        detail = refusal.get("detail")
        if code == "FORBIDDEN" and isinstance(detail, Mapping) and detail.get("requiredScope"):
            headers["WWW-Authenticate"] = door.insufficient_scope_header(
                str(detail["requiredScope"])
            )
        if code == "BACKEND_UNAVAILABLE":  # an outage: the client may retry
            retry = detail.get("retryAfter") if isinstance(detail, Mapping) else None
            headers["Retry-After"] = str(retry or RETRY_AFTER_S)
        return json_response({"refusal": dict(refusal)}, status_for(code), headers)
    data = result.get("structuredContent")
    if not isinstance(data, Mapping):
        return _refusal("BACKEND_UNAVAILABLE", "the tool returned no structured result", 502)
    assert tool.route is not None
    if tool.route.media != "application/json":
        content = result.get("content") or [{}]
        return Response(str(content[0].get("text", "")), media_type=tool.route.media)
    if data.get("gated") is True:
        return json_response(data.get("payment"), 402)
    status = 202 if data.get("kind") == "kestrel.operation" else 200
    if isinstance(result, ToolResult):  # its object's one JSON text, never encoded again
        body = result.structured_bytes()
        return Response(body, status_code=status, media_type="application/json")
    return json_response(dict(data), status)


async def _call(door: Door, caller: Caller, tool: Tool, args: Any) -> Response:
    try:
        with anyio.fail_after(door.config.call_timeout_s(tool)):
            result = await caller.turn.tools.call(tool.name, args)
    except ArgumentError as exc:
        return json_response({"refusal": exc.refusal.to_json()}, 400)
    except TimeoutError:
        return _refusal("BACKEND_UNAVAILABLE", "the call timed out", 504)
    return _result_response(door, result, tool)


def _endpoint(door: Door, tool: Tool) -> Endpoint:
    route = tool.route
    assert route is not None
    # A route without a body still reads one when sent (a JSON object): its members are
    # arguments like any, so an unknown one is refused naming it, as on MCP.
    read_body = {"none": _json_body, "json": _json_body, "source": _source_body}[route.body]
    types = _query_types(tool)

    async def endpoint(request: Request) -> Response:
        caller = await door.authenticate(request, "http")
        if isinstance(caller, Response):
            return caller
        body = await read_body(request)
        if isinstance(body, Response):
            return body
        body.update(_query_arguments(route.query, types, request))  # unknown ones too
        for argument, param in route.params.items():  # the path wins over the query
            body[argument] = request.path_params[param]
        return await _call(door, caller, tool, body)

    return endpoint


def v1_routes(door: Door) -> list[Route]:
    """One route per tool with a ``route``, and the OpenAPI document describing them."""
    document = openapi_document(door.config.resource, door.surface)

    async def openapi(request: Request) -> Response:
        caller = await door.authenticate(request, "http")
        if isinstance(caller, Response):
            return caller
        if caller.guarded and SCOPE_READ not in caller.turn.ctx.scopes:
            headers = {"WWW-Authenticate": door.insufficient_scope_header(SCOPE_READ)}
            body = {
                "refusal": {
                    "code": "FORBIDDEN",
                    "message": f"this credential lacks the scope {SCOPE_READ}",
                    "detail": {"requiredScope": SCOPE_READ, "error": "insufficient_scope"},
                }
            }
            return json_response(body, 403, headers)
        return json_response(document)

    routes = [
        Route(tool.route.path, _endpoint(door, tool), methods=[tool.route.method])
        for tool in door.surface.tools
        if tool.route is not None
    ]
    return [*routes, Route("/v1/openapi.json", openapi, methods=["GET"])]
