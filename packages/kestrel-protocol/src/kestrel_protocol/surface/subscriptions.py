"""Resource subscriptions of an MCP session (a part of :class:`.session.McpSession`):
``resources/subscribe`` and ``resources/unsubscribe``, and after each ``tools/call`` that
changed a subscribed resource, ``notifications/resources/updated`` before its response.
Only a session that keeps subscriptions (``subscriptions=True``: a face that holds a
session) serves them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..jsonrpc import INVALID_PARAMS
from ..mcp import Envelope
from .methods import McpMethods
from .notify import Notifier, Send
from .rpc import RpcError
from .surface import Surface

__all__ = ["SUBSCRIBING", "Subscriptions"]

SUBSCRIBING: Final = frozenset({"resources/subscribe", "resources/unsubscribe"})
"""Methods only a session that keeps subscriptions (``subscriptions=True``) serves."""


class Subscriptions:
    """The resources one session subscribed to, and their methods."""

    surface: Surface
    methods: McpMethods
    _subscribed: set[str]
    """The resources subscribed to (``subscriptions``: a face that holds a session)."""

    async def _subscribe(
        self, params: dict[str, Any], envelope: Envelope | None, out: Notifier
    ) -> dict[str, Any]:
        """``resources/subscribe``: a resource the caller can read (else not found),
        told of as ``notifications/resources/updated`` after each call that changes it."""
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, "resources/subscribe needs a string 'uri'")
        await self.methods.resources_read({"uri": uri}, modern=False)
        self._subscribed.add(uri)
        return {}

    async def _unsubscribe(
        self, params: dict[str, Any], envelope: Envelope | None, out: Notifier
    ) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, "resources/unsubscribe needs a string 'uri'")
        self._subscribed.discard(uri)
        return {}

    async def _tell_updated(
        self, params: dict[str, Any], result: Mapping[str, Any], send: Send
    ) -> None:
        """After a ``tools/call`` that succeeded: ``notifications/resources/updated`` for
        each subscribed resource it changed, before its response."""
        name, arguments = params.get("name"), params.get("arguments")
        if result.get("isError") or type(name) is not str or not isinstance(arguments, dict):
            return
        for uri in self.surface.updated(name, arguments, sorted(self._subscribed)):
            updated = {"jsonrpc": "2.0", "method": "notifications/resources/updated"}
            await send({**updated, "params": {"uri": uri}})
