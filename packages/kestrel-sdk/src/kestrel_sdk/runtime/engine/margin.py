"""A margin account's rules (docs/engine.md, "Accounts"): buying power, interest on
cash, borrow cost on shorts, margin calls and the liquidation they force.

Exact throughout: the terms are fractions, amounts integers of money units (see
:mod:`.lots`). With ``E`` the equity (cash plus every position marked), ``G`` the gross
exposure (``Σ |qty| × mark``), ``L`` the leverage and ``m`` the maintenance margin:

* **Buying power**: a fill is booked only if, after it, ``G ≤ E × L`` (marks: the fill's
  price for its symbol, the previous close for the others), or if it does not raise
  ``G``; otherwise the order is rejected ``insufficient-margin``.
* **Accrual**, at each bar ``j ≥ 1`` before its orders are matched, over the seconds
  ``Δt`` between bar ``j − 1``'s time and bar ``j``'s, a year being 365 days
  (31,536,000 s): interest ``cash × cash_rate × Δt / year`` on the cash balance (paid
  on a debit balance, earned on a credit one) and borrow cost ``Σ |short qty| × close of
  bar j − 1 × borrow_rate × Δt / year``. Each is summed exactly; the cash moves by the
  change of each sum rounded half-even to the cent, so what was posted is always the
  exact sum to the cent.
* **Margin call**: at a bar's close, with positions held, ``E < m × G`` calls the
  account (event ``margin-call``). At the next bar's open every open order is cancelled
  (reason ``margin-call``) and every position closed by a market order (reason
  ``margin-call``), fees and slippage applying, whatever the participation cap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Any, Final

from ..catalog.model import LoadedScenario
from .account import Account
from .scaled import Terms, div_round_half_even, fraction_of

__all__ = ["YEAR_SECONDS", "MarginCall", "MarginRules", "closes_at", "margin_check"]

YEAR_SECONDS: Final = 365 * 24 * 3600
"""The year the rates are per: 365 days of seconds."""


@dataclass(frozen=True, slots=True)
class MarginCall:
    """A call: the bar whose close found ``equity`` below ``requirement`` (money units)."""

    bar: int
    equity: int
    requirement: Fraction


def _seconds(time: str) -> int:
    return int(datetime.fromisoformat(time).timestamp())


class MarginRules:
    """One session's margin account: accrues, checks buying power and maintenance."""

    def __init__(self, loaded: LoadedScenario, terms: Terms) -> None:
        account = loaded.scenario.account
        assert account.kind == "margin"
        self._terms = terms
        self.leverage: Final = fraction_of(account.leverage or "1")
        self.maintenance: Final = fraction_of(account.maintenance_margin or "1")
        self._cash_rate = fraction_of(account.cash_rate or "0") / YEAR_SECONDS
        self._borrow_rate = fraction_of(account.borrow_rate or "0") / YEAR_SECONDS
        self._times: Sequence[str] = loaded.tape.times
        self.interest: Fraction = Fraction(0)
        """Interest accrued so far, exactly (money units; negative: paid)."""
        self.borrow: Fraction = Fraction(0)
        """Borrow cost accrued so far, exactly (money units)."""
        self._posted_interest = 0
        self._posted_borrow = 0
        self.calls: list[MarginCall] = []
        self.pending: bool = False
        """A call awaits its liquidation at the next bar's open."""
        self.liquidations: list[int] = []
        """The bars at whose open a call's liquidation ran (a session that ends at a
        call's bar, by a stand-down or a close, has none for it)."""

    def retime(self, times: Sequence[str]) -> None:
        """The bar times of a forward tape grown since."""
        self._times = times

    @property
    def accrues(self) -> bool:
        """Whether any rate is set (an account without rates accrues nothing)."""
        return bool(self._cash_rate or self._borrow_rate)

    def _cent(self, value: Fraction) -> int:
        cent = self._terms.cent
        return div_round_half_even(value.numerator, value.denominator * cent) * cent

    def accrue(self, account: Account, closes: dict[str, int], j: int) -> None:
        """Post bar ``j``'s interest and borrow cost (``closes``: bar ``j − 1``'s)."""
        if j <= 0 or not self.accrues:
            return
        elapsed = _seconds(self._times[j]) - _seconds(self._times[j - 1])
        self.interest += account.cash * self._cash_rate * elapsed
        if self._borrow_rate:
            short = sum(-h.qty * closes[s] for s, h in account.holdings.items() if h.qty < 0)
            self.borrow += short * self._borrow_rate * elapsed
        interest = self._cent(self.interest)
        borrow = self._cent(self.borrow)
        account.cash += interest - self._posted_interest - (borrow - self._posted_borrow)
        self._posted_interest = interest
        self._posted_borrow = borrow

    def allows(
        self,
        account: Account,
        marks: dict[str, int],
        *,
        symbol: str,
        delta: int,
        price: int,
        fee: int,
    ) -> bool:
        """Whether a fill of ``delta`` at ``price`` keeps ``G ≤ E × L`` (or lowers ``G``)."""
        cash = account.cash - delta * price - fee
        equity = cash
        gross = gross_before = 0
        for held_symbol, held in account.holdings.items():
            if held_symbol == symbol:
                continue
            value = held.qty * marks[held_symbol]
            equity += value
            gross += abs(value)
        gross_before = gross + abs(account.position(symbol)) * price
        after = account.position(symbol) + delta
        equity += after * price
        gross += abs(after) * price
        return gross <= gross_before or gross <= equity * self.leverage

    def check(self, account: Account, closes: dict[str, int], j: int) -> MarginCall | None:
        """A call when bar ``j``'s close finds ``E < m × G`` with positions held."""
        if not account.holdings:
            return None
        equity = account.cash
        gross = 0
        for symbol, held in account.holdings.items():
            value = held.qty * closes[symbol]
            equity += value
            gross += abs(value)
        requirement = self.maintenance * gross
        if equity >= requirement:
            return None
        call = MarginCall(j, equity, requirement)
        self.calls.append(call)
        self.pending = True
        return call


