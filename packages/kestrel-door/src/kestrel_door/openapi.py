"""The OpenAPI 3.1 document of the ``/v1`` face (served at ``/v1/openapi.json``).

Hand-written so it states exactly what the routes do, including the statuses a client
must handle (402 with an Offer, 202 with an OperationResumption, refusals as 4xx).
"""

from __future__ import annotations

from typing import Any

__all__ = ["openapi_document"]

_OBJ: dict[str, Any] = {"type": "object", "additionalProperties": True}
_REFUSAL = {"$ref": "#/components/schemas/RefusalBody"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _refusals(*statuses: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "401": _json(_REFUSAL, "no valid bearer credential (WWW-Authenticate names the metadata)"),
        "403": _json(_REFUSAL, "FORBIDDEN (insufficient_scope) or APPROVAL_REQUIRED"),
    }
    for status in statuses:
        out[str(status)] = _json(_REFUSAL, "a typed refusal")
    return out


def _path_param(name: str = "id") -> list[dict[str, Any]]:
    return [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}]


def _op(summary: str, ok: dict[str, Any], *refusals: int, **extra: Any) -> dict[str, Any]:
    return {"summary": summary, "responses": {"200": ok, **_refusals(*refusals)}, **extra}


def _body(schema: dict[str, Any], required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


def openapi_document(server_url: str) -> dict[str, Any]:
    """The document, naming ``server_url`` as its server."""
    source_body = {
        "type": "object",
        "properties": {
            "source": {"type": "string"},
            "scenario": {"type": ["string", "null"]},
        },
        "required": ["source"],
    }
    open_body = {
        "type": "object",
        "properties": {
            "scenario": {"type": "string"},
            "label": {"type": ["string", "null"]},
            "payment": {
                "type": "object",
                "properties": {"offerId": {"type": "string"}, "voucher": {"type": "string"}},
                "required": ["offerId", "voucher"],
            },
        },
        "required": ["scenario"],
    }
    open_op = _op(
        "Open a session (200 {gated:false, sessionId}) or be offered a price (402 Offer)",
        _json(_OBJ, "the session id"),
        400,
        404,
        requestBody=_body(open_body),
    )
    open_op["responses"]["402"] = _json(
        {"oneOf": [{"$ref": "#/components/schemas/Offer"}, _REFUSAL]},
        "an Offer (quota spent), or PAYMENT_INVALID",
    )
    grade_op = _op(
        "Grade a closed session", _json(_OBJ, "GradeResult"), 404, 409, parameters=_path_param()
    )
    grade_op["responses"]["202"] = _json(_OBJ, "OperationResumption: resume with its token")
    resume_op = _op(
        "Resume a long operation",
        _json(_OBJ, "GradeResult"),
        400,
        404,
        requestBody=_body(
            {"type": "object", "properties": {"token": {"type": "string"}}, "required": ["token"]}
        ),
    )
    resume_op["responses"]["202"] = _json(_OBJ, "still running")
    bearer: list[dict[str, list[str]]] = [{"bearer": []}]
    return {
        "openapi": "3.1.0",
        "info": {"title": "Kestrel door", "version": "1"},
        "servers": [{"url": server_url}],
        "security": bearer,
        "paths": {
            "/v1/catalog": {"get": _op("The catalog", _json(_OBJ, "Catalog"))},
            "/v1/catalog/scenarios/{sid}": {
                "get": _op(
                    "One scenario",
                    _json(_OBJ, "Scenario"),
                    404,
                    parameters=_path_param("sid"),
                )
            },
            "/v1/catalog/scenarios/{sid}/tape": {
                "get": _op(
                    "A scenario's tape as CSV",
                    {"description": "CSV", "content": {"text/csv": {"schema": {"type": "string"}}}},
                    404,
                    parameters=_path_param("sid"),
                )
            },
            "/v1/validate": {
                "post": _op(
                    "Validate source",
                    _json(_OBJ, "ValidationReport"),
                    400,
                    404,
                    requestBody=_body(source_body),
                )
            },
            "/v1/sessions": {"post": open_op},
            "/v1/sessions/{id}/submit": {
                "post": _op(
                    "Submit statements",
                    _json(_OBJ, "SessionResponse"),
                    400,
                    404,
                    409,
                    422,
                    parameters=_path_param(),
                    requestBody={
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"source": {"type": "string"}},
                                    "required": ["source"],
                                }
                            },
                            "text/x-kestrel": {"schema": {"type": "string"}},
                        },
                    },
                )
            },
            "/v1/sessions/{id}/frame": {
                "get": _op("Latest frame", _json(_OBJ, "Delivery"), 404, parameters=_path_param())
            },
            "/v1/sessions/{id}/blotter": {
                "get": _op("Blotter", _json(_OBJ, "Blotter"), 404, parameters=_path_param())
            },
            "/v1/sessions/{id}/close": {
                "post": _op(
                    "Close", _json(_OBJ, "SessionRecord"), 404, 409, parameters=_path_param()
                )
            },
            "/v1/sessions/{id}/grade": {"post": grade_op},
            "/v1/operations/resume": {"post": resume_op},
            "/v1/artifacts/{root}": {
                "get": _op(
                    "Any stored object, verbatim",
                    _json(_OBJ, "the object"),
                    404,
                    parameters=_path_param("root"),
                )
            },
            "/v1/verify": {
                "post": _op(
                    "Verify a grade by replay",
                    _json(_OBJ, "VerificationReport"),
                    400,
                    404,
                    requestBody=_body(
                        {"type": "object", "properties": {"grade": _OBJ}, "required": ["grade"]}
                    ),
                )
            },
            "/v1/openapi.json": {"get": _op("This document", _json(_OBJ, "OpenAPI 3.1"))},
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "RefusalBody": {
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
                },
                "Offer": {
                    "type": "object",
                    "properties": {
                        "kind": {"const": "kestrel.offer"},
                        "offerId": {"type": "string"},
                        "scenario": {"type": "string"},
                        "amount": {"type": "string"},
                        "currency": {"type": "string"},
                        "description": {"type": "string"},
                        "expiresAt": {"type": "string"},
                        "accepts": {"type": "array", "items": {"type": "string"}},
                        "root": {"type": "string"},
                    },
                    "required": [
                        "kind",
                        "offerId",
                        "scenario",
                        "amount",
                        "currency",
                        "expiresAt",
                        "accepts",
                        "root",
                    ],
                },
            },
        },
    }
