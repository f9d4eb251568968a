"""The test double shipped beside the :class:`~kestrel_protocol.ports.Transport` port.

:class:`ScriptedTransport` answers every ``invoke`` with a script: a handler
``(tool, arguments) -> object`` (sync or async), as httpx ships ``MockTransport`` beside
its transport. A face (stdio MCP, the door) over a scripted transport runs exactly its
production path; only the runtime behind the port is the script's. :func:`runs_on`
makes a handler from an object with the runtime's methods: each tool runs that object's
method named by its :class:`~kestrel_protocol.surface.Binding`, passed what the runtime
would be passed, so a script stands in for the runtime without a transport of its own.

    transport = ScriptedTransport(runs_on(MyScript(), principal="alice"))
    server = create_kestrel_mcp_server(transport)
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from .model import ProtocolModel
from .surface.arguments import Arguments
from .surface.declare import Tool
from .wire import Wire

__all__ = ["Handler", "ScriptedTransport", "runs_on"]

Handler = Callable[
    [Tool, Arguments], "ProtocolModel | Wire[Any] | Awaitable[ProtocolModel | Wire[Any]]"
]
"""Answers one call: the tool and its checked arguments -> the result object (or raises a
``KestrelError`` for a refusal)."""


class ScriptedTransport:
    """A ``Transport`` whose answers a handler scripts; it records every call.

    ``calls`` holds ``(tool name, arguments)`` in order; ``closed`` says whether
    ``aclose`` ran. A handler that answers something other than a protocol object is a
    ``TypeError`` (the port's contract), as a transport's would be.
    """

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self.calls: list[tuple[str, Arguments]] = []
        self.closed = False

    def __repr__(self) -> str:
        return f"ScriptedTransport({self._handler!r})"

    async def invoke(self, tool: Tool, arguments: Arguments) -> ProtocolModel | Wire[Any]:
        self.calls.append((tool.name, arguments))
        answer = self._handler(tool, arguments)
        if inspect.isawaitable(answer):
            answer = await answer
        if not isinstance(answer, ProtocolModel):
            raise TypeError(f"the script answered {tool.name} with a {type(answer).__name__}")
        return answer

    async def aclose(self) -> None:
        self.closed = True


def runs_on(script: Any, principal: str = "local", *, reader: str | None = None) -> Handler:
    """A handler running each tool's binding on ``script`` as ``principal``: the method
    the binding names, passed what a runtime is passed (``reader`` for reads by root),
    its answer made the tool's result object. The method may be sync or async."""

    async def handler(tool: Tool, arguments: Arguments) -> ProtocolModel | Wire[Any]:
        binding = tool.runs
        if binding is None:
            raise TypeError(f"{tool.name} is a face's own tool: no runtime runs it")
        method = getattr(script, binding.method)
        found = method(**binding.keywords(principal, reader, arguments))
        if inspect.isawaitable(found):
            found = await found
        return binding.answer(found, arguments)

    return handler
