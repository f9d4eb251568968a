"""The words of a statement every form reads: counts, prices, symbols, aliases, and the
problem a bad one raises (a diagnostic's column, code and message)."""

from __future__ import annotations

import re
from decimal import Decimal

from kestrel_protocol import quoted

from .lexer import Token

__all__ = [
    "ALIAS",
    "COUNT",
    "ORDER_ID",
    "Problem",
    "alias",
    "count",
    "missing",
    "price",
    "symbol",
    "unexpected",
]

_PRICE = re.compile(r"[0-9]+(\.[0-9]+)?")
_SYMBOL = re.compile(r"[A-Za-z][A-Za-z0-9.]{0,11}")
ALIAS = re.compile(r"[a-z][a-z0-9_-]{0,31}")
ORDER_ID = re.compile(r"o[0-9]+")
COUNT = re.compile(r"[1-9][0-9]{0,8}")

_PRICE_MAX_CHARS = 20  # keeps every price exact in Decimal's default 28 digits


class Problem(Exception):
    """What is wrong with a line: the column, the K-code and the message."""

    def __init__(self, column: int, code: str, message: str) -> None:
        super().__init__(message)
        self.column = column
        self.code = code
        self.message = message


def missing(prev: Token, what: str) -> Problem:
    text, column = prev
    return Problem(column + len(text), "K101", f"missing {what} after {quoted(text)}")


def unexpected(tok: Token, expected: str) -> Problem:
    return Problem(tok[1], "K101", f"unexpected {quoted(tok[0])}; expected {expected}")


def count(tok: Token, what: str) -> int:
    text, column = tok
    if COUNT.fullmatch(text) is None:
        raise Problem(
            column, "K102", f"bad {what} {quoted(text)}: a whole number from 1 to 999999999"
        )
    return int(text)


def price(tok: Token) -> Decimal:
    text, column = tok
    if _PRICE.fullmatch(text) is None:
        raise Problem(column, "K103", f"bad price {quoted(text)}: write digits like 101.25")
    if len(text) > _PRICE_MAX_CHARS:
        raise Problem(
            column, "K103", f"bad price {quoted(text)}: at most {_PRICE_MAX_CHARS} characters"
        )
    value = Decimal(text)
    if not value:
        raise Problem(column, "K103", f"bad price {quoted(text)}: a price must be above 0")
    return value


def alias(tok: Token, what: str = "alias") -> str:
    text, column = tok
    if ALIAS.fullmatch(text) is None:
        raise Problem(
            column,
            "K105",
            f"bad {what} {quoted(text)}: a lower-case letter then up to 31 of a-z 0-9 _ -",
        )
    if text == "all" or ORDER_ID.fullmatch(text) is not None:
        raise Problem(
            column, "K105", f"bad {what} {quoted(text)}: it would read as an order id or 'all'"
        )
    return text


def symbol(tok: Token) -> str:
    text, column = tok
    if _SYMBOL.fullmatch(text) is None:
        raise Problem(column, "K101", f"unexpected {quoted(text)}; expected a symbol such as ACME")
    return text.upper()
