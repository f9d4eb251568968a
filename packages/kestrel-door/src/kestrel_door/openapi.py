"""The OpenAPI 3.1 document of the ``/v1`` face (served at ``/v1/openapi.json``).

Generated from the surface, like the routes: one operation per tool route, its request
body from the tool's argument model (less the path parameters), its 200 from the result
models, and every status a client must handle: 400 ``INVALID_ARGUMENT``, 401, 403, 413
(a body over the door's limit, refused before any call), the statuses of the refusal
codes the tool declares, 402 with an Offer for a gated open and 202 with an
OperationResumption for a long operation.
"""

from __future__ import annotations

from typing import Any, Final

from kestrel_protocol import Offer, OperationResumption, SessionOpened
from kestrel_protocol.surface import Surface, Tool, input_schema, output_schema

from .http_status import status_for

__all__ = ["openapi_document"]

_REFUSAL: Final = {"$ref": "#/components/schemas/RefusalBody"}
_REFUSAL_BODY: Final = {
    "type": "object",
    "properties": {
        "refusal": {
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "detail": {"type": "object"},
            },
            "required": ["code", "message", "detail"],
        }
    },
    "required": ["refusal"],
}


def _too_large() -> dict[str, Any]:
    return _json(_REFUSAL, "LIMIT_EXCEEDED (requestBytes): the body is over the door's limit")


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _request_body(tool: Tool) -> dict[str, Any] | None:
    route = tool.route
    assert route is not None
    if route.body == "none":
        return None
    schema = input_schema(tool.arguments)
    for argument in route.params:
        schema.get("properties", {}).pop(argument, None)
        if argument in schema.get("required", []):
            schema["required"] = [r for r in schema["required"] if r != argument]
    content: dict[str, Any] = {"application/json": {"schema": schema}}
    if route.body == "source":
        content["text/x-kestrel"] = {"schema": {"type": "string"}}
    return {"required": bool(schema.get("required")), "content": content}


def _query_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """An argument's schema as a query parameter's: a query never carries ``null``, so an
    optional argument (``anyOf [T, null]``) is its ``T`` (its default kept)."""
    options = [o for o in schema.get("anyOf", ()) if o.get("type") != "null"]
    found = dict(options[0]) if len(options) == 1 else dict(schema)
    found.pop("anyOf", None)
    found.pop("title", None)
    found.pop("description", None)
    if "default" in schema and schema["default"] is not None:
        found["default"] = schema["default"]
    return found


def _operation(tool: Tool) -> dict[str, Any]:
    route = tool.route
    assert route is not None
    if route.media == "application/json":
        ok = _json(tool.output_schema, tool.title)
    else:
        ok = {"description": tool.title, "content": {route.media: {"schema": {"type": "string"}}}}
    responses: dict[str, Any] = {
        "200": ok,
        "400": _json(_REFUSAL, "INVALID_ARGUMENT: arguments that do not fit the call"),
        "401": _json(_REFUSAL, "no valid bearer credential (WWW-Authenticate names the metadata)"),
        "403": _json(_REFUSAL, "FORBIDDEN (insufficient_scope) or APPROVAL_REQUIRED"),
        "413": _too_large(),
    }
    for code in tool.refusals:
        responses.setdefault(str(status_for(code)), _json(_REFUSAL, f"a typed refusal ({code})"))
    if OperationResumption in tool.results:
        responses["202"] = _json(
            output_schema(OperationResumption), "still running: resume with its token"
        )
    if SessionOpened in tool.results:
        responses["402"] = _json(
            {"oneOf": [{"$ref": "#/components/schemas/Offer"}, _REFUSAL]},
            "an Offer (the open needs payment), or PAYMENT_INVALID",
        )
    operation: dict[str, Any] = {
        "operationId": tool.name,
        "summary": tool.title,
        "description": tool.description,
        "responses": dict(sorted(responses.items())),
    }
    parameters = [
        {"name": param, "in": "path", "required": True, "schema": {"type": "string"}}
        for param in route.params.values()
    ]
    if route.query:
        schema = input_schema(tool.arguments)
        properties, required = schema.get("properties", {}), schema.get("required", [])
        parameters.extend(
            {
                "name": param,
                "in": "query",
                "required": argument in required,
                "description": properties.get(argument, {}).get("description", ""),
                "schema": _query_schema(properties.get(argument, {"type": "string"})),
            }
            for argument, param in route.query.items()
        )
    if parameters:
        operation["parameters"] = parameters
    body = _request_body(tool)
    if body is not None:
        operation["requestBody"] = body
    return operation


def openapi_document(server_url: str, surface: Surface) -> dict[str, Any]:
    """The document of ``surface``'s routes, naming ``server_url`` as its server."""
    paths: dict[str, dict[str, Any]] = {}
    for tool in surface.tools:
        if tool.route is not None:
            paths.setdefault(tool.route.path, {})[tool.route.method.lower()] = _operation(tool)
    paths["/v1/openapi.json"] = {
        "get": {
            "operationId": "openapi",
            "summary": "This document",
            "responses": {
                "200": _json({"type": "object"}, "OpenAPI 3.1"),
                "401": _json(_REFUSAL, "no valid bearer credential"),
                "403": _json(_REFUSAL, "FORBIDDEN (insufficient_scope)"),
                "413": _too_large(),
            },
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "Kestrel door", "version": "1"},
        "servers": [{"url": server_url}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"RefusalBody": _REFUSAL_BODY, "Offer": output_schema(Offer)},
        },
    }
