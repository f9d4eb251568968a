"""What an agent is told about Kestrel when it connects (MCP ``instructions``): the
workflow, the four statement kinds with the order's forms (from
:data:`kestrel_protocol.ORDER_FORMS`, as the catalog and the trading brief show them),
how to read news, and fair play."""

from __future__ import annotations

from typing import Final

from ..language import order_form_lines
from .briefs import news_lesson

__all__ = ["INSTRUCTIONS"]

_FORMS: Final = "\n".join(order_form_lines("    "))

INSTRUCTIONS: Final = f"""\
Kestrel is a deterministic paper-trading runtime: you trade a fixed tape of price bars, \
no real money, and every result is content-addressed so anyone can re-verify it.
Workflow: kestrel_catalog (pick a scenario) -> kestrel_validate (optional) -> \
kestrel_session_open {{scenario}} -> kestrel_session_submit {{sessionId, source}} as often as \
you like (each returns the new frame) -> kestrel_session_close -> kestrel_grade (if it returns \
a kestrel.operation, call kestrel_operation_resume with its token).
Source is one statement per line; exactly four kinds:
  order:      buy|sell QTY SYMBOL [market | limit P | stop P [limit P]] [tif day|gtc|ioc] [as alias]
  cancel:     cancel o1 | cancel alias | cancel all [SYMBOL]
  advance:    advance [N] | advance to 2024-03-01T15:30:00Z   (orders fill from the next bar)
  stand-down: stand down ["reason"]   (cancels orders, flattens positions, ends trading)
An order may also take these forms (ORDER is an order statement before tif and as):
{_FORMS}
A submit is atomic: any error diagnostic refuses the whole source (INVALID_SOURCE). \
A refusal comes back as a tool error whose structuredContent.refusal.code says why.
{news_lesson("kestrel_session_news", "newsInFrame (default 5)")} \
The session's news resource holds the same items.
Fair play: each frame carries the clock bar's OHLCV (bars) and kestrel_session_history \
{{sessionId, bars}} the bars up to the clock. Reading a scenario's tape (kestrel_tape or its \
tape resource) while trading it fails the grade's no-lookahead check; a sealed scenario's \
tape is refused.\
"""
"""What an agent is told about Kestrel when it connects (MCP ``instructions``)."""
