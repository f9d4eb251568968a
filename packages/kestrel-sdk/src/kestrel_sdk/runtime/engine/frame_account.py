"""A frame's account (docs/spec.md §6 AccountState): its canonical text, reused
while the amounts are unchanged (cash, realized and fees change only with fills, so
their texts are kept together). Part of :class:`~.frame.FrameBuilder`."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Final

from .account import Account
from .scaled import Terms, money_text, ratio_text

__all__ = ["AccountParts"]

_ZERO_RATIO: Final = "0.00000000"


class AccountParts:
    """The account part of frames, cached while its amounts are unchanged."""

    def __init__(self, terms: Terms) -> None:
        self._terms = terms
        # the texts of the account's amounts that change only now and then
        self._quiet_key: tuple[Any, ...] = ()
        self._quiet = ("", "", "")
        self._peak_value: int | None = None
        self._peak_text = ""
        self._account_key: tuple[Any, ...] = ()
        self._account = ""
        self.texts: tuple[str, ...] = ()
        """The last state's amounts as texts, in canonical order (cash, drawdown, equity,
        fees, peak, realized, unrealized)."""

    def state(
        self,
        account: Account,
        equity: int,
        unrealized: Fraction | int,
        unrealized_text: str | None,
        peak: int,
    ) -> str:
        """The account's canonical text."""
        cash = account.cash
        realized = account.realized
        fees = account.fees
        key = (cash, equity, realized, unrealized, fees, peak)
        if key == self._account_key:
            return self._account
        scale = self._terms.money_scale
        # cash, realized and fees change only with fills: their texts are kept together
        quiet = (cash, realized, fees)
        if quiet != self._quiet_key:
            self._quiet_key = quiet
            self._quiet = (
                money_text(cash, scale),
                money_text(realized, scale),
                money_text(fees, scale),
            )
        cash_text, realized_text, fees_text = self._quiet
        equity_text = money_text(equity, scale)
        if unrealized_text is None:
            unrealized_text = money_text(unrealized, scale)
        if peak == equity:
            peak_text = equity_text
        else:
            if peak != self._peak_value:
                self._peak_value = peak
                self._peak_text = money_text(peak, scale)
            peak_text = self._peak_text
        drawdown = ratio_text(peak - equity, peak) if peak > 0 and equity < peak else _ZERO_RATIO
        text = (
            f'{{"cash":"{cash_text}","drawdown":"{drawdown}","equity":"{equity_text}"'
            f',"fees":"{fees_text}","peak":"{peak_text}","realized":"{realized_text}"'
            f',"unrealized":"{unrealized_text}"}}'
        )
        self._account_key = key
        self._account = text
        self.texts = (
            cash_text,
            drawdown,
            equity_text,
            fees_text,
            peak_text,
            realized_text,
            unrealized_text,
        )
        return text
