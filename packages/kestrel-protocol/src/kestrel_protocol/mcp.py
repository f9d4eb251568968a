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
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

from .jsonrpc import INVALID_PARAMS, McpErrorCode

__all__ = [
    "CACHE_HINTS",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "HANDSHAKE_VERSIONS",
    "MODERN_REMOVED_METHODS",
    "MODERN_VERSIONS",
    "PROTOCOL_VERSION_KEY",
    "REQUEST_CANCELLED",
    "SERVER_INFO_KEY",
    "SUPPORTED_VERSIONS",
    "Envelope",
    "EnvelopeError",
    "declares_modern",
    "decorate_modern",
    "meta_of",
    "negotiate_handshake",
    "read_envelope",
    "server_info",
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

SUPPORTED_VERSIONS: Final[tuple[str, ...]] = (*MODERN_VERSIONS, *reversed(HANDSHAKE_VERSIONS))
"""Every version served, newest first (``server/discover``'s ``supportedVersions``)."""

REQUEST_CANCELLED: Final = -32800
"""Only ever built for a request the client cancelled."""

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


CACHE_HINTS: Final[Mapping[str, tuple[int, str]]] = {
    "server/discover": (3_600_000, "public"),
    "tools/list": (3_600_000, "public"),
    "prompts/list": (3_600_000, "public"),
    "resources/templates/list": (3_600_000, "public"),
    "resources/list": (60_000, "private"),
    "resources/read": (60_000, "private"),
}
"""2026-07-28 results of these methods carry ``ttlMs`` and ``cacheScope``. Lists of tools
and templates are fixed for the life of a process and the same for everyone; the catalog
and the artifacts may be one principal's, so they are private."""


def decorate_modern(
    method: str, result: dict[str, Any], server_info: Mapping[str, Any]
) -> dict[str, Any]:
    """A result as 2026-07-28 sends it: ``resultType``, cache hints, ``_meta`` serverInfo."""
    result["resultType"] = "complete"
    hint = CACHE_HINTS.get(method)
    if hint is not None:
        result["ttlMs"], result["cacheScope"] = hint
    meta = result.get("_meta")
    info = {SERVER_INFO_KEY: dict(server_info)}
    result["_meta"] = {**meta, **info} if isinstance(meta, dict) else info
    return result


def meta_of(params: Any) -> Mapping[str, Any] | None:
    """A request's ``params._meta`` when both are objects, else ``None``."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    return meta if isinstance(meta, Mapping) else None


def declares_modern(params: Any) -> bool:
    """Whether a request's ``params._meta`` names a 2026-07-28 protocol version."""
    meta = meta_of(params)
    return meta is not None and meta.get(PROTOCOL_VERSION_KEY) in MODERN_VERSIONS


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
    this server speaks. Each request is judged by its own envelope, so a host may probe
    ``server/discover`` and fall back to ``initialize`` (or the reverse).
    """
    meta = meta_of(params)
    if meta is None or PROTOCOL_VERSION_KEY not in meta:
        return None
    version = meta[PROTOCOL_VERSION_KEY]
    if not isinstance(version, str) or version not in MODERN_VERSIONS:
        raise EnvelopeError(
            McpErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
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
    return HANDSHAKE_VERSIONS[-1]


def server_info(distribution: str, name: str, title: str) -> dict[str, str]:
    """A face's MCP ``serverInfo``: its name, title and its distribution's version."""
    try:
        found = version(distribution)
    except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        found = "0.0.0"
    return {"name": name, "title": title, "version": found}
