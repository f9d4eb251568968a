"""The four statement kinds, taught by example (the catalog lists them)."""

from __future__ import annotations

from kestrel_protocol import ORDER_FORMS, StatementKind

__all__ = ["STATEMENT_KINDS"]

STATEMENT_KINDS: tuple[StatementKind, ...] = (
    StatementKind(
        kind="order",
        syntax='("buy"|"sell") (QTY SYMBOL | SYMBOL "to" TARGET) [market | limit PRICE'
        " | stop PRICE [limit PRICE] | trail OFFSET] [take PRICE] [loss PRICE | loss trail"
        " OFFSET] [oco GROUP] [tif day|gtc|ioc] [as ALIAS]",
        example="buy 10 ACME limit 101.25 tif gtc as entry",
        summary="Place an order; it is eligible from the next bar. Defaults: market, tif day.",
        forms=list(ORDER_FORMS),
    ),
    StatementKind(
        kind="cancel",
        syntax='"cancel" (ORDER_REF | "all" [SYMBOL])',
        example="cancel entry",
        summary="Cancel one open order by id (o1, o2, ...) or alias, or all open orders.",
    ),
    StatementKind(
        kind="advance",
        syntax='"advance" [COUNT] | "advance" "to" TIMESTAMP',
        example="advance 5",
        summary="Process the next COUNT bars (default 1), or up to a UTC timestamp.",
    ),
    StatementKind(
        kind="stand-down",
        syntax='"stand" "down" [QUOTED_REASON]',
        example='stand down "done for the day"',
        summary="Cancel every open order, flatten every position at the marks, and stop.",
    ),
)
