"""The two MCP protocol eras and how one request declares which it speaks.

Legacy (2025-11-25 and older) negotiates once with ``initialize``; modern
(2026-07-28) carries its version and the client's capabilities in every request's
``_meta``. Kestrel serves both on one process without locking a connection to an era:
each request is judged by its own envelope, so a host may probe ``server/discover`` and
fall back to ``initialize`` (or the reverse) without tripping anything. The versions
and ``_meta`` keys are ``kestrel_protocol.mcp``'s (the door's ``/mcp`` shares them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kestrel_protocol.jsonrpc import INVALID_PARAMS, McpErrorCode
from kestrel_protocol.mcp import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    HANDSHAKE_VERSIONS,
    MODERN_REMOVED_METHODS,
    MODERN_VERSIONS,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    meta_of,
)

__all__ = [
    "CACHEABLE_METHODS",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "HANDSHAKE_VERSIONS",
    "HEADER_MISMATCH",
    "LATEST_HANDSHAKE_VERSION",
    "LATEST_MODERN_VERSION",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "MODERN_REMOVED_METHODS",
    "MODERN_VERSIONS",
    "PROTOCOL_VERSION_KEY",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND_LEGACY",
    "SERVER_INFO_KEY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "Envelope",
    "EnvelopeError",
    "negotiate_handshake",
    "read_envelope",
]

LATEST_HANDSHAKE_VERSION: Final = HANDSHAKE_VERSIONS[-1]
LATEST_MODERN_VERSION: Final = MODERN_VERSIONS[-1]

# MCP codes, single-sourced in kestrel_protocol. The 2026-07-28 schema allocates from
# -32020 upward; -32002 is the legacy "resource not found" that modern servers must no
# longer emit (SEP-2164: -32602 instead).
HEADER_MISMATCH: Final = McpErrorCode.HEADER_MISMATCH
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = McpErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
UNSUPPORTED_PROTOCOL_VERSION: Final = McpErrorCode.UNSUPPORTED_PROTOCOL_VERSION
RESOURCE_NOT_FOUND_LEGACY: Final = McpErrorCode.RESOURCE_NOT_FOUND
REQUEST_CANCELLED: Final = -32800
"""Only ever built for a request the client cancelled; the stdio loop never writes it."""

CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
"""2026-07-28 results of these methods must carry ``ttlMs`` and ``cacheScope``."""


@dataclass(frozen=True, slots=True)
class Envelope:
    """What a modern request declared about itself (``None`` for a legacy request)."""

    version: str
    capabilities: dict[str, Any]


class EnvelopeError(Exception):
    """A modern envelope that cannot be served; carries the JSON-RPC error to send."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def read_envelope(params: Any) -> Envelope | None:
    """The modern envelope of a request, ``None`` when it is a legacy request.

    A request is modern when its ``params._meta`` names a protocol version; such a
    request must also carry the client's capabilities, and the version must be one
    this server speaks.
    """
    meta = meta_of(params)
    if meta is None or PROTOCOL_VERSION_KEY not in meta:
        return None
    version = meta[PROTOCOL_VERSION_KEY]
    if not isinstance(version, str) or version not in MODERN_VERSIONS:
        raise EnvelopeError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(MODERN_VERSIONS), "requested": str(version)},
        )
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
    if not isinstance(capabilities, dict):
        raise EnvelopeError(
            INVALID_PARAMS,
            f"params._meta must carry {CLIENT_CAPABILITIES_KEY!r} (an object; {{}} for none)",
        )
    return Envelope(version, capabilities)


def negotiate_handshake(requested: Any) -> str:
    """What ``initialize`` answers: the requested version if supported, else the latest."""
    if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
        return requested
    return LATEST_HANDSHAKE_VERSION
