"""A scenario's margin account terms (``[account] kind = "margin"``): parsed from
``scenario.toml`` and read back from a Scenario object."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .terms_check import TermsChecker

__all__ = ["MarginTerms", "margin_keys", "margin_terms"]


@dataclass(frozen=True, slots=True)
class MarginTerms:
    """A margin account's terms (decimal strings, rates per year of 365 days)."""

    leverage: str
    maintenance_margin: str
    borrow_rate: str
    cash_rate: str


_MARGIN_KEYS = ("leverage", "maintenance_margin", "borrow_rate", "cash_rate")


def margin_keys(account: Mapping[str, Any]) -> dict[str, str] | None:
    """A Scenario object's account members (JSON, camelCase) as ``scenario.toml``'s
    margin keys, or ``None`` for a cash account (no ``kind``)."""
    if account.get("kind") != "margin":
        return None
    found: dict[str, str] = {}
    for key in _MARGIN_KEYS:
        head, *rest = key.split("_")
        value = account.get(head + "".join(part.title() for part in rest))
        found[key] = value if isinstance(value, str) else ""
    return found


def margin_terms(check: TermsChecker, account: dict[str, Any]) -> MarginTerms | None:
    """``[account] kind = "margin"`` and its four terms, or ``None`` (a cash account)."""
    kind = account.get("kind")
    if kind is None:
        for key in _MARGIN_KEYS:
            if key in account:
                check.fault(
                    "account",
                    key,
                    f"unknown key {key!r} in [account] (a margin account's term:"
                    ' it needs kind = "margin")',
                )
        return None
    if kind != "margin":
        check.fault("account", "kind", f'account.kind must be "margin", not {kind!r}')
        return None
    leverage = check.decimal(account, "account", "leverage", low=Decimal(1), high=Decimal(100))
    maintenance = check.decimal(
        account, "account", "maintenance_margin", positive=True, high=Decimal(1)
    )
    borrow = check.decimal(account, "account", "borrow_rate", high=Decimal(10))
    cash = check.decimal(account, "account", "cash_rate", high=Decimal(10))
    return MarginTerms(
        leverage=leverage, maintenance_margin=maintenance, borrow_rate=borrow, cash_rate=cash
    )
