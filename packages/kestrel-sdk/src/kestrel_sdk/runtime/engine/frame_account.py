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
        self._scale = terms.money_scale
        # the last state's amounts (cash, equity, realized, unrealized, fees, peak), none
        # at first (``None`` equals no amount), and its text
        self._account_key: tuple[Any, ...] = (None,) * 6
        self._account = ""
        self.texts: tuple[str, ...] = ("",) * 7
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
        """The account's canonical text (each amount's text kept while the amount is:
        cash, realized and fees change only with fills, the rest with the marks)."""
        cash = account.cash
        realized = account.realized
        fees = account.fees
        key = (cash, equity, realized, unrealized, fees, peak)
        last = self._account_key
        if key == last:
            return self._account
        scale = self._scale
        # the last texts: cash, drawdown, equity, fees, peak, realized, unrealized
        cash_text, drawdown, equity_text, fees_text, peak_text, realized_text, was = self.texts
        if cash != last[0]:
            cash_text = money_text(cash, scale)
        if realized != last[2]:
            realized_text = money_text(realized, scale)
        if fees != last[4]:
            fees_text = money_text(fees, scale)
        if equity == cash:  # flat
            equity_text = cash_text
        elif equity != last[1]:
            equity_text = money_text(equity, scale)
        if unrealized_text is None:
            unrealized_text = was if unrealized == last[3] else money_text(unrealized, scale)
        if peak == equity:
            peak_text = equity_text
        elif peak != last[5]:
            peak_text = money_text(peak, scale)
        if peak != last[5] or equity != last[1]:
            drawdown = (
                ratio_text(peak - equity, peak) if peak > 0 and equity < peak else _ZERO_RATIO
            )
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