def margin_check(
    rules: MarginRules, terms: Terms, times: Sequence[str], *, tape_ended: bool
) -> dict[str, Any]:
    """The grade's ``no-margin-call`` check of a margin account: passed when no close
    called it; else it names the first call (its bar, time, equity and requirement) and
    what followed: the liquidation at the next bar's open, the tape's end (``tape_ended``:
    the session stood down ``end-of-tape``), or the session's (a stand-down or a close at
    the call's bar, before any liquidation). Either way it says the interest and the
    borrow cost posted. It reads no bar after the session's clock, so a forward tape
    grown since grades the same."""
    accrued = f"interest {terms.money(rules.interest)}, borrow cost {terms.money(rules.borrow)}"
    if not rules.calls:
        return {"id": "no-margin-call", "passed": True, "detail": f"no margin call; {accrued}"}
    first = rules.calls[0]
    more = len(rules.calls) - 1
    after = first.bar + 1
    if after in rules.liquidations:
        liquidated = f"positions liquidated at bar {after} ({times[after]})"
    elif tape_ended:
        liquidated = "the tape ended there"
    else:
        liquidated = "no liquidation followed: the session ended at that bar"
    detail = (
        f"margin call at bar {first.bar} ({times[first.bar]}): equity"
        f" {terms.money(first.equity)} below the maintenance margin"
        f" {terms.money(first.requirement)}; {liquidated}"
        + (f"; {more} more call(s)" if more else "")
        + f"; {accrued}"
    )
    return {"id": "no-margin-call", "passed": False, "detail": detail}


def closes_at(cols: Mapping[str, Sequence[int]], j: int) -> dict[str, int]:
    """Each symbol's close at bar ``j`` (``cols``: the closes by symbol)."""
    return {symbol: close[j] for symbol, close in cols.items()}
