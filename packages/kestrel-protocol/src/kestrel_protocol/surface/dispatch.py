"""The one dispatcher: ``(transport, name, arguments)`` -> the MCP ``CallToolResult``.

Argument validation and refusal mapping happen here, once, for every face: an unknown
tool or arguments that do not fit raise :class:`~.results.ArgumentError`; a typed
refusal of the call is a result with ``isError: true``; anything else is an
unexpected fault and propagates. A result's text content is its JSON, or the compact
rendering its class declares (:mod:`.compact`) or its tool's own (``Tool.text``). A
result the transport answered as text (a :class:`~kestrel_protocol.wire.Wire`) keeps
that text as its JSON, spliced by every face, and is never built as an object.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from ..canonical import fast_compact_bytes
from ..errors import KestrelError
from ..model import ProtocolModel
from ..wire import Wire
from .compact import COMPACT_TEXT, compact_text
from .declare import Tool
from .results import ArgumentError, ToolResult, refusal_result, tool_result
from .surface import Surface

if TYPE_CHECKING:
    from ..ports import Transport

__all__ = ["call_tool", "run_tool"]


def call_tool(
    surface: Surface, transport: Transport, name: str, arguments: Any, *, listed: bool = False
) -> Coroutine[Any, Any, ToolResult]:
    """Run tool ``name`` with ``arguments`` (``None`` is ``{}``) through ``transport``:
    awaited, its result; an unknown tool or arguments that do not fit raise when called.

    ``listed`` refuses the tools ``tools/list`` does not show (an MCP ``tools/call``).
    The tool is found and its arguments checked here, and :func:`run_tool`'s coroutine
    returned to be awaited (no coroutine of its own around it: this is every call).
    """
    tool = surface.tool(name, listed=listed)
    return run_tool(tool, transport, tool.parse({} if arguments is None else arguments))


async def run_tool(tool: Tool, transport: Transport, args: Any) -> ToolResult:
    """Run ``tool`` with arguments its :meth:`~.declare.Tool.parse` already checked: the
    transport's ``invoke``, or a face's own tool's ``serve``."""
    try:
        if tool.serve is None:
            data: Any = await transport.invoke(tool, args)
        else:
            data = await tool.serve(args)
    except ArgumentError:
        raise
    except KestrelError as exc:
        return refusal_result(exc)
    if isinstance(data, Wire):  # its text as it is, spliced by every face; its data read
        structured = data.to_json()  # the wire's own: a response reads only its frame's text
        render = COMPACT_TEXT.get(data.cls) if tool.text is None else tool.text
        return ToolResult(
            structured,
            None if render is None else render(structured),
            encoded=data.text,
            float_free=True,  # a protocol object holds no float
        )
    if isinstance(data, ProtocolModel):  # its data, and its JSON text from that data
        structured = data.to_json()
        fast = fast_compact_bytes(structured)  # json's bytes: a protocol object holds no float
        return ToolResult(
            structured,
            compact_text(data, structured) if tool.text is None else tool.text(structured),
            encoded=data.to_json_text() if fast is None else fast.decode("utf-8"),
            utf8=fast,
            float_free=True,  # a protocol object holds no float
        )
    return tool_result(data, None if tool.text is None else tool.text(data))
