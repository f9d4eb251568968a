"""The ``/v1`` HTTP face (spec §10): each route is one tool call on the caller's turn.

Running every route through ``LiveTurn.tools.call`` means the HTTP face and the MCP
face of the door share one guard, one approval path and one audit row per call; a
route only translates HTTP to a tool call and the tool result back to HTTP.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .door import Door, json_response
from .http_status import status_for
from .openapi import openapi_document
from .tools import ToolArgumentError

__all__ = ["v1_routes"]

logger = logging.getLogger(__name__)


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
        refusal = data.get("refusal") if isinstance(data, Mapping) else None
        if not isinstance(refusal, Mapping) or not isinstance(refusal.get("code"), str):
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
    async def catalog(request: Request) -> Response:
        return await _call(door, request, "kestrel_catalog", {})

    async def scenario(request: Request) -> Response:
        return await _call(
            door, request, "kestrel_scenario", {"scenario": request.path_params["sid"]}
        )

    async def tape(request: Request) -> Response:
        return await _call(door, request, "kestrel_tape", {"scenario": request.path_params["sid"]})

    async def validate(request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        return await _call(door, request, "kestrel_validate", body)

    async def open_session(request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        return await _call(door, request, "kestrel_session_open", body)

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

    def session_call(tool: str) -> Any:
        async def endpoint(request: Request) -> Response:
            return await _call(door, request, tool, {"sessionId": request.path_params["id"]})

        return endpoint

    async def resume(request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        return await _call(door, request, "kestrel_operation_resume", body)

    async def artifact(request: Request) -> Response:
        return await _call(door, request, "kestrel_artifact", {"root": request.path_params["root"]})

    async def verify(request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        grade = body.get("grade", body)
        return await _call(door, request, "kestrel_verify", {"grade": grade})

    async def openapi(request: Request) -> Response:
        turn = await door.authenticate(request, "http")
        if isinstance(turn, Response):
            return turn
        return json_response(openapi_document(door.config.resource))

    return [
        Route("/v1/catalog", catalog, methods=["GET"]),
        Route("/v1/catalog/scenarios/{sid}", scenario, methods=["GET"]),
        Route("/v1/catalog/scenarios/{sid}/tape", tape, methods=["GET"]),
        Route("/v1/validate", validate, methods=["POST"]),
        Route("/v1/sessions", open_session, methods=["POST"]),
        Route("/v1/sessions/{id}/submit", submit, methods=["POST"]),
        Route("/v1/sessions/{id}/frame", session_call("kestrel_session_frame"), methods=["GET"]),
        Route(
            "/v1/sessions/{id}/blotter", session_call("kestrel_session_blotter"), methods=["GET"]
        ),
        Route("/v1/sessions/{id}/close", session_call("kestrel_session_close"), methods=["POST"]),
        Route("/v1/sessions/{id}/grade", session_call("kestrel_grade"), methods=["POST"]),
        Route("/v1/operations/resume", resume, methods=["POST"]),
        Route("/v1/artifacts/{root}", artifact, methods=["GET"]),
        Route("/v1/verify", verify, methods=["POST"]),
        Route("/v1/openapi.json", openapi, methods=["GET"]),
    ]
