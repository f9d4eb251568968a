"""JSON-RPC 2.0 messages and the MCP error codes of both protocol eras.

The parser is hand-written on plain data (not pydantic) because it sits on the MCP
hot path and because its job is to *classify* arbitrary input precisely: a message
with an ``id`` member is a request (``id: null`` is invalid), one without is a
notification, and anything else is an invalid request with a reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from .canonical import DECLINED, fast_loads

__all__ = [
    "BATCH_REFUSED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "JsonRpcError",
    "JsonRpcErrorResponse",
    "JsonRpcMessage",
    "JsonRpcNotification",
    "JsonRpcProtocolError",
    "JsonRpcRequest",
    "JsonRpcResponse",
    "JsonRpcResult",
    "McpErrorCode",
    "RequestId",
    "decode_frame",
    "error_response",
    "parse_message",
    "parse_message_text",
    "readable_id",
]

RequestId = str | int

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

BATCH_REFUSED: Final = "batch arrays are not supported"
"""A batch's refusal (-32600) wherever one is not taken: MCP from 2025-06-18 sends none."""


class McpErrorCode:
    """MCP-defined codes beyond JSON-RPC's own, per protocol era (see docs/mcp-eras.md).

    2025-11-25 (and older): ``RESOURCE_NOT_FOUND`` (-32002, ``data: {"uri"}``) and
    ``URL_ELICITATION_REQUIRED`` (-32042). 2026-07-28 MUST NOT emit those two (an unknown
    resource is ``INVALID_PARAMS``, SEP-2164) and allocates its own from -32020 upward:
    ``HEADER_MISMATCH`` (-32020), ``MISSING_REQUIRED_CLIENT_CAPABILITY`` (-32021, ``data:
    {"requiredCapabilities"}``) and ``UNSUPPORTED_PROTOCOL_VERSION`` (-32022, ``data:
    {"supported", "requested"}``). (Drafts of 2026-07-28 used -32001/-32003/-32004.)
    """

    # 2025-11-25 and older
    RESOURCE_NOT_FOUND: Final = -32002
    URL_ELICITATION_REQUIRED: Final = -32042
    # 2026-07-28
    HEADER_MISMATCH: Final = -32020
    MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
    UNSUPPORTED_PROTOCOL_VERSION: Final = -32022


@dataclass(frozen=True, slots=True)
class JsonRpcError:
    """The ``error`` member of an error response."""

    code: int
    message: str
    data: Any = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


@dataclass(frozen=True, slots=True)
class JsonRpcRequest:
    """A call that expects exactly one response carrying the same ``id``."""

    id: RequestId
    method: str
    params: dict[str, Any] | list[Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"jsonrpc": "2.0", "id": self.id, "method": self.method}
        if self.params is not None:
            out["params"] = self.params
        return out


@dataclass(frozen=True, slots=True)
class JsonRpcNotification:
    """A message with no ``id`` member: it never gets a response."""

    method: str
    params: dict[str, Any] | list[Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"jsonrpc": "2.0", "method": self.method}
        if self.params is not None:
            out["params"] = self.params
        return out


@dataclass(frozen=True, slots=True)
class JsonRpcResult:
    """A successful response."""

    id: RequestId
    result: Any = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.id, "result": self.result}


@dataclass(frozen=True, slots=True)
class JsonRpcErrorResponse:
    """A failed response; ``id`` is ``None`` only when the request's id was unreadable."""

    id: RequestId | None
    error: JsonRpcError

    def to_json(self) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.id, "error": self.error.to_json()}


JsonRpcResponse = JsonRpcResult | JsonRpcErrorResponse
JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResult | JsonRpcErrorResponse


