"""The grammar of docs/spec.md §3: source text to statements, or K1xx diagnostics.

Each statement line yields either one statement or exactly one diagnostic (the first
thing wrong with it), so an agent fixes one clear problem per line. Columns point at
the first character of the offending token; when a token is *missing*, the column is
the one just after the previous token (``buy`` at column 1 → column 4).

Statements keep the columns of their parts (:class:`.syntax.Located`) so the scenario
and session checks (K2xx) can point at the symbol, price or reference they reject. An
order line is :mod:`.orders`'s; the words every line reads, :mod:`.words`'s.

Tokens are ``(text, column)`` pairs. Only a quoted token holds a ``"``, so it never reads
as a keyword, number, symbol, alias or timestamp: only a stand-down reason asks for one.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

from kestrel_protocol import Diagnostic, KestrelError, RefusalCode, quoted

from .lexer import Token, UnterminatedQuoteError, is_quoted, tokenize, unquote
from .orders import read_order
from .syntax import Advance, Cancel, Located, StandDownStatement, Statement, WaitingAdvance
from .words import ALIAS as _ALIAS
from .words import ORDER_ID as _ORDER_ID
from .words import Problem as _Problem
from .words import count as _count
from .words import missing as _missing
from .words import symbol as _symbol
from .words import unexpected as _unexpected

__all__ = [
    "MAX_SOURCE_BYTES",
    "MAX_STATEMENTS",
    "check_limits",
    "diagnostic",
    "parse",
    "parse_located",
]

MAX_SOURCE_BYTES = 64 * 1024
MAX_STATEMENTS = 10_000

_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]{1,9})?)?"
    r"(Z|\+00:00)"
)

_BOM = "\ufeff"


def diagnostic(line: int, column: int, code: str, message: str) -> Diagnostic:
    """An error diagnostic (Kestrel has no warnings yet)."""
    return Diagnostic(line=line, column=column, code=code, severity="error", message=message)


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
    "buy": read_order,
    "sell": read_order,
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
