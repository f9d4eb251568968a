"""The bar loop: matching, fills and marking to market between two clock positions
(docs/spec.md §5).

Event-driven: the loop asks each open order for the next bar at which it can act (a
cached scan of the tape columns) and skips the bars in between in bulk, so a resting
order costs nothing per bar and a flat, idle account costs nothing at all. Exact
integers throughout; every change is published on the session's bus.
"""

from __future__ import annotations

import weakref
from array import array
from bisect import bisect_right
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..catalog.model import LoadedScenario
from .account import Account
from .bus import Event, EventBus
from .equity import EquityTrace
from .fill import match_price, trigger_search
from .margin import MarginRules, closes_at
from .orders import WORKING, Fill, LiveOrder
from .scaled import Terms
from .trailing import follow, trail_search

__all__ = ["BarLoop", "columns"]

if TYPE_CHECKING:
    Columns = tuple[array[int], array[int], array[int], array[int], array[int]]
    """A symbol's open, high, low, close (P units) and volume (tape units), by bar."""


def columns(loaded: LoadedScenario, factor: int) -> dict[str, Columns]:
    """The tape's columns by symbol with prices in P units (``factor``: the tape factor)."""
    tape = loaded.tape
    out: dict[str, Columns] = {}
    for symbol in tape.symbols:
        c = tape.columns[symbol]
        if factor == 1:
            out[symbol] = (c.open, c.high, c.low, c.close, c.volume)
        else:
            out[symbol] = (
                array("q", (v * factor for v in c.open)),
                array("q", (v * factor for v in c.high)),
                array("q", (v * factor for v in c.low)),
                array("q", (v * factor for v in c.close)),
                c.volume,
            )
    return out


