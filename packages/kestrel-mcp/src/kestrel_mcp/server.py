"""The MCP face as an in-process JSON-RPC 2.0 dispatcher, generated from the surface.

It holds no runtime semantics and names no tool: every method is the one MCP session
core's (:class:`~kestrel_protocol.surface.McpSession`, the same the door's ``/mcp``
serves) over the one dispatcher (``call_tool`` on the transport); this module adds
the face's own tools (the secret tools) and the framing of a raw stdio line.
Notifications of a request (progress, log messages) go to the ``send`` its caller
passes to ``handle``. Three failure shapes stay distinct so a caller can switch on
them: a protocol failure is a JSON-RPC ``error`` (bad arguments are -32602 with
``data.refusal`` ``INVALID_ARGUMENT``), a typed Kestrel refusal is a tool result with
``isError: true`` and ``structuredContent.refusal``, and a stand-down is an ordinary
result.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any, Final

import anyio
from kestrel_protocol.jsonrpc import JsonRpcProtocolError, decode_frame
from kestrel_protocol.mcp import server_info
from kestrel_protocol.ports import SecretStore, Transport
from kestrel_protocol.surface import (
    INSTRUCTIONS,
    SURFACE,
    McpSession,
    Recall,
    Send,
    Surface,
    call_tool,
)

from .secrets import SecretTools, secret_tools

__all__ = ["KestrelMcpServer", "create_kestrel_mcp_server"]

logger = logging.getLogger("kestrel_mcp")

SERVER_INFO: Final = server_info("kestrel-mcp", "kestrel", "Kestrel")


class KestrelMcpServer:
    """One MCP server over one transport. ``handle`` and ``handle_frame`` never raise."""

    def __init__(
        self,
        transport: Transport,
        *,
        secrets: bool = True,
        secret_store: Callable[[], SecretStore] | None = None,
        page_size: int = 100,
        surface: Surface = SURFACE,
    ) -> None:
        self.transport = transport
        # The secret tools are this face's own addition: local-only, never on the door.
        self.surface = surface.plus(secret_tools(SecretTools(secret_store))) if secrets else surface
        self.session = McpSession(
            self.surface,
            partial(call_tool, self.surface, transport),
            server_info=SERVER_INFO,
            instructions=INSTRUCTIONS,
            cancel_scope=anyio.CancelScope,
            sleep=anyio.sleep,
            validate=False,  # call_tool checks the arguments itself
            page_size=page_size,
            recall=Recall(),
            subscriptions=True,  # one client per process: it holds its subscriptions
        )
        self.capabilities = self.session.capabilities

    async def handle(self, message: Any, send: Send | None = None) -> dict[str, Any] | None:
        """Answer one decoded JSON-RPC message; a notification (or a response) yields ``None``.

        ``send`` writes the request's notifications (progress, log messages) before the
        response is returned; without it the request gets none.
        """
        return await self.session.handle(message, send)

    async def handle_frame(
        self, raw: str | bytes, send: Send | None = None
    ) -> dict[str, Any] | None:
        """Answer one raw frame (one stdio line); what is no JSON in UTF-8 is a parse error
        (-32700, :func:`~kestrel_protocol.jsonrpc.decode_frame`)."""
        try:
            data = decode_frame(raw)
        except JsonRpcProtocolError as unreadable:
            return unreadable.to_response().to_json()
        return await self.session.handle(data, send)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Run one listed tool and return its ``CallToolResult`` (as JSON data).

        Refusals are results (``isError: true``); an unknown tool or invalid arguments
        raise :class:`~kestrel_protocol.surface.RpcError` (-32602).
        """
        return await self.session.methods.tools_call({"name": name, "arguments": arguments})

    @property
    def tool_names(self) -> list[str]:
        """The listed tool names, in ``tools/list`` order."""
        return [tool.name for tool in self.surface.listed]


def create_kestrel_mcp_server(
    transport: Transport,
    *,
    secrets: bool = True,
    secret_store: Callable[[], SecretStore] | None = None,
    page_size: int = 100,
    surface: Surface = SURFACE,
) -> KestrelMcpServer:
    """Build the MCP face over a transport choice (``local_transport()`` or ``remote_transport``).

    ``secrets=False`` leaves out the three local-only secret tools; ``secret_store``
    replaces the operator store ``kestrel_secrets`` would open; ``surface`` is the tool
    and resource surface to serve (Kestrel's own by default).
    """
    return KestrelMcpServer(
        transport,
        secrets=secrets,
        secret_store=secret_store,
        page_size=page_size,
        surface=surface,
    )
