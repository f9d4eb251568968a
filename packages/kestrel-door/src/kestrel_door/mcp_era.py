"""What a 2026-07-28 request to ``/mcp`` must carry, beyond a legacy one.

The per-request envelope (the protocol version and client capabilities in
``params._meta``) and routing headers that agree with the body
(``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, each present once; a non-ASCII
name in the ``=?base64?…?=`` form). Its errors are answered with the HTTP statuses of
:data:`MODERN_STATUS`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any, Final

from kestrel_protocol.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    McpErrorCode,
)
from kestrel_protocol.mcp import (
    CLIENT_CAPABILITIES_KEY,
    PROTOCOL_VERSION_KEY,
    declares_modern,
    meta_of,
)
from starlette.requests import Request

__all__ = ["MODERN_STATUS", "envelope_missing", "header_mismatch", "modern_envelope"]

_NAME_PARAM: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_B64_SENTINEL: Final = re.compile(r"=\?base64\?(.*)\?=")
_ROUTING: Final = ("mcp-protocol-version", "mcp-method", "mcp-name")
MODERN_STATUS: Final = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    McpErrorCode.HEADER_MISMATCH: 400,
    McpErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    McpErrorCode.UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
"""The HTTP status of a 2026-07-28 error response, by its JSON-RPC code (else 200)."""


def _decode_header(value: str | None) -> str | None:
    """A header value, with the ``=?base64?…?=`` form (non-ASCII values) decoded.

    A malformed or non-canonical encoding decodes to ``None`` so it never matches.
    """
    if value is None:
        return None
    found = _B64_SENTINEL.fullmatch(value)
    if found is None:
        return value
    payload = found.group(1)
    try:
        raw = base64.b64decode(payload, validate=True)
        if base64.b64encode(raw).decode("ascii") != payload:
            return None
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def modern_envelope(message: Any) -> bool:
    """Whether a message carries the 2026-07-28 per-request envelope."""
    if not isinstance(message, dict) or message.get("method") == "initialize":
        return False
    return declares_modern(message.get("params"))


def envelope_missing(message: Mapping[str, Any]) -> str | None:
    """Why a 2026-07-28 request lacks its per-request envelope, or ``None``."""
    meta = meta_of(message.get("params"))
    if meta is None:
        return "params._meta must carry the protocol version and client capabilities"
    missing = [k for k in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if k not in meta]
    if missing:
        return f"params._meta is missing {', '.join(missing)}"
    return None


def header_mismatch(request: Request, message: Mapping[str, Any]) -> str | None:
    """Why a 2026-07-28 request disagrees with its routing headers, or ``None``."""
    for name in _ROUTING:
        if len(request.headers.getlist(name)) > 1:
            return f"{name} header appears more than once"
    params = message.get("params")
    meta = meta_of(params)
    if (
        meta is not None
        and PROTOCOL_VERSION_KEY in meta
        and meta[PROTOCOL_VERSION_KEY] != request.headers.get("mcp-protocol-version")
    ):
        return "mcp-protocol-version header does not match params._meta"
    method = message.get("method")
    if request.headers.get("mcp-method") != method:
        return "mcp-method header does not match the request body's method"
    key = _NAME_PARAM.get(str(method))
    if (
        key is not None
        and isinstance(params, Mapping)
        and params.get(key) is not None
        and _decode_header(request.headers.get("mcp-name")) != params.get(key)
    ):
        return f"mcp-name header does not match the request body's {key!r}"
    return None
