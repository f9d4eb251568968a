"""The grammar of docs/spec.md §3: source text to statements, or K1xx diagnostics.

Each statement line yields either one statement or exactly one diagnostic (the first
thing wrong with it), so an agent fixes one clear problem per line. Columns point at
the first character of the offending token; when a token is *missing*, the column is
the one just after the previous token (``buy`` at column 1 → column 4).

Statements keep the columns of their parts (:class:`Located`) so the scenario and
session checks (K2xx) can point at the symbol, price or reference they reject.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Literal

from kestrel_protocol import Diagnostic, KestrelError, RefusalCode

from .lexer import Token, UnterminatedQuoteError, tokenize
from .syntax import Advance, Cancel, Order, StandDownStatement, Statement

__all__ = [
    "MAX_SOURCE_BYTES",
    "MAX_STATEMENTS",
    "Located",
    "check_limits",
    "diagnostic",
    "parse",
    "parse_cached",
    "parse_located",
]

MAX_SOURCE_BYTES = 64 * 1024
MAX_STATEMENTS = 10_000

_QTY = re.compile(r"[1-9][0-9]{0,8}")
_PRICE = re.compile(r"[0-9]+(\.[0-9]+)?")
_SYMBOL = re.compile(r"[A-Za-z][A-Za-z0-9.]{0,11}")
_ALIAS = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_ORDER_ID = re.compile(r"o[0-9]+")
_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]{1,9})?)?"
    r"(Z|\+00:00)"
)

_BOM = "\ufeff"
_PRICE_MAX_CHARS = 20  # keeps every price exact in Decimal's default 28 digits

_TYPES = frozenset({"market", "limit", "stop"})
_TIFS = frozenset({"day", "gtc", "ioc"})


@dataclass(frozen=True, slots=True)
class Located:
    """A statement with the columns of its parts (``start``, ``qty``, ``symbol``,
    ``limit``, ``stop``, ``alias``, ``ref``, ``to``, ``count``)."""

    statement: Statement
    columns: dict[str, int] = field(default_factory=dict)


def diagnostic(line: int, column: int, code: str, message: str) -> Diagnostic:
    """An error diagnostic (Kestrel has no warnings yet)."""
    return Diagnostic(line=line, column=column, code=code, severity="error", message=message)


class _Problem(Exception):
    def __init__(self, column: int, code: str, message: str) -> None:
        super().__init__(message)
        self.column = column
        self.code = code
        self.message = message


def _missing(prev: Token, what: str) -> _Problem:
    return _Problem(prev.end, "K101", f"missing {what} after {prev.text!r}")


def _unexpected(tok: Token, expected: str) -> _Problem:
    return _Problem(tok.column, "K101", f"unexpected {tok.text!r}; expected {expected}")


def _price(tok: Token) -> Decimal:
    if tok.quoted or not _PRICE.fullmatch(tok.text):
        raise _Problem(tok.column, "K103", f"bad price {tok.text!r}: write digits like 101.25")
    if len(tok.text) > _PRICE_MAX_CHARS:
        raise _Problem(
            tok.column, "K103", f"bad price {tok.text!r}: at most {_PRICE_MAX_CHARS} characters"
        )
    value = Decimal(tok.text)
    if value == 0:
        raise _Problem(tok.column, "K103", f"bad price {tok.text!r}: a price must be above 0")
    return value


def _alias(tok: Token) -> str:
    text = tok.text
    if tok.quoted or not _ALIAS.fullmatch(text):
        raise _Problem(
            tok.column,
            "K105",
            f"bad alias {text!r}: a lower-case letter then up to 31 of a-z 0-9 _ -",
        )
    if _ORDER_ID.fullmatch(text) or text == "all":
        raise _Problem(
            tok.column, "K105", f"bad alias {text!r}: it would read as an order id or 'all'"
        )
    return text


def _symbol(tok: Token) -> str:
    if tok.quoted or not _SYMBOL.fullmatch(tok.text):
        raise _Problem(
            tok.column, "K101", f"unexpected {tok.text!r}; expected a symbol such as ACME"
        )
    return tok.text.upper()


def _timestamp(tok: Token) -> str:
    text = tok.text.upper()
    match = None if tok.quoted else _TIMESTAMP.fullmatch(text)
    if match is None:
        raise _Problem(
            tok.column,
            "K106",
            f"bad timestamp {tok.text!r}: write ISO-8601 UTC such as 2024-03-01T15:30:00Z",
        )
    year, month, day, hour, minute, second, _ = match.groups()
    try:
        when = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0))
    except ValueError as exc:
        raise _Problem(tok.column, "K106", f"bad timestamp {tok.text!r}: {exc}") from None
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _order(line: int, toks: list[Token]) -> Located:
    head = toks[0]
    side: Literal["buy", "sell"] = "buy" if head.lower == "buy" else "sell"
    cols: dict[str, int] = {"start": head.column}
    if len(toks) < 2:
        raise _missing(head, "a quantity")
    qty_tok = toks[1]
    if qty_tok.quoted or not _QTY.fullmatch(qty_tok.text):
        raise _Problem(
            qty_tok.column,
            "K102",
            f"bad quantity {qty_tok.text!r}: a whole number from 1 to 999999999",
        )
    cols["qty"] = qty_tok.column
    if len(toks) < 3:
        raise _missing(qty_tok, "a symbol")
    symbol = _symbol(toks[2])
    cols["symbol"] = toks[2].column
    kind: Literal["market", "limit", "stop", "stop-limit"] = "market"
    limit: Decimal | None = None
    stop: Decimal | None = None
    tif: Literal["day", "gtc", "ioc"] = "day"
    alias: str | None = None
    stage = 0  # 0: type allowed, 1: tif allowed, 2: alias allowed, 3: nothing more
    i = 3
    while i < len(toks):
        tok = toks[i]
        word = tok.lower
        if stage == 0 and not tok.quoted and word in _TYPES:
            stage = 1
            if word == "market":
                i += 1
                continue
            if i + 1 >= len(toks):
                raise _missing(tok, "a price")
            value = _price(toks[i + 1])
            if word == "limit":
                kind, limit = "limit", value
                cols["limit"] = toks[i + 1].column
                i += 2
                continue
            kind, stop = "stop", value
            cols["stop"] = toks[i + 1].column
            i += 2
            if i < len(toks) and toks[i].lower == "limit" and not toks[i].quoted:
                if i + 1 >= len(toks):
                    raise _missing(toks[i], "a price")
                kind, limit = "stop-limit", _price(toks[i + 1])
                cols["limit"] = toks[i + 1].column
                i += 2
            continue
        if stage <= 1 and not tok.quoted and word == "tif":
            stage = 2
            if i + 1 >= len(toks):
                raise _missing(tok, "a time-in-force (day, gtc or ioc)")
            tif_tok = toks[i + 1]
            if tif_tok.quoted or tif_tok.lower not in _TIFS:
                raise _Problem(
                    tif_tok.column,
                    "K104",
                    f"bad time-in-force {tif_tok.text!r}: use day, gtc or ioc",
                )
            tif = "day" if tif_tok.lower == "day" else "gtc" if tif_tok.lower == "gtc" else "ioc"
            i += 2
            continue
        if stage <= 2 and not tok.quoted and word == "as":
            stage = 3
            if i + 1 >= len(toks):
                raise _missing(tok, "an alias")
            alias = _alias(toks[i + 1])
            cols["alias"] = toks[i + 1].column
            i += 2
            continue
        expected = ["market, limit, stop", "tif", "as"][min(stage, 2) :] if stage < 3 else []
        raise _unexpected(tok, " or ".join(expected) if expected else "the end of the line")
    order = Order(
        line=line,
        side=side,
        qty=int(qty_tok.text),
        symbol=symbol,
        type=kind,
        limit=limit,
        stop=stop,
        tif=tif,
        alias=alias,
    )
    return Located(order, cols)


def _cancel(line: int, toks: list[Token]) -> Located:
    head = toks[0]
    cols = {"start": head.column}
    if len(toks) < 2:
        raise _missing(head, "an order id, alias or 'all'")
    tok = toks[1]
    if not tok.quoted and tok.lower == "all":
        symbol: str | None = None
        if len(toks) >= 3:
            symbol = _symbol(toks[2])
            cols["symbol"] = toks[2].column
        if len(toks) >= 4:
            raise _unexpected(toks[3], "the end of the line")
        return Located(Cancel(line=line, ref=None, all=True, symbol=symbol), cols)
    if tok.quoted or not (_ORDER_ID.fullmatch(tok.text) or _ALIAS.fullmatch(tok.text)):
        raise _unexpected(tok, "an order id (o1, o2, ...), an alias or 'all'")
    cols["ref"] = tok.column
    if len(toks) >= 3:
        raise _unexpected(toks[2], "the end of the line")
    return Located(Cancel(line=line, ref=tok.text, all=False, symbol=None), cols)


def _advance(line: int, toks: list[Token]) -> Located:
    head = toks[0]
    cols = {"start": head.column}
    if len(toks) == 1:
        return Located(Advance(line=line, count=1, to=None), cols)
    tok = toks[1]
    if not tok.quoted and tok.lower == "to":
        if len(toks) < 3:
            raise _missing(tok, "a timestamp")
        when = _timestamp(toks[2])
        cols["to"] = toks[2].column
        if len(toks) >= 4:
            raise _unexpected(toks[3], "the end of the line")
        return Located(Advance(line=line, count=None, to=when), cols)
    if tok.quoted or not _QTY.fullmatch(tok.text):
        raise _Problem(
            tok.column, "K102", f"bad count {tok.text!r}: a whole number from 1 to 999999999"
        )
    cols["count"] = tok.column
    if len(toks) >= 3:
        raise _unexpected(toks[2], "the end of the line")
    return Located(Advance(line=line, count=int(tok.text), to=None), cols)


def _stand_down(line: int, toks: list[Token]) -> Located:
    head = toks[0]
    cols = {"start": head.column}
    if len(toks) < 2:
        raise _missing(head, "'down'")
    if toks[1].quoted or toks[1].lower != "down":
        raise _unexpected(toks[1], "'down'")
    reason: str | None = None
    if len(toks) >= 3:
        if not toks[2].quoted:
            raise _unexpected(toks[2], 'a quoted reason such as "done"')
        reason = toks[2].content
    if len(toks) >= 4:
        raise _unexpected(toks[3], "the end of the line")
    return Located(StandDownStatement(line=line, reason=reason), cols)


_KINDS = {
    "buy": _order,
    "sell": _order,
    "cancel": _cancel,
    "advance": _advance,
    "stand": _stand_down,
}


def check_limits(source: str) -> None:
    """Refuse a source over 64 KiB (UTF-8) before any work is spent on it."""
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        raise KestrelError(
            RefusalCode.LIMIT_EXCEEDED,
            f"source is {size} bytes; the limit is {MAX_SOURCE_BYTES}",
            {"limit": "bytes", "max": MAX_SOURCE_BYTES, "found": size},
        )


def parse_located(source: str) -> tuple[list[Located], list[Diagnostic]]:
    """Statements with their columns, and the syntax diagnostics (K100-K107).

    A UTF-8 byte order mark at the start of ``source`` is not part of it (editors on
    Windows write one); columns count from the character after it.
    Raises ``KestrelError(LIMIT_EXCEEDED)`` over 64 KiB or 10,000 statements.
    """
    check_limits(source)
    source = source.removeprefix(_BOM)
    located: list[Located] = []
    diagnostics: list[Diagnostic] = []
    count = 0
    stood_down = False
    for number, text in enumerate(source.split("\n"), start=1):
        try:
            toks = tokenize(text)
        except UnterminatedQuoteError as exc:
            count += 1
            diagnostics.append(diagnostic(number, exc.column, "K101", str(exc)))
            continue
        if not toks:
            continue
        count += 1
        if count > MAX_STATEMENTS:
            raise KestrelError(
                RefusalCode.LIMIT_EXCEEDED,
                f"source has more than {MAX_STATEMENTS} statements",
                {"limit": "statements", "max": MAX_STATEMENTS, "line": number},
            )
        head = toks[0]
        if stood_down:
            diagnostics.append(
                diagnostic(
                    number,
                    head.column,
                    "K107",
                    "statement after 'stand down' in the same source; nothing may follow it",
                )
            )
            continue
        kind = None if head.quoted else _KINDS.get(head.lower)
        if kind is None:
            diagnostics.append(
                diagnostic(
                    number,
                    head.column,
                    "K100",
                    f"unknown statement {head.text!r}; expected buy, sell, cancel, advance"
                    " or stand down",
                )
            )
            continue
        if kind is _stand_down:
            stood_down = True
        try:
            located.append(kind(number, toks))
        except _Problem as problem:
            diagnostics.append(diagnostic(number, problem.column, problem.code, problem.message))
    diagnostics.extend(_duplicate_aliases(located))
    diagnostics.sort(key=lambda d: (d.line, d.column))
    return located, diagnostics


def _duplicate_aliases(located: list[Located]) -> list[Diagnostic]:
    seen: dict[str, int] = {}
    found: list[Diagnostic] = []
    for item in located:
        st = item.statement
        if isinstance(st, Order) and st.alias is not None:
            first = seen.get(st.alias)
            if first is not None:
                found.append(
                    diagnostic(
                        st.line,
                        item.columns["alias"],
                        "K105",
                        f"duplicate alias {st.alias!r}: already used on line {first}",
                    )
                )
            else:
                seen[st.alias] = st.line
    return found


_CACHE_MAX_CHARS = 1024


@lru_cache(maxsize=256)
def _parse_small(source: str) -> tuple[tuple[Located, ...], tuple[Diagnostic, ...]]:
    located, diagnostics = parse_located(source)
    return tuple(located), tuple(diagnostics)


def parse_cached(source: str) -> tuple[tuple[Located, ...], tuple[Diagnostic, ...]]:
    """:func:`parse_located` remembered for short sources: an agent loop sends the same
    few lines (``advance 1``) thousands of times, and parsing is pure."""
    if len(source) <= _CACHE_MAX_CHARS:
        return _parse_small(source)
    located, diagnostics = parse_located(source)
    return tuple(located), tuple(diagnostics)


def parse(source: str) -> tuple[list[Statement], list[Diagnostic]]:
    """Statements in source order and the syntax diagnostics (see :func:`parse_located`)."""
    located, diagnostics = parse_located(source)
    return [item.statement for item in located], diagnostics