class BarLoop:
    """Processes one session's bars: matches its open orders, books fills, expires orders,
    marks equity to each close and watches the drawdown limit.

    It shares the session's account, bus and open orders (``open_orders``, the engine's
    own list: the engine places and cancels, the loop fills, rejects and expires). It
    keeps the equity ``peak`` and the ``trace`` of equity and exposure a grade measures
    (:mod:`.equity`).
    """

    def __init__(
        self,
        loaded: LoadedScenario,
        terms: Terms,
        cols: dict[str, Columns],
        *,
        account: Account,
        open_orders: list[LiveOrder],
        bus: EventBus,
        margin: MarginRules | None = None,
        liquidate: Callable[[int], None] | None = None,
    ) -> None:
        """``margin``: a margin account's rules (every bar is then processed: it accrues
        and is checked); ``liquidate(j)``: closes every position at bar ``j``'s open
        after a margin call (the engine's method, which places the orders). The loop
        holds it weakly: no reference cycle with its engine, so an engine let go (a
        session discarded, an episode ended) is freed at once with its orders and fills,
        not left to the cyclic collector, whose passes over it later steps pay for."""
        self._terms = terms
        self.margin = margin
        self._liquidate = None if liquidate is None else weakref.WeakMethod(liquidate)
        self._closes = {symbol: c[3] for symbol, c in cols.items()}
        self._cols = cols
        self._days = loaded.tape.days
        self._account = account
        self._open = open_orders
        self._bus = bus
        self.peak = terms.cash
        dd = terms.max_drawdown
        self._dd_on = 0 < dd < 1
        self._dd_num = dd.numerator
        self._dd_den = dd.denominator
        # floor(participation × volume) with the volume in units of 10**-volume_scale:
        # volume × num // (den × 10**volume_scale), exact and a whole quantity (in
        # quantity units: num carries 10**Q)
        participation = terms.participation
        self._participation = (
            participation.numerator * 10**terms.qty_scale,
            participation.denominator * 10**loaded.tape.volume_scale,
        )
        self._slippage = terms.slippage or None
        """``None`` when the scenario does not slip (no ``Fraction`` test per fill)."""
        self._forward = loaded.forward
        """A forward tape's day orders expire bar by bar (``LiveOrder.day_of``)."""
        self.fills: list[Fill] = []
        """Every fill so far, in booking order (the blotter's)."""
        self.trace = EquityTrace(terms.cash)

    def retape(self, cols: dict[str, Columns], days: array[int]) -> None:
        """The columns and days of a forward tape grown since."""
        self._cols = cols
        self._days = days
        self._closes = {symbol: c[3] for symbol, c in cols.items()}

    def run(self, clock: int, target: int) -> tuple[int, bool]:
        """Process bars ``clock + 1`` … ``target``. Returns the new clock and whether
        drawdown reached ``max_drawdown`` there (the loop stops at that bar)."""
        bar = clock + 1
        if self.margin is not None:  # interest, borrow and calls: every bar is processed
            for j in range(bar, target + 1):
                if self._bar(j):
                    return j, True
            return target, False
        while bar <= target:
            nxt = target + 1
            for order in self._open:
                at = self._next_act(order, bar, target)
                if at < nxt:
                    nxt = at
                    if at == bar:
                        break
            if nxt > bar:
                hit = self._idle(bar, nxt - 1)
                if hit >= 0:
                    return hit, True
            if nxt > target:
                break
            if self._bar(nxt):
                return nxt, True
            bar = nxt + 1
        return target, False

    def series(self) -> list[int]:
        """Equity at bar 0 and at every processed bar's close (P units)."""
        return self.trace.series(self._closes)

    def equity(self, j: int) -> int:
        """Cash plus every position marked to bar ``j``'s close."""
        equity = self._account.cash
        cols = self._cols
        for symbol, held in self._account.holdings.items():
            equity += held.qty * cols[symbol][3][j]
        return equity

    def drawdown_hit(self, peak: int, equity: int) -> bool:
        return (
            self._dd_on
            and peak > 0
            and equity < peak
            and (peak - equity) * self._dd_den >= self._dd_num * peak
        )

    def book(self, order: LiveOrder, j: int, qty: int, price: int, fee: int) -> None:
        """Book a fill of ``qty`` shares of ``order`` at bar ``j``."""
        self._account.apply_fill(order.symbol, qty if order.buy else -qty, price, fee)
        order.filled += qty
        order.notional += qty * price
        fills = self.fills
        fill = Fill(f"f{len(fills) + 1}", order, bar=j, qty=qty, price=price, fee=fee)
        fills.append(fill)
        if order.filled >= order.qty:
            order.status = "filled"
            order.closed_bar = j
            self._open.remove(order)
        else:
            order.status = "partially_filled"
        self._bus.publish(Event("fill", j, order, qty, fill))

    # -- between the bars where an order acts --------------------------------------------

    def _next_act(self, order: LiveOrder, start: int, target: int) -> int:
        """The first bar in ``start..target`` at which ``order`` must be processed (a
        possible fill or its expiry), else ``target + 1``. Its trigger search is kept on
        the order (``hit``, ``scanned``): a resting order's bars are searched once."""
        if order.status == "held":  # a bracket child waits for its entry's fill
            return target + 1
        acts = order.hit
        if acts < start:
            active = order.active_from
            first = start if start >= active else active
            expires = order.expires
            end = target if target < expires else expires
            scan_from = order.scanned + 1
            scan_from = scan_from if scan_from > first else first  # (not max(): a call less)
            cols = self._cols[order.symbol]
            if order.trail is not None:
                found = trail_search(order, (cols[1], cols[2], cols[3]), scan_from, end)
            else:
                found = trigger_search(order, cols[1], cols[2], scan_from, end)
            if found >= 0:
                order.hit = acts = found
            else:
                scanned = order.scanned
                order.scanned = end if end > scanned else scanned
                acts = expires if expires <= target else target + 1
        if order.day_of < 0:
            return acts
        # a forward tape's day order: its day's end, bar by bar
        days = self._days
        ends = bisect_right(days, days[order.day_of], order.day_of)
        return ends if start <= ends < acts else acts

    def _idle(self, first: int, last: int) -> int:
        """Bars ``first..last`` where no order acts: only equity moves. Returns the bar
        where drawdown reached ``max_drawdown``, else -1."""
        holdings = self._account.holdings
        cash = self._account.cash
        trace = self.trace
        if not holdings:
            if cash > self.peak:  # noqa: PLR1730 - not max(): every flat step passes here
                self.peak = cash
            trace.hold(first, last, cash, holdings)
            return -1
        peak = self.peak
        if len(holdings) == 1:
            ((symbol, held),) = holdings.items()
            qty = held.qty
            close = self._cols[symbol][3]
            if not self._dd_on:
                if first == last:  # one bar (``advance 1``): no window to scan
                    best = close[first]
                else:
                    window = close[first : last + 1]
                    best = max(window) if qty > 0 else min(window)
                equity = cash + qty * best
                if equity > peak:
                    self.peak = equity
                trace.hold(first, last, cash, holdings)
                return -1
            for j in range(first, last + 1):
                equity = cash + qty * close[j]
                if equity > peak:
                    peak = equity
                elif self.drawdown_hit(peak, equity):
                    self.peak = peak
                    trace.hold(first, j, cash, holdings)
                    return j
        else:
            marks = [(held.qty, self._cols[symbol][3]) for symbol, held in holdings.items()]
            for j in range(first, last + 1):
                equity = cash
                for qty, close in marks:
                    equity += qty * close[j]
                if equity > peak:
                    peak = equity
                elif self.drawdown_hit(peak, equity):
                    self.peak = peak
                    trace.hold(first, j, cash, holdings)
                    return j
        self.peak = peak
        trace.hold(first, last, cash, holdings)
        return -1

    # -- a bar where an order acts -------------------------------------------------------

    def _bar(self, j: int) -> bool:
        """Match every open order at bar ``j`` in id order, expire, then mark to the close.
        True when drawdown reached ``max_drawdown``."""
        terms = self._terms
        slippage = self._slippage
        ticks = terms.ticks
        cols = self._cols
        margin = self.margin
        if margin is not None:
            margin.accrue(self._account, closes_at(self._closes, j - 1), j)
            if margin.pending and self._liquidate is not None:
                margin.pending = False
                liquidate = self._liquidate()
                assert liquidate is not None  # (its engine runs this loop)
                liquidate(j)
                margin.liquidations.append(j)
        if self._forward:
            self._day_ended(j)
        for order in list(self._open):
            # a held bracket child, one its entry's fill activated from the next bar, or
            # one an earlier fill of this bar cancelled (its group) is not matched here
            if order.status not in WORKING or j < order.active_from:
                continue
            order.hit = -1
            order.scanned = j
            o, h, lo, close, volume = cols[order.symbol]
            if order.trail is not None:
                follow(order, close, j)
            price = match_price(
                order, o[j], h[j], lo[j], slippage=slippage, tick=ticks[order.symbol]
            )
            if price is not None:
                self._execute(order, j, price, volume[j])
        # the orders whose time in force ends at j (as above, expiring one closes no
        # other listed here); none when the bar filled every order (no list made)
        if self._open:
            for order in [o for o in self._open if o.expires == j]:
                order.status = "expired"
                order.closed_bar = j
                order.reason = order.tif
                self._open.remove(order)
                self._bus.publish(Event("expired", j, order, order.remaining, reason=order.tif))
        account = self._account
        equity = self.equity(j)
        if equity > self.peak:  # noqa: PLR1730 - not max() (as in _idle): a call less
            self.peak = equity
        self.trace.hold(j, j, account.cash, account.holdings)
        if margin is not None:
            call = margin.check(self._account, closes_at(self._closes, j), j)
            if call is not None:
                reason = (
                    f"equity {terms.money(call.equity)} below the maintenance margin"
                    f" {terms.money(call.requirement)}"
                )
                self._bus.publish(Event("margin-call", j, reason=reason))
        return self.drawdown_hit(self.peak, equity)

    def _day_ended(self, j: int) -> None:
        """Expire a forward tape's day orders whose day ended at ``j - 1`` (expiring one
        closes no other order that could be listed here: a bracket's children are gtc)."""
        days = self._days
        today = days[j]
        for order in [o for o in self._open if o.day_of >= 0 and today > days[o.day_of]]:
            order.status = "expired"
            order.closed_bar = j - 1
            order.reason = order.tif
            self._open.remove(order)
            self._bus.publish(Event("expired", j - 1, order, order.remaining, reason="day"))

    def _execute(self, order: LiveOrder, j: int, price: int, volume: int) -> None:
        terms = self._terms
        symbol = order.symbol
        num, den = self._participation
        cap = volume * num // den
        qty = min(order.remaining, cap)
        qty -= qty % terms.lots.get(symbol, 1)
        if qty <= 0:
            return
        account = self._account
        held = account.holdings.get(symbol)
        position = 0 if held is None else held.qty
        delta = qty if order.buy else -qty
        after = position + delta
        notional = qty * price
        fee = terms.fee(notional)
        if not order.buy and after < 0 and not terms.shortable:
            self._reject(order, j, qty, "not-shortable")
        elif abs(after) > terms.max_position:
            self._reject(order, j, qty, "max-position")
        elif self.margin is not None:
            marks = closes_at(self._closes, j - 1)
            if self.margin.allows(account, marks, symbol=symbol, delta=delta, price=price, fee=fee):
                self.book(order, j, qty, price, fee)
            else:
                self._reject(order, j, qty, "insufficient-margin")
        elif order.buy and account.cash < notional + fee:
            self._reject(order, j, qty, "insufficient-cash")
        else:
            self.book(order, j, qty, price, fee)

    def _reject(self, order: LiveOrder, j: int, qty: int, reason: str) -> None:
        order.status = "rejected"
        order.closed_bar = j
        order.reason = reason
        self._open.remove(order)
        self._bus.publish(Event("rejected", j, order, qty, reason=reason))
