"""The order forms of the Kestrel language as agents are taught them, said once.

The ``order`` statement kind takes these forms beyond a plain order (docs/spec.md §3).
The catalog's ``statementKinds`` lists them under ``order``, the MCP ``instructions`` and
the trading brief show them, and the language's parser takes each example as the
statement it reads (``kestrel_sdk.runtime.lang.FORM_EXAMPLES`` is built from these), so
a change to the grammar that breaks an example fails its tests before an agent sees it.
"""

from __future__ import annotations

from typing import Final

from .objects import OrderForm

__all__ = ["ORDER_FORMS", "order_form_lines"]

ORDER_FORMS: Final[tuple[OrderForm, ...]] = (
    OrderForm(
        form="bracket",
        syntax="ORDER take PRICE loss PRICE",
        example="buy 10 ACME limit 1.00 take 2.00 loss 0.50 tif gtc",
        summary="an entry with its take-profit and stop-loss, held until the entry fills; "
        "the first of the two to fill cancels the other",
    ),
    OrderForm(
        form="bracket-trailing",
        syntax="ORDER take PRICE loss trail (PRICE | PERCENT)",
        example="buy 10 ACME limit 1.00 take 2.00 loss trail 5% tif gtc",
        summary="a bracket whose stop-loss trails the closes from the entry's fill price",
    ),
    OrderForm(
        form="oco",
        syntax="ORDER oco GROUP",
        example="sell 10 ACME limit 500.00 oco exits tif gtc",
        summary="one-cancels-other: the first fill of an order of GROUP cancels the others",
    ),
    OrderForm(
        form="trail-price",
        syntax="(buy|sell) QTY SYMBOL trail PRICE",
        example="sell 10 ACME trail 2.50 tif gtc",
        summary="a trailing stop PRICE from the best close since it was placed; never eases",
    ),
    OrderForm(
        form="trail-percent",
        syntax="(buy|sell) QTY SYMBOL trail PERCENT",
        example="sell 10 ACME trail 5% tif gtc",
        summary="a trailing stop PERCENT (above 0, under 100) from the best close",
    ),
    OrderForm(
        form="target-position",
        syntax="(buy|sell) SYMBOL to POSITION [market | limit PRICE]",
        example="buy ACME to 50",
        summary="trade to a position (0 flattens, -20 is short 20) on the statement's side "
        "only, its quantity fixed from the clock bar's close",
    ),
    OrderForm(
        form="target-weight",
        syntax="(buy|sell) SYMBOL to PERCENT [market | limit PRICE]",
        example="buy ACME to 10%",
        summary="trade to a weight of equity (0% to 100%) on the statement's side only",
    ),
)
"""Every order form, one compact line each: its syntax, an example valid on any scenario
trading ACME at a cent tick (the shipped acme-trend), and what it does."""


def order_form_lines(indent: str = "") -> list[str]:
    """One line per order form: ``form: syntax  (e.g. example) - summary``."""
    return [f"{indent}{f.form}: {f.syntax}  (e.g. {f.example}) - {f.summary}" for f in ORDER_FORMS]
