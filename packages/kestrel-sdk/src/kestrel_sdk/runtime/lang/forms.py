"""The order forms traders use beyond a plain order (docs/spec.md §3), read inside the
``order`` statement kind: a target (``buy ACME to 50``, ``buy ACME to 10%``), a trailing
stop (``trail 2.50``, ``trail 5%``), a bracket's children (``take PRICE``, ``loss PRICE``
or ``loss trail 2.50``)
and a one-cancels-other group (``oco NAME``).

Each reader takes the line's tokens and the index of its keyword, and returns what it
read and the index after it; a bad word raises :class:`.words.Problem` (K101, K103, K105,
K108, K109).
"""

from __future__ import annotations

import re
from decimal import Decimal

from kestrel_protocol import ORDER_FORMS, quoted

from .lexer import Token
from .syntax import Amount, OrderType, Side
from .words import Problem, alias, missing, price

__all__ = ["EXTRAS", "FORM_EXAMPLES", "check_forms", "read_amount", "read_extra", "read_target"]

FORM_EXAMPLES: dict[str, str] = {form.form: form.example for form in ORDER_FORMS}
"""One statement of each form, valid on any scenario trading ACME at a cent tick (the
fuzzers and the parity tables drive every face with them): the examples agents are
taught (``kestrel_protocol.ORDER_FORMS``), so each is checked by the parser."""

EXTRAS = frozenset({"take", "loss", "oco"})
"""The parts that may follow an order's type (each once, before ``tif`` and ``as``)."""

_PERCENT = re.compile(r"([0-9]+(\.[0-9]+)?)%")
_POSITION = re.compile(r"-?(0|[1-9][0-9]{0,8})(\.[0-9]{1,8})?")
"""A target position: whole, or a decimal of up to 8 places where the lot allows (K203)."""
_PERCENT_MAX_CHARS = 12


def _percent(tok: Token, *, top: Decimal, what: str) -> Amount:
    text, column = tok
    match = _PERCENT.fullmatch(text)
    if match is None or len(text) > _PERCENT_MAX_CHARS:
        raise Problem(column, "K108", f"bad {what} {quoted(text)}: write a percent such as 5%")
    value = Decimal(match[1])
    low = 0 if what == "target" else 1
    if not (value >= 0 if low == 0 else value > 0) or value > top:
        above = "from 0%" if low == 0 else "above 0%"
        raise Problem(
            column, "K108", f"bad {what} {quoted(text)}: a percent {above} and at most {top}%"
        )
    return Amount(value, True)


def read_amount(toks: list[Token], i: int) -> tuple[Amount, int]:
    """``trail`` at ``toks[i]``: its offset, a price (``2.50``) or a percent under 100."""
    if i + 1 >= len(toks):
        raise missing(toks[i], "a trailing offset such as 2.50 or 5%")
    tok = toks[i + 1]
    if tok[0].endswith("%"):
        amount = _percent(tok, top=Decimal("99.99"), what="trailing offset")
        return amount, i + 2
    return Amount(price(tok), False), i + 2


def read_target(toks: list[Token], i: int) -> tuple[Amount, int]:
    """``to`` at ``toks[i]``: a position (``50``, ``0``, ``-20``) or a weight of equity
    (``10%``, ``0%`` … ``100%``)."""
    if i + 1 >= len(toks):
        raise missing(toks[i], "a target such as 50 or 10%")
    tok = toks[i + 1]
    text, column = tok
    if text.endswith("%"):
        return _percent(tok, top=Decimal(100), what="target"), i + 2
    if _POSITION.fullmatch(text) is None:
        raise Problem(
            column,
            "K108",
            f"bad target {quoted(text)}: a position from -999999999 to 999999999, or a percent",
        )
    value = Decimal(text) if "." in text else Decimal(int(text))
    return Amount(value, False), i + 2


def read_extra(
    word: str, toks: list[Token], i: int, parts: dict[str, object], cols: dict[str, int]
) -> int:
    """``take``, ``loss`` (a price, or ``trail`` and an offset) or ``oco`` at ``toks[i]``
    into ``parts`` (each once)."""
    if word in parts:
        raise Problem(toks[i][1], "K101", f"{quoted(word)} given twice")
    if i + 1 >= len(toks):
        what = "a group name" if word == "oco" else "a price"
        raise missing(toks[i], what)
    tok = toks[i + 1]
    parts[f"{word}@"] = toks[i][1]  # the keyword's column, for a form it may not have
    if word == "loss" and tok[0].lower() == "trail":  # a trailing stop-loss
        cols[word] = toks[i + 2][1] if i + 2 < len(toks) else tok[1]
        parts[word], after = read_amount(toks, i + 1)
        return after
    parts[word] = alias(tok, "group name") if word == "oco" else price(tok)
    cols[word] = tok[1]
    return i + 2


def _at(parts: dict[str, object], word: str) -> int:
    column = parts[f"{word}@"]
    assert isinstance(column, int)
    return column


def check_forms(
    side: Side,
    kind: OrderType,
    entry: Decimal | None,
    parts: dict[str, object],
    cols: dict[str, int],
    *,
    target: bool,
) -> None:
    """The forms' rules that need the whole line: a target is a market or limit order
    alone (no trail, bracket or group); a trailing stop has no bracket; a bracket's
    take-profit lies above its stop-loss for a buy (below for a sell), and both on the
    right side of the entry's price ``entry`` (its limit, else its stop) (K109)."""
    if not parts and not target:  # an order without a form's part breaks none
        return
    take = parts.get("take")
    loss = parts.get("loss")
    if target:
        for word in ("take", "loss", "oco"):
            if word in parts:
                message = f"a target order takes market or limit, tif and as; not {quoted(word)}"
                raise Problem(_at(parts, word), "K101", message)
        if kind not in {"market", "limit"}:
            column = cols.get("stop", cols.get("trail", cols["start"]))
            raise Problem(column, "K101", "a target order is a market or limit order")
        return
    if kind == "trailing-stop":
        for word in ("take", "loss"):
            if word in parts:
                message = f"a trailing stop has no bracket; not {quoted(word)}"
                raise Problem(_at(parts, word), "K101", message)
        return
    buy = side == "buy"
    if isinstance(take, Decimal):
        if isinstance(loss, Decimal) and (take <= loss if buy else take >= loss):
            above = "above" if buy else "below"
            message = f"take-profit {take} must lie {above} the stop-loss {loss} for a {side}"
            raise Problem(cols["take"], "K109", message)
        if entry is not None and (take <= entry if buy else take >= entry):
            above = "above" if buy else "below"
            message = f"take-profit {take} must lie {above} the entry price {entry} for a {side}"
            raise Problem(cols["take"], "K109", message)
    wrong = buy and entry is not None and isinstance(loss, Decimal) and loss >= entry
    if wrong or (not buy and entry is not None and isinstance(loss, Decimal) and loss <= entry):
        below = "below" if buy else "above"
        message = f"stop-loss {loss} must lie {below} the entry price {entry} for a {side}"
        raise Problem(cols["loss"], "K109", message)
