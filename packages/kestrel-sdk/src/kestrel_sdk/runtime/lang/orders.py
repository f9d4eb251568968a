"""An order line (``buy``/``sell``, docs/spec.md §3) to its :class:`.syntax.Order`: a
quantity (or a target), a symbol, then its type, forms (:mod:`.forms`), time-in-force
and alias, each once and in that order, or the first thing wrong with it."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import TypedDict

from kestrel_protocol import quoted

from .forms import EXTRAS, check_forms, read_amount, read_extra, read_target
from .lexer import Token
from .syntax import Amount, Located, Order, OrderType, Side, Tif
from .words import COUNT, count
from .words import Problem as _Problem
from .words import alias as _alias
from .words import missing as _missing
from .words import price as _price
from .words import symbol as _symbol
from .words import unexpected as _unexpected

__all__ = ["read_order"]

_DECIMAL_LIKE = re.compile(r"[0-9]*\.[0-9]*")
_QUANTITY = re.compile(r"(0|[1-9][0-9]{0,8})(\.[0-9]{1,8})?")

_TYPES = frozenset({"market", "limit", "stop"})
_TIFS: dict[str, Tif] = {"day": "day", "gtc": "gtc", "ioc": "ioc"}


def _quantity(tok: Token) -> Decimal:
    """An order's quantity: a whole number, or a decimal of up to 8 places for an
    instrument with a fractional lot (``0.01``); above 0, below 10**9."""
    text, column = tok
    if COUNT.fullmatch(text) is not None:  # a whole number (the text is its digits)
        return Decimal(text)
    if _DECIMAL_LIKE.fullmatch(text) is None:
        return Decimal(count(tok, "quantity"))
    if _QUANTITY.fullmatch(text) is None or not Decimal(text):
        raise _Problem(
            column,
            "K102",
            f"bad quantity {quoted(text)}: a decimal above 0 and below 1000000000 with at most"
            " 8 places (such as 0.01, where the instrument's lot allows it)",
        )
    return Decimal(text)


# What may follow an order's symbol (or target), by stage: each part may come once, in
# this order (take, loss and oco in any order between the type and tif).
_NEXT = (
    "market, limit, stop, trail, take, loss, oco, tif or as",
    "take, loss, oco, tif or as",
    "as",
    "the end of the line",
)


class _Forms(TypedDict, total=False):
    """The parts of an order's forms a line gives (:class:`.syntax.Order`'s members)."""

    trail: Amount
    take: Decimal
    loss: Decimal
    loss_trail: Amount
    oco: str
    target: Amount


def read_order(line: int, toks: list[Token]) -> Located:
    head = toks[0]
    n = len(toks)
    if n < 2:
        raise _missing(head, "a quantity")
    target: Amount | None = None
    if n >= 3 and toks[1][0][:1].isalpha() and toks[2][0].lower() == "to":  # SYMBOL to TARGET
        symbol = _symbol(toks[1])
        target, i = read_target(toks, 2)
        qty = Decimal(0)
        cols = {"start": head[1], "symbol": toks[1][1], "target": toks[3][1]}
    else:
        qty = _quantity(toks[1])
        if n < 3:
            raise _missing(toks[1], "a symbol")
        symbol = _symbol(toks[2])
        cols = {"start": head[1], "qty": toks[1][1], "symbol": toks[2][1]}
        i = 3
    kind: OrderType = "market"
    limit: Decimal | None = None
    stop: Decimal | None = None
    trail: Amount | None = None
    parts: dict[str, object] = {}
    tif: Tif = "day"
    alias: str | None = None
    stage = 0  # 0: type allowed, 1: tif allowed, 2: alias allowed, 3: nothing more
    while i < n:
        tok = toks[i]
        word = tok[0].lower()
        if stage == 0 and word == "trail":
            stage = 1
            kind = "trailing-stop"
            cols["trail"] = toks[i + 1][1] if i + 1 < n else tok[1]
            trail, i = read_amount(toks, i)
        elif stage == 0 and word in _TYPES:
            stage = 1
            i += 1
            if word == "market":
                continue
            if i >= n:
                raise _missing(tok, "a price")
            value = _price(toks[i])
            if word == "limit":
                kind, limit = "limit", value
                cols["limit"] = toks[i][1]
                i += 1
                continue
            kind, stop = "stop", value
            cols["stop"] = toks[i][1]
            i += 1
            if i < n and toks[i][0].lower() == "limit":
                if i + 1 >= n:
                    raise _missing(toks[i], "a price")
                kind, limit = "stop-limit", _price(toks[i + 1])
                cols["limit"] = toks[i + 1][1]
                i += 2
        elif stage <= 1 and word in EXTRAS:
            stage = 1
            i = read_extra(word, toks, i, parts, cols)
        elif stage <= 1 and word == "tif":
            stage = 2
            if i + 1 >= n:
                raise _missing(tok, "a time-in-force (day, gtc or ioc)")
            text, column = toks[i + 1]
            found = _TIFS.get(text.lower())
            if found is None:
                raise _Problem(
                    column, "K104", f"bad time-in-force {quoted(text)}: use day, gtc or ioc"
                )
            tif = found
            i += 2
        elif stage <= 2 and word == "as":
            stage = 3
            if i + 1 >= n:
                raise _missing(tok, "an alias")
            alias = _alias(toks[i + 1])
            cols["alias"] = toks[i + 1][1]
            i += 2
        else:
            raise _unexpected(tok, _NEXT[stage])
    side: Side = "buy" if head[0].lower() == "buy" else "sell"
    if not parts and target is None and trail is None:  # a plain order: no form's part
        return Located(Order(line, side, qty, symbol, kind, limit, stop, tif, alias), cols)
    entry = limit if limit is not None else stop
    check_forms(side, kind, entry, parts, cols, target=target is not None)
    # the forms' parts given, by name (one absent stays None: no keyword passed for it,
    # which a dataclass's __init__ would spend ≈ 0.06 µs on each)
    forms: _Forms = {}
    if trail is not None:
        forms["trail"] = trail
    if target is not None:
        forms["target"] = target
    if parts:
        take = parts.get("take")
        loss = parts.get("loss")
        oco = parts.get("oco")
        if isinstance(take, Decimal):
            forms["take"] = take
        if isinstance(loss, Decimal):
            forms["loss"] = loss
        elif isinstance(loss, Amount):
            forms["loss_trail"] = loss
        if isinstance(oco, str):
            forms["oco"] = oco
    order = Order(line, side, qty, symbol, kind, limit, stop, tif, alias, **forms)
    return Located(order, cols)
