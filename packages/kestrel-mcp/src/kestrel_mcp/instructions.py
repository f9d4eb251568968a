"""What an agent is told about Kestrel when it connects (``instructions``)."""

from __future__ import annotations

__all__ = ["INSTRUCTIONS"]

INSTRUCTIONS = """\
Kestrel is a deterministic paper-trading runtime: you trade a fixed tape of price bars, \
no real money, and every result is content-addressed so anyone can re-verify it.
Workflow: kestrel_catalog (pick a scenario) -> kestrel_validate (optional) -> \
kestrel_session_open {scenario} -> kestrel_session_submit {sessionId, source} as often as you \
like (each returns the new frame) -> kestrel_session_close -> kestrel_grade (if it returns a \
kestrel.operation, call kestrel_operation_resume with its token).
Source is one statement per line; exactly four kinds:
  order:      buy|sell QTY SYMBOL [market | limit P | stop P [limit P]] [tif day|gtc|ioc] [as alias]
  cancel:     cancel o1 | cancel alias | cancel all [SYMBOL]
  advance:    advance [N] | advance to 2024-03-01T15:30:00Z   (orders fill from the next bar)
  stand-down: stand down ["reason"]   (cancels orders, flattens positions, ends trading)
A submit is atomic: any error diagnostic refuses the whole source (INVALID_SOURCE). \
A refusal comes back as a tool error whose structuredContent.refusal.code says why.\
"""
