"""What an agent is told about Kestrel when it connects (MCP ``instructions``), naming
each tool by the method it runs (:class:`.tool_names.ToolNames`): the registry spells
the names, and :data:`~.registry.INSTRUCTIONS` is :func:`instructions` of its tools."""

from __future__ import annotations

from typing import Final

from ..language import order_form_lines
from .briefs import news_lesson
from .tool_names import ToolNames

__all__ = ["instructions"]

_FORMS: Final = "\n".join(order_form_lines("    "))


def instructions(_tool: ToolNames) -> str:
    """What an agent is told about Kestrel when it connects (MCP ``instructions``): the
    workflow, the four statement kinds with the order's forms (from
    :data:`kestrel_protocol.ORDER_FORMS`, as the catalog and the trading brief show them),
    how to read news, and fair play."""
    return f"""\
Kestrel is a deterministic paper-trading runtime: you trade a fixed tape of price bars, \
no real money, and every result is content-addressed so anyone can re-verify it.
Workflow: {_tool("catalog")} (pick a scenario) -> {_tool("validate")} (optional) -> \
{_tool("open_session")} {{scenario}} -> {_tool("submit")} {{sessionId, source}} as often as \
you like (each returns the new frame) -> {_tool("close")} -> {_tool("grade")} (if it returns \
a kestrel.operation, call {_tool("resume")} with its token).
Source is one statement per line; exactly four kinds:
  order:      buy|sell QTY SYMBOL [market | limit P | stop P [limit P]] [tif day|gtc|ioc] [as alias]
  cancel:     cancel o1 | cancel alias | cancel all [SYMBOL]
  advance:    advance [N] | advance to 2024-03-01T15:30:00Z   (orders fill from the next bar)
  stand-down: stand down ["reason"]   (cancels orders, flattens positions, ends trading)
An order may also take these forms (ORDER is an order statement before tif and as):
{_FORMS}
A submit is atomic: any error diagnostic refuses the whole source (INVALID_SOURCE). \
A refusal comes back as a tool error whose structuredContent.refusal.code says why.
{news_lesson(_tool("news"), "newsInFrame (default 5)")} \
The session's news resource holds the same items.
Fair play: each frame carries the clock bar's OHLCV (bars) and {_tool("history")} \
{{sessionId, bars}} the bars up to the clock. Reading a scenario's tape ({_tool("tape")} or its \
tape resource) while trading it fails the grade's no-lookahead check; a sealed scenario's \
tape is refused.\
"""
