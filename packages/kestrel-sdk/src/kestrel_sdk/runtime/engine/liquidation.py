"""Closing every position at once: a stand-down's liquidation at the clock bar's close,
and a margin call's at the next bar's open (see :mod:`.margin`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..lang.syntax import Order
from .account import Account
from .bus import Event, EventBus
from .fill import slipped
from .orders import LiveOrder
from .scaled import NEVER, Terms

if TYPE_CHECKING:
    from .loop import BarLoop, Columns

__all__ = ["close_positions", "margin_call_price"]


def close_positions(
    *,
    account: Account,
    symbols: Sequence[str],
    terms: Terms,
    orders: list[LiveOrder],
    open_orders: list[LiveOrder],
    bus: EventBus,
    loop: BarLoop,
    seq: int,
    bar: int,
    reason: str,
    price_of: Callable[[str, bool], int],
) -> None:
    """Close each position (in symbol order) by the market order a ``sell``/``buy``
    statement for the whole of it places, as order ``o{n}`` with ``reason``, booked at
    bar ``bar`` at ``price_of(symbol, buy)``, fees applying."""
    for symbol in symbols:
        position = account.position(symbol)
        if position == 0:
            continue
        qty = abs(position)
        statement = Order(
            line=0,
            side="sell" if position > 0 else "buy",
            qty=terms.shares(qty),
            symbol=symbol,
            type="market",
            limit=None,
            stop=None,
            tif="day",
            alias=None,
        )
        order = LiveOrder(f"o{len(orders) + 1}", statement, terms, seq=seq, bar=bar, expires=NEVER)
        order.reason = reason
        orders.append(order)
        open_orders.append(order)
        bus.publish(Event("accepted", bar, order, qty, reason=reason))
        price = price_of(symbol, order.buy)
        loop.book(order, bar, qty, price, terms.fee(qty * price))


def margin_call_price(
    terms: Terms, cols: Mapping[str, Columns], j: int
) -> Callable[[str, bool], int]:
    """A margin call's price of each position closed: bar ``j``'s open, slipped as a
    market order is."""

    def price_of(symbol: str, buy: bool) -> int:
        o, h, lo = cols[symbol][0][j], cols[symbol][1][j], cols[symbol][2][j]
        tick = terms.ticks[symbol]
        return slipped(buy, o, h, lo, slippage=terms.slippage, tick=tick)

    return price_of
