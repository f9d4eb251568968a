"""A scenario's instruments (``[[instruments]]``): symbol, tick and lot (whole or
fractional), parsed from ``scenario.toml``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

from .terms_check import TermsChecker

__all__ = ["SYMBOL_PATTERN", "InstrumentTerms", "instrument_terms", "lot_member", "tick_scale"]

SYMBOL_PATTERN = re.compile(r"[A-Z][A-Z0-9.]{0,11}")
_INSTRUMENT_KEYS = ("symbol", "tick", "lot")


@dataclass(frozen=True, slots=True)
class InstrumentTerms:
    symbol: str
    tick: str
    lot: int | str
    """Whole lots as an integer (as always); a fractional lot as its canonical decimal
    text (``"0.01"``): the form the Scenario object carries (see :func:`lot_member`)."""


def lot_member(text: str) -> int | str:
    """A lot's member form: an integer when whole (``"1"``, ``"10.0"`` → ``1``, ``10``),
    else its canonical decimal text (``"0.010"`` → ``"0.01"``)."""
    value = Decimal(text).normalize(DEFAULT_DECIMAL_CONTEXT)
    if value == value.to_integral_value():
        return int(value)
    return f"{value:f}"


def tick_scale(tick: str) -> int:
    """Decimal places a tick needs (``"0.01"`` → 2, ``"0.50"`` → 1, ``"5"`` → 0)."""
    exponent = Decimal(tick).normalize(DEFAULT_DECIMAL_CONTEXT).as_tuple().exponent
    assert isinstance(exponent, int)
    return max(0, -exponent)


def instrument_terms(check: TermsChecker, value: Any) -> tuple[InstrumentTerms, ...]:
    if value is None:
        check.fault("", None, "missing [[instruments]] (at least one)")
        return ()
    if not isinstance(value, list) or not value:
        check.fault("", "instruments", "instruments must be an array of tables [[instruments]]")
        return ()
    found: list[InstrumentTerms] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            check.fault("", "instruments", "instruments must be an array of tables [[instruments]]")
            continue
        for key in item:
            if key not in _INSTRUMENT_KEYS:
                check.fault("instruments", key, f"unknown key {key!r} in [[instruments]]", index)
        symbol = item.get("symbol")
        if not isinstance(symbol, str) or not SYMBOL_PATTERN.fullmatch(symbol):
            check.fault(
                "instruments",
                None if symbol is None else "symbol",
                f"instruments[{index}].symbol must be an upper-case symbol matching "
                f"[A-Z][A-Z0-9.]{{0,11}}, not {symbol!r}",
                index,
            )
            symbol = ""
        elif symbol in seen:
            check.fault("instruments", "symbol", f"duplicate instrument {symbol}", index)
        seen.add(symbol)
        tick = check.decimal(item, "instruments", "tick", positive=True, index=index)
        if tick != "0" and tick_scale(tick) > 8:
            check.fault(
                "instruments", "tick", f"instruments[{index}].tick {tick} is finer than 1e-8", index
            )
        found.append(InstrumentTerms(symbol=symbol, tick=tick, lot=_lot(check, item, index)))
    return tuple(found)


def _lot(check: TermsChecker, item: dict[str, Any], index: int) -> int | str:
    """An instrument's lot: an integer of at least 1 (as always), or a decimal string
    above 0 with at most 8 places (``"0.01"``); ``"1"`` when absent."""
    value = item.get("lot")
    if value is None:
        return 1
    if isinstance(value, int) and not isinstance(value, bool):
        return check.integer(item, "instruments", "lot", low=1, index=index)
    lot = check.decimal(item, "instruments", "lot", positive=True, index=index)
    if lot == "0" or Decimal(lot) <= 0:
        return 1
    if tick_scale(lot) > 8:
        check.fault(
            "instruments", "lot", f"instruments[{index}].lot {lot} is finer than 1e-8", index
        )
        return 1
    if Decimal(lot) >= 10**9:
        check.fault("instruments", "lot", f"instruments[{index}].lot {lot} is too large", index)
        return 1
    return lot_member(lot)
