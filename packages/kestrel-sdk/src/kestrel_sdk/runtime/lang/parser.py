"""The grammar of docs/spec.md §3: source text to statements, or K1xx diagnostics.

Each statement line yields either one statement or exactly one diagnostic (the first
thing wrong with it), so an agent fixes one clear problem per line. Columns point at
the first character of the offending token; when a token is *missing*, the column is
the one just after the previous token (``buy`` at column 1 → column 4).

Statements keep the columns of their parts (:class:`Located`) so the scenario and
session checks (K2xx) can point at the symbol, price or reference they reject.

Tokens are ``(text, column)`` pairs. Only a quoted token holds a ``"``, so it never reads
as a keyword, number, symbol, alias or timestamp: only a stand-down reason asks for one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Final, TypedDict

from kestrel_protocol import Diagnostic, KestrelError, RefusalCode, quoted

from .forms import EXTRAS, check_forms, read_amount, read_extra, read_target
from .lexer import Token, UnterminatedQuoteError, is_quoted, tokenize, unquote
from .syntax import (
    Advance,
    Amount,
    Cancel,
    Order,
    OrderType,
    Side,
    StandDownStatement,
    Statement,
    Tif,
    WaitingAdvance,
)
from .words import ALIAS as _ALIAS
from .words import ORDER_ID as _ORDER_ID
from .words import Problem as _Problem
from .words import alias as _alias
from .words import missing as _missing
from .words import price as _price
from .words import symbol as _symbol
from .words import unexpected as _unexpected

__all__ = [
    "MAX_SOURCE_BYTES",
    "MAX_STATEMENTS",
    "Located",
    "check_limits",
    "diagnostic",
    "parse",
    "parse_located",
]

MAX_SOURCE_BYTES = 64 * 1024
MAX_STATEMENTS = 10_000

_QTY = re.compile(r"[1-9][0-9]{0,8}")
_DECIMAL_LIKE = re.compile(r"[0-9]*\.[0-9]*")
_QUANTITY = re.compile(r"(0|[1-9][0-9]{0,8})(\.[0-9]{1,8})?")
_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]{1,9})?)?"
    r"(Z|\+00:00)"
)

_BOM = "\ufeff"

_TYPES = frozenset({"market", "limit", "stop"})
_TIFS: dict[str, Tif] = {"day": "day", "gtc": "gtc", "ioc": "ioc"}


@dataclass(slots=True)
class Located:
    """A statement with the columns of its parts (``start``, ``qty``, ``symbol``,
    ``limit``, ``stop``, ``alias``, ``ref``, ``to``, ``count``). Read-only (``Final``, as
    the statements: see :mod:`.syntax`): the lines of short sources are remembered, so
    many calls may return one ``Located``."""

    statement: Final[Statement]
    columns: Final[dict[str, int]] = field(default_factory=dict)


def diagnostic(line: int, column: int, code: str, message: str) -> Diagnostic:
    """An error diagnostic (Kestrel has no warnings yet)."""
    return Diagnostic(line=line, column=column, code=code, severity="error", message=message)


def _count(tok: Token, what: str) -> int:
    text, column = tok
    if _QTY.fullmatch(text) is None:
        raise _Problem(
            column, "K102", f"bad {what} {quoted(text)}: a whole number from 1 to 999999999"
        )
    return int(text)


def _quantity(tok: Token) -> Decimal:
    """An order's quantity: a whole number, or a decimal of up to 8 places for an
    instrument with a fractional lot (``0.01``); above 0, below 10**9."""
    text, column = tok
    if _QTY.fullmatch(text) is not None:  # a whole number (the text is its digits)
        return Decimal(text)
    if _DECIMAL_LIKE.fullmatch(text) is None:
        return Decimal(_count(tok, "quantity"))
    if _QUANTITY.fullmatch(text) is None or not Decimal(text):
        raise _Problem(
            column,
            "K102",
            f"bad quantity {quoted(text)}: a decimal above 0 and below 1000000000 with at most"
            " 8 places (such as 0.01, where the instrument's lot allows it)",
        )
    return Decimal(text)


def _timestamp(tok: Token) -> str:
    text, column = tok
    match = _TIMESTAMP.fullmatch(text.upper())
    if match is None:
        raise _Problem(
            column,
            "K106",
            f"bad timestamp {quoted(text)}: write ISO-8601 UTC such as 2024-03-01T15:30:00Z",
        )
    year, month, day, hour, minute, second, _ = match.groups()
    try:
        when = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0))
    except ValueError as exc:
        raise _Problem(column, "K106", f"bad timestamp {quoted(text)}: {exc}") from None
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


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


def _order(line: int, toks: list[Token]) -> Located:
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


def _cancel(line: int, toks: list[Token]) -> Located:
    head = toks[0]
    n = len(toks)
    if n < 2:
        raise _missing(head, "an order id, alias or 'all'")
    text, column = toks[1]
    if text.lower() == "all":
        symbol: str | None = None
        cols = {"start": head[1]}
        if n >= 3:
            symbol = _symbol(toks[2])
            cols["symbol"] = toks[2][1]
        if n >= 4:
            raise _unexpected(toks[3], "the end of the line")
        return Located(Cancel(line, None, True, symbol), cols)
    if _ORDER_ID.fullmatch(text) is None and _ALIAS.fullmatch(text) is None:
        raise _unexpected(toks[1], "an order id (o1, o2, ...), an alias or 'all'")
    if n >= 3:
        raise _unexpected(toks[2], "the end of the line")
    return Located(Cancel(line, text, False, None), {"start": head[1], "ref": column})


MAX_WAIT_MS = 300_000
"""The longest ``wait`` an ``advance`` may ask (300s)."""
_WAIT = re.compile(r"([0-9]{1,6})(ms|s)")


def _wait(toks: list[Token]) -> tuple[list[Token], int | None]:
    """``toks`` without a trailing ``wait DURATION`` (``30s``, ``500ms``; at most 300s),
    and the duration in milliseconds."""
    if len(toks) >= 2 and toks[-1][0].lower() == "wait":
        raise _missing(toks[-1], "a duration such as 30s or 500ms")
    if len(toks) < 3 or toks[-2][0].lower() != "wait":
        return toks, None
    text, column = toks[-1]
    found = _WAIT.fullmatch(text)
    millis = 0 if found is None else int(found[1]) * (1000 if found[2] == "s" else 1)
    if found is None or not 0 < millis <= MAX_WAIT_MS:
        raise _Problem(column, "K102", f"bad wait {quoted(text)}: a duration from 1ms to 300s")
    return toks[:-2], millis


def _advance(line: int, all_toks: list[Token]) -> Located:
    toks, wait = _wait(all_toks)
    located = _advance_to(line, toks)
    st = located.statement
    if wait is None or not isinstance(st, Advance):
        return located
    return Located(WaitingAdvance(st.line, st.count, st.to, wait), located.columns)


def _advance_to(line: int, toks: list[Token]) -> Located:
    head = toks[0]
    n = len(toks)
    if n == 1:
        return Located(Advance(line, 1, None), {"start": head[1]})
    tok = toks[1]
    if tok[0].lower() == "to":
        if n < 3:
            raise _missing(tok, "a timestamp")
        when = _timestamp(toks[2])
        if n >= 4:
            raise _unexpected(toks[3], "the end of the line")
        return Located(Advance(line, None, when), {"start": head[1], "to": toks[2][1]})
    count = _count(tok, "count")
    if n >= 3:
        raise _unexpected(toks[2], "the end of the line")
    return Located(Advance(line, count, None), {"start": head[1], "count": tok[1]})


def _stand_down(line: int, toks: list[Token]) -> Located:
    head = toks[0]
    n = len(toks)
    if n < 2:
        raise _missing(head, "'down'")
    if toks[1][0].lower() != "down":
        raise _unexpected(toks[1], "'down'")
    reason: str | None = None
    if n >= 3:
        if not is_quoted(toks[2][0]):
            raise _unexpected(toks[2], 'a quoted reason such as "done"')
        reason = unquote(toks[2][0])
    if n >= 4:
        raise _unexpected(toks[3], "the end of the line")
    return Located(StandDownStatement(line, reason), {"start": head[1]})


_KINDS = {
    "buy": _order,
    "sell": _order,
    "cancel": _cancel,
    "advance": _advance,
    "stand": _stand_down,
}


def check_limits(source: str) -> None:
    """Refuse a source over 64 KiB (UTF-8) before any work is spent on it."""
    if len(source) <= MAX_SOURCE_BYTES // 4:  # no character takes more than 4 bytes
        return
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        raise KestrelError(
            RefusalCode.LIMIT_EXCEEDED,
            f"source is {size} bytes; the limit is {MAX_SOURCE_BYTES}",
            {"limit": "bytes", "max": MAX_SOURCE_BYTES, "found": size},
        )


def parse_located(source: str) -> tuple[list[Located], list[Diagnostic]]:
    """Statements with their columns, and the syntax diagnostics (K100-K107), in line order.

    A UTF-8 byte order mark at the start of ``source`` is not part of it (editors on
    Windows write one); columns count from the character after it. Parsing is pure, so
    the lines of a source of up to 1,024 characters are remembered (the last 1,024).
    Raises ``KestrelError(LIMIT_EXCEEDED)`` over 64 KiB or 10,000 statements.
    """
    check_limits(source)
    located: list[Located] = []
    diagnostics: list[Diagnostic] = []
    aliases: dict[str, int] = {}  # the line of each alias's first order
    count = 0
    stood_down = False
    number = 0
    read = _remembered_line if len(source) <= _CACHE_MAX_CHARS else _line
    for text in source.removeprefix(_BOM).split("\n"):
        number += 1
        if not text:  # an empty line says nothing (a source's final newline leaves one)
            continue
        said = read(number, text)
        if said is None:
            continue
        count += 1
        if not isinstance(said, tuple):  # an unterminated quote
            diagnostics.append(said)
            continue
        if count > MAX_STATEMENTS:
            raise KestrelError(
                RefusalCode.LIMIT_EXCEEDED,
                f"source has more than {MAX_STATEMENTS} statements",
                {"limit": "statements", "max": MAX_STATEMENTS, "line": number},
            )
        column, stands, found = said
        if stood_down:
            diagnostics.append(diagnostic(number, column, "K107", _AFTER_STAND_DOWN))
            continue
        stood_down = stands
        if not isinstance(found, Located):
            diagnostics.append(found)
            continue
        located.append(found)
        alias = getattr(found.statement, "alias", None)
        if alias is not None:
            first = aliases.setdefault(alias, number)
            if first != number:
                message = f"duplicate alias {quoted(alias)}: already used on line {first}"
                diagnostics.append(diagnostic(number, found.columns["alias"], "K105", message))
    return located, diagnostics


_AFTER_STAND_DOWN = "statement after 'stand down' in the same source; nothing may follow it"


def _line(number: int, text: str) -> tuple[int, bool, Located | Diagnostic] | Diagnostic | None:
    """What line ``number`` says: nothing (blank or a comment), a diagnostic (an
    unterminated quote), or its first token's column, whether it begins ``stand``, and
    its statement or diagnostic."""
    try:
        toks = tokenize(text)
    except UnterminatedQuoteError as exc:
        return diagnostic(number, exc.column, "K101", str(exc))
    if not toks:
        return None
    head, column = toks[0]
    kind = _KINDS.get(head.lower())
    if kind is None:
        message = (
            f"unknown statement {quoted(head)}; expected buy, sell, cancel, advance or stand down"
        )
        return column, False, diagnostic(number, column, "K100", message)
    try:
        return column, kind is _stand_down, kind(number, toks)
    except _Problem as problem:
        found = diagnostic(number, problem.column, problem.code, problem.message)
        return column, kind is _stand_down, found


_CACHE_MAX_CHARS = 1024

_remembered_line = lru_cache(maxsize=1024)(_line)
""":func:`_line` remembered for the lines of short sources: an agent repeats lines
(``advance 1``) in sources it does not repeat (``buy 37 ACME``, then ``buy 38 ACME``)."""


def parse(source: str) -> tuple[list[Statement], list[Diagnostic]]:
    """Statements in source order and the syntax diagnostics (see :func:`parse_located`)."""
    located, diagnostics = parse_located(source)
    return [item.statement for item in located], diagnostics