class JsonRpcProtocolError(ValueError):
    """Input that is not a valid JSON-RPC message; carries the code and any readable id."""

    def __init__(self, code: int, message: str, request_id: RequestId | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id

    def to_response(self) -> JsonRpcErrorResponse:
        return JsonRpcErrorResponse(self.request_id, JsonRpcError(self.code, self.message))


def error_response(
    request_id: RequestId | None, code: int, message: str, data: Any = None
) -> JsonRpcErrorResponse:
    """Build an error response."""
    return JsonRpcErrorResponse(request_id, JsonRpcError(code, message, data))


def _valid_id(value: Any) -> bool:
    return (isinstance(value, (str, int))) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    """An unusable ``id`` as a refusal names it: a scalar as its JSON, a container by kind."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return json.dumps(value)


def readable_id(message: Any) -> RequestId | None:
    """A message's ``id`` when it is one an error response may echo (a string or an
    integer, not a boolean), else ``None``; for answering input that failed to parse."""
    value = message.get("id") if isinstance(message, dict) else None
    return value if _valid_id(value) else None


def parse_message(data: Any) -> JsonRpcMessage:
    """Classify decoded JSON as one JSON-RPC 2.0 message, or raise with a precise reason.

    Batches (arrays) are refused: MCP since 2025-06-18 does not use them.
    """
    if isinstance(data, list):
        raise JsonRpcProtocolError(INVALID_REQUEST, BATCH_REFUSED)
    if not isinstance(data, dict):
        raise JsonRpcProtocolError(INVALID_REQUEST, "a message must be a JSON object")
    has_id = "id" in data
    raw_id = data.get("id")
    request_id: RequestId | None = raw_id if has_id and _valid_id(raw_id) else None
    if data.get("jsonrpc") != "2.0":
        raise JsonRpcProtocolError(INVALID_REQUEST, 'member "jsonrpc" must be "2.0"', request_id)
    is_error_response = "error" in data and "method" not in data
    # ``id: null`` is valid in one place only: an error response to an unreadable request.
    if has_id and not _valid_id(raw_id) and not (is_error_response and raw_id is None):
        raise JsonRpcProtocolError(
            INVALID_REQUEST, f'member "id" must be a string or an integer, not {_shown(raw_id)}'
        )
    if "method" in data:
        method = data["method"]
        if not isinstance(method, str) or not method:
            raise JsonRpcProtocolError(
                INVALID_REQUEST, 'member "method" must be a non-empty string', request_id
            )
        params = data.get("params")
        if "params" in data and not isinstance(params, dict | list):
            raise JsonRpcProtocolError(
                INVALID_REQUEST, 'member "params" must be an object or an array', request_id
            )
        if request_id is None:
            return JsonRpcNotification(method, params)
        return JsonRpcRequest(request_id, method, params)
    if request_id is not None and "result" in data and "error" not in data:
        return JsonRpcResult(request_id, data["result"])
    if is_error_response and has_id and "result" not in data and isinstance(data["error"], dict):
        err = data["error"]
        code, message = err.get("code"), err.get("message")
        if isinstance(code, int) and not isinstance(code, bool) and isinstance(message, str):
            rid = raw_id if _valid_id(raw_id) else None
            return JsonRpcErrorResponse(rid, JsonRpcError(code, message, err.get("data")))
    raise JsonRpcProtocolError(
        INVALID_REQUEST, "not a request, notification or response", request_id
    )


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


_DECODER: Final = json.JSONDecoder(parse_constant=_refuse_constant)
"""Built once: ``json.loads`` with a keyword builds a new decoder on every call."""


def decode_frame(raw: str | bytes) -> Any:
    """The JSON value of one frame (a stdio line, an HTTP body), read alike by every MCP
    face: UTF-8 (no other encoding, no byte order mark, no lone surrogate's bytes)
    holding one JSON value (``NaN`` and ``Infinity`` are not JSON). Anything else is
    a parse error (-32700) saying which: ``invalid UTF-8`` or ``invalid JSON``. orjson
    reads it first when the ``fast`` extra is installed (:func:`~.canonical.fast_loads`)."""
    data = fast_loads(raw) if type(raw) is bytes else DECLINED
    if data is not DECLINED:
        return data
    try:  # what orjson leaves to json, and every error
        text = raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else raw
        return _DECODER.decode(text)
    except (ValueError, RecursionError) as exc:
        reason = "invalid UTF-8" if isinstance(exc, UnicodeDecodeError) else "invalid JSON"
        raise JsonRpcProtocolError(PARSE_ERROR, f"Parse error: {reason}") from None


def parse_message_text(raw: str | bytes) -> JsonRpcMessage:
    """Decode one frame (:func:`decode_frame`) and classify it."""
    return parse_message(decode_frame(raw))
