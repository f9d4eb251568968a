"""A minimal MCP protocol handler the door falls back on when none is injected.

The full MCP face (resources, completion, output schemas) is ``kestrel_mcp``'s, wired by
the composition root. This covers what a client needs to call tools through the door on
its own: the handshake of both eras, ``ping``, and ``tools/list``. ``tools/call`` never
reaches a handler: the door routes it to the caller's ``TurnTools``.
"""

from __future__ import annotations

from typing import Any, Final

from kestrel_protocol.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, error_response
from kestrel_protocol.mcp import (
    HANDSHAKE_VERSIONS,
    MODERN_REMOVED_METHODS,
    MODERN_VERSIONS,
    SERVER_INFO_KEY,
    declares_modern,
)

from .tools import DOOR_TOOL_NAMES

__all__ = [
    "HANDSHAKE_VERSIONS",
    "MODERN_VERSIONS",
    "BasicMcpHandler",
    "tool_definitions",
]

_STR: Final = {"type": "string"}
_SESSION: Final = {
    "type": "object",
    "properties": {"sessionId": _STR},
    "required": ["sessionId"],
    "additionalProperties": False,
}
_SCHEMAS: Final[dict[str, tuple[str, dict[str, Any]]]] = {
    "kestrel_catalog": (
        "The scenario catalog and the four statement kinds.",
        {"type": "object", "properties": {}, "additionalProperties": False},
    ),
    "kestrel_validate": (
        "Check Kestrel source without running it.",
        {
            "type": "object",
            "properties": {"source": _STR, "scenario": _STR},
            "required": ["source"],
            "additionalProperties": False,
        },
    ),
    "kestrel_session_open": (
        "Open a paper-trading session on a scenario; a gated open returns an Offer.",
        {
            "type": "object",
            "properties": {
                "scenario": _STR,
                "label": _STR,
                "payment": {
                    "type": "object",
                    "properties": {"offerId": _STR, "voucher": _STR},
                    "required": ["offerId", "voucher"],
                },
            },
            "required": ["scenario"],
            "additionalProperties": False,
        },
    ),
    "kestrel_session_submit": (
        "Submit Kestrel statements to a session; returns the new frame.",
        {
            "type": "object",
            "properties": {"sessionId": _STR, "source": _STR},
            "required": ["sessionId", "source"],
            "additionalProperties": False,
        },
    ),
    "kestrel_session_frame": ("The session's latest frame.", _SESSION),
    "kestrel_session_blotter": ("Every order and fill of the session.", _SESSION),
    "kestrel_session_close": ("Close the session; returns its record.", _SESSION),
    "kestrel_grade": ("Grade a closed session.", _SESSION),
    "kestrel_operation_resume": (
        "Resume a long operation by its token.",
        {
            "type": "object",
            "properties": {"token": _STR},
            "required": ["token"],
            "additionalProperties": False,
        },
    ),
}


def tool_definitions() -> list[dict[str, Any]]:
    return [
        {"name": name, "description": _SCHEMAS[name][0], "inputSchema": _SCHEMAS[name][1]}
        for name in DOOR_TOOL_NAMES
    ]


class BasicMcpHandler:
    """``handle(message) -> response | None`` over plain JSON-RPC dicts."""

    server_info: Final = {"name": "kestrel-door", "version": "0.1.0"}
    instructions: Final = (
        "Kestrel is paper trading on fixed tapes. Open a session on a catalog scenario, "
        "submit statements (order, cancel, advance, stand-down), read the frame, close, grade."
    )

    async def handle(self, message: Any) -> Any:
        if not isinstance(message, dict) or "id" not in message:
            return None
        rid = message["id"]
        method = message.get("method")
        params = message.get("params") or {}
        modern = declares_modern(params)
        extra: dict[str, Any] = {"resultType": "complete"} if modern else {}
        if modern and method in MODERN_REMOVED_METHODS:
            message_text = f"{method} is not part of the 2026-07-28 protocol"
            return error_response(rid, METHOD_NOT_FOUND, message_text).to_json()
        if method == "initialize":
            asked = params.get("protocolVersion") if isinstance(params, dict) else None
            version = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
            result: dict[str, Any] = {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": self.server_info,
                "instructions": self.instructions,
            }
        elif method == "server/discover":
            result = {
                "supportedVersions": [*MODERN_VERSIONS, *reversed(HANDSHAKE_VERSIONS)],
                "capabilities": {"tools": {"listChanged": False}},
                "instructions": self.instructions,
                "cacheScope": "public",
                "ttlMs": 0,
                "resultType": "complete",
                "_meta": {SERVER_INFO_KEY: self.server_info},
            }
        elif method == "ping":
            result = {**extra}
        elif method == "tools/list":
            result = {"tools": tool_definitions(), **extra}
            if modern:
                result.update({"ttlMs": 0, "cacheScope": "public"})
        elif method in {"resources/list", "resources/templates/list"}:
            key = "resources" if method == "resources/list" else "resourceTemplates"
            result = {key: [], **extra}
        elif isinstance(method, str):
            return error_response(rid, METHOD_NOT_FOUND, f"{method} is not served").to_json()
        else:
            return error_response(rid, INVALID_PARAMS, "no method").to_json()
        return {"jsonrpc": "2.0", "id": rid, "result": result}
