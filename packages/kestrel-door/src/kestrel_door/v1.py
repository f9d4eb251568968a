"""The ``/v1`` HTTP face (spec §10): each route is one tool call on the caller's turn.

Running every route through ``LiveTurn.tools.call`` means the HTTP face and the MCP
face of the door share one guard, one approval path and one audit row per call; a
route only translates HTTP to a tool call and the tool result back to HTTP.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .door import Door, json_response
from .http_status import status_for
from .openapi import openapi_document
from .tools import ToolArgumentError, result_refusal

__all__ = ["v1_routes"]

logger = logging.getLogger(__name__)

Endpoint = Callable[[Request], Awaitable[Response]]


def _refusal(
    code: str, message: str, status: int, detail: dict[str, Any] | None = None
) -> Response:
    return json_response(
        {"refusal": {"code": code, "message": message, "detail": detail or {}}}, status
    )


def _bad_request(message: str) -> Response:
    return _refusal("INVALID_SOURCE", message, 400, {"where": "request"})


async def _json_body(request: Request) -> dict[str, Any] | Response:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return _bad_request("the request body is not JSON")
    if not isinstance(data, dict):
        return _bad_request("the request body must be a JSON object")
    return data


def _result_response(door: Door, result: Mapping[str, Any], tool: str) -> Response:
    data = result.get("structuredContent")
    if result.get("isError"):
        refusal = result_refusal(result)
        if refusal is None or not isinstance(refusal.get("code"), str):
            return _refusal("BACKEND_UNAVAILABLE", "the tool failed without a refusal", 502)
        code = str(refusal["code"])
        status = status_for(code)
        headers: dict[str, str] = {}
        detail = refusal.get("detail")
        if code == "FORBIDDEN" and isinstance(detail, Mapping) and detail.get("requiredScope"):
            headers["WWW-Authenticate"] = door.insufficient_scope_header(
                str(detail["requiredScope"])
            )
        return json_response({"refusal": dict(refusal)}, status, headers)
    if not isinstance(data, Mapping):
        return _refusal("BACKEND_UNAVAILABLE", "the tool returned no structured result", 502)
    if tool == "kestrel_session_open" and data.get("gated") is True:
        return json_response(data.get("payment"), 402)
    if tool == "kestrel_tape":
        return Response(str(data.get("text", "")), media_type="text/csv")
    if (
        tool in {"kestrel_grade", "kestrel_operation_resume"}
        and data.get("kind") == "kestrel.operation"
    ):
        return json_response(dict(data), 202)
    return json_response(dict(data))


async def _call(door: Door, request: Request, tool: str, arguments: dict[str, Any]) -> Response:
    turn = await door.authenticate(request, "http")
    if isinstance(turn, Response):
        return turn
    try:
        with anyio.fail_after(door.config.request_timeout_s):
            result = await turn.tools.call(tool, arguments)
    except ToolArgumentError as exc:
        return _bad_request(str(exc))
    except TimeoutError:
        return _refusal("BACKEND_UNAVAILABLE", "the call timed out", 504)
    return _result_response(door, result, tool)


def v1_routes(door: Door) -> list[Route]:
    def path_call(tool: str, **arguments: str) -> Endpoint:
        """A route whose tool arguments are its path parameters (argument=parameter)."""

        async def endpoint(request: Request) -> Response:
            args = {name: request.path_params[param] for name, param in arguments.items()}
            return await _call(door, request, tool, args)

        return endpoint

    def body_call(tool: str) -> Endpoint:
        """A route whose tool arguments are its JSON body."""

        async def endpoint(request: Request) -> Response:
            body = await _json_body(request)
            if isinstance(body, Response):
                return body
            return await _call(door, request, tool, body)

        return endpoint

    async def submit(request: Request) -> Response:
        ctype = request.headers.get("content-type", "")
        if ctype.startswith(("text/x-kestrel", "text/plain")):
            try:
                source = (await request.body()).decode("utf-8")
            except UnicodeDecodeError:
                return _bad_request("the source is not UTF-8")
            body: dict[str, Any] | Response = {"source": source}
        else:
            body = await _json_body(request)
        if isinstance(body, Response):
            return body
        args = {**body, "sessionId": request.path_params["id"]}
        return await _call(door, request, "kestrel_session_submit", args)

    def session_call(tool: str) -> Endpoint:
        return path_call(tool, sessionId="id")

    async def verify(request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        grade = body.get("grade", body)
        return await _call(door, request, "kestrel_verify", {"grade": grade})

    document = openapi_document(door.config.resource)

    async def openapi(request: Request) -> Response:
        turn = await door.authenticate(request, "http")
        if isinstance(turn, Response):
            return turn
        return json_response(document)

    return [
        Route("/v1/catalog", path_call("kestrel_catalog"), methods=["GET"]),
        Route(
            "/v1/catalog/scenarios/{sid}",
            path_call("kestrel_scenario", scenario="sid"),
            methods=["GET"],
        ),
        Route(
            "/v1/catalog/scenarios/{sid}/tape",
            path_call("kestrel_tape", scenario="sid"),
            methods=["GET"],
        ),
        Route("/v1/validate", body_call("kestrel_validate"), methods=["POST"]),
        Route("/v1/sessions", body_call("kestrel_session_open"), methods=["POST"]),
        Route("/v1/sessions/{id}/submit", submit, methods=["POST"]),
        Route("/v1/sessions/{id}/frame", session_call("kestrel_session_frame"), methods=["GET"]),
        Route(
            "/v1/sessions/{id}/blotter", session_call("kestrel_session_blotter"), methods=["GET"]
        ),
        Route("/v1/sessions/{id}/close", session_call("kestrel_session_close"), methods=["POST"]),
        Route("/v1/sessions/{id}/grade", session_call("kestrel_grade"), methods=["POST"]),
        Route("/v1/operations/resume", body_call("kestrel_operation_resume"), methods=["POST"]),
        Route("/v1/artifacts/{root}", path_call("kestrel_artifact", root="root"), methods=["GET"]),
        Route("/v1/verify", verify, methods=["POST"]),
        Route("/v1/openapi.json", openapi, methods=["GET"]),
    ]
