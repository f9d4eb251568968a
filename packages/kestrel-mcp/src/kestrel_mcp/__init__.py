"""Kestrel MCP: the MCP face, a lossless projection of the Kestrel SDK for every MCP host."""

from __future__ import annotations

from .server import KestrelMcpServer, create_kestrel_mcp_server
from .stdio import serve_stdio
from .stdio_io import MAX_LINE_BYTES

__all__ = [
    "MAX_LINE_BYTES",
    "KestrelMcpServer",
    "create_kestrel_mcp_server",
    "serve_stdio",
]
