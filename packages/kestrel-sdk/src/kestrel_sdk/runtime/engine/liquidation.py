"""Closing a session's book out at once: every open order cancelled, then every position
closed; a stand-down's liquidation at the clock bar's close, and a margin call's at the
next bar's open (see :mod:`.margin`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..lang.syntax import Order
from .account import Account
from .bus import Event, EventBus
from .cancels import Cancels
from .fill import slipped
from .orders import LiveOrder
from .scaled import NEVER, Terms

if TYPE_CHECKING:
    from .loop import BarLoop, Columns

__all__ = ["Liquidation", "margin_call_price"]


class Liquidation:
    """Closes one session's book out (the engine's lists, shared, not copied)."""

    def __init__(
        self,
        terms: Terms,
        symbols: Sequence[str],
        *,
        account: Account,
        orders: list[LiveOrder],
        open_orders: list[LiveOrder],
        bus: EventBus,
        loop: BarLoop,
        cancels: Cancels,
    ) -> None:
        self._terms = terms
        self._symbols = symbols
        self._account = account
        self._orders = orders
        self._open = open_orders
        self._bus = bus
        self._loop = loop
        self._cancels = cancels

    def stand_down(self, bar: int, seq: int, cols: Mapping[str, Columns]) -> None:
        """A stand-down's: cancel every open order and liquidate every position at bar
        ``bar``'s close as market orders (``reason: "stand-down"``), fees applying; the
        equity trace restated at ``bar``."""
        self._cancels.cancel_open(bar, "stand-down")
        closes = {symbol: columns[3][bar] for symbol, columns in cols.items()}
        self._close_positions(bar, seq, "stand-down", lambda symbol, _: closes[symbol])
        self._loop.trace.restate(bar, self._account.cash, self._account.holdings)

    def margin_call(self, bar: int, seq: int, cols: Mapping[str, Columns]) -> None:
        """After a margin call: cancel every open order and close every position at bar
        ``bar``'s open (slipped as a market order is), reason ``margin-call``."""
        self._cancels.cancel_open(bar, "margin-call")
        self._close_positions(bar, seq, "margin-call", margin_call_price(self._terms, cols, bar))

    def _close_positions(
        self, bar: int, seq: int, reason: str, price_of: Callable[[str, bool], int]
    ) -> None:
        """Close each position (in symbol order) by the market order a ``sell``/``buy``
        statement for the whole of it places, as order ``o{n}`` with ``reason``, booked
        at bar ``bar`` at ``price_of(symbol, buy)``, fees applying."""
        terms, orders = self._terms, self._orders
        for symbol in self._symbols:
            position = self._account.position(symbol)
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
            order = LiveOrder(
                f"o{len(orders) + 1}", statement, terms, seq=seq, bar=bar, expires=NEVER
            )
            order.reason = reason
            orders.append(order)
            self._open.append(order)
            self._bus.publish(Event("accepted", bar, order, qty, reason=reason))
            price = price_of(symbol, order.buy)
            self._loop.book(order, bar, qty, price, terms.fee(qty * price))


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
