"""The MCP protocol eras' names, shared by every face that speaks MCP.

``kestrel_mcp`` (stdio) and ``kestrel_door``'s ``/mcp`` (Streamable HTTP) must agree on
which versions each era negotiates and on the ``_meta`` keys a 2026-07-28 request
declares itself with; the door may not import ``kestrel_mcp``, so the one copy lives
here. Legacy (2025-11-25 and older) negotiates once with ``initialize``; modern
(2026-07-28) carries its version and the client's capabilities in every request's
``_meta``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "HANDSHAKE_VERSIONS",
    "MODERN_REMOVED_METHODS",
    "MODERN_VERSIONS",
    "PROTOCOL_VERSION_KEY",
    "SERVER_INFO_KEY",
    "declares_modern",
    "meta_of",
]

HANDSHAKE_VERSIONS: Final[tuple[str, ...]] = (
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
)
"""Versions ``initialize`` negotiates, oldest first (the last is the latest)."""

MODERN_VERSIONS: Final[tuple[str, ...]] = ("2026-07-28",)
"""Versions declared per request in ``params._meta`` (no handshake)."""

PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"

MODERN_REMOVED_METHODS: Final = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)
"""Methods 2026-07-28 removed: a request for one carrying the modern envelope is an
unknown method (-32601), as the conformance suite checks. Without the envelope they are
legacy requests and are served."""


def meta_of(params: Any) -> Mapping[str, Any] | None:
    """A request's ``params._meta`` when both are objects, else ``None``."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    return meta if isinstance(meta, Mapping) else None


def declares_modern(params: Any) -> bool:
    """Whether a request's ``params._meta`` names a 2026-07-28 protocol version."""
    meta = meta_of(params)
    return meta is not None and meta.get(PROTOCOL_VERSION_KEY) in MODERN_VERSIONS
