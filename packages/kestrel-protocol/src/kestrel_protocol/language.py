"""The order forms of the Kestrel language as agents are taught them, said once.

The ``order`` statement kind takes these forms beyond a plain order (docs/spec.md §3).
The catalog's ``statementKinds`` lists them under ``order``, the MCP ``instructions`` and
the trading brief show them, and the language's parser takes each example as the
statement it reads (``kestrel_sdk.runtime.lang.FORM_EXAMPLES`` is built from these), so
a change to the grammar that breaks an example fails its tests before an agent sees it.
"""

from __future__ import annotations

from typing import Final

from .objects.catalog import OrderForm

__all__ = ["ORDER_FORMS", "order_form_lines"]

ORDER_FORMS: Final[tuple[OrderForm, ...]] = (
    OrderForm(
        form="bracket",
        syntax="ORDER take PRICE loss PRICE",
        example="buy 10 ACME limit 1.00 take 2.00 loss 0.50 tif gtc",
        summary="an entry with its take-profit and stop-loss: they wait for its fill, then "
        "the first to fill cancels the other",
    ),
    OrderForm(
        form="bracket-trailing",
        syntax="ORDER take PRICE loss trail (PRICE | PERCENT)",
        example="buy 10 ACME limit 1.00 take 2.00 loss trail 5% tif gtc",
        summary="the stop-loss trails the closes from the entry's fill",
    ),
    OrderForm(
        form="oco",
        syntax="ORDER oco GROUP",
        example="sell 10 ACME limit 500.00 oco exits tif gtc",
        summary="the first fill in GROUP cancels the group's other orders",
    ),
    OrderForm(
        form="trail-price",
        syntax="(buy|sell) QTY SYMBOL trail PRICE",
        example="sell 10 ACME trail 2.50 tif gtc",
        summary="a stop PRICE from the best close since placed; it never eases",
    ),
    OrderForm(
        form="trail-percent",
        syntax="(buy|sell) QTY SYMBOL trail PERCENT",
        example="sell 10 ACME trail 5% tif gtc",
        summary="a stop PERCENT (above 0, under 100) from the best close",
    ),
    OrderForm(
        form="target-position",
        syntax="(buy|sell) SYMBOL to POSITION [market | limit PRICE]",
        example="buy ACME to 50",
        summary="trade on its side to a position (0 flat, -20 short), sized at the clock "
        "bar's close",
    ),
    OrderForm(
        form="target-weight",
        syntax="(buy|sell) SYMBOL to PERCENT [market | limit PRICE]",
        example="buy ACME to 10%",
        summary="trade on its side to a weight of equity, 0% to 100%",
    ),
)
"""Every order form, one compact line each: its syntax, an example valid on any scenario
trading ACME at a cent tick (the shipped acme-trend), and what it does."""


def order_form_lines(indent: str = "") -> list[str]:
    """One line per order form: ``form: syntax  (e.g. example) - summary``."""
    return [f"{indent}{f.form}: {f.syntax}  (e.g. {f.example}) - {f.summary}" for f in ORDER_FORMS]
