"""Split one source line into located tokens.

Columns are 1-based character positions so a diagnostic points at exactly the
character an editor shows. A ``#`` outside a quoted string starts a comment; a token
that begins with ``"`` runs to the next unescaped ``"`` (the stand-down reason), spaces
included. Inside it ``\\"`` stands for ``"`` and ``\\\\`` for ``\\``; any other backslash is
itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Token", "UnterminatedQuoteError", "tokenize"]

_SPACE = frozenset(" \t\f\v\r")
_ESCAPE = re.compile(r'\\(["\\])')


@dataclass(frozen=True, slots=True)
class Token:
    """A word of a line: its text as written, its 1-based column, and whether quoted."""

    text: str
    column: int
    quoted: bool = False

    @property
    def end(self) -> int:
        """The column just after the token (where a missing next token is reported)."""
        return self.column + len(self.text)

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def content(self) -> str:
        """A quoted token's text between its quotes, escapes resolved."""
        return _ESCAPE.sub(r"\1", self.text[1:-1])


class UnterminatedQuoteError(ValueError):
    """A ``"`` with no closing ``"`` on the same line."""

    def __init__(self, column: int) -> None:
        super().__init__(f"unterminated quoted string at column {column}")
        self.column = column


def tokenize(line: str) -> list[Token]:
    """The tokens of ``line`` up to its comment; raises :class:`UnterminatedQuoteError`."""
    tokens: list[Token] = []
    i = 0
    n = len(line)
    while i < n:
        ch = line[i]
        if ch in _SPACE:
            i += 1
            continue
        if ch == "#":
            break
        start = i
        if ch == '"':
            close = _closing_quote(line, i + 1)
            if close < 0:
                raise UnterminatedQuoteError(start + 1)
            tokens.append(Token(line[start : close + 1], start + 1, quoted=True))
            i = close + 1
            continue
        while i < n and line[i] not in _SPACE and line[i] != "#" and line[i] != '"':
            i += 1
        tokens.append(Token(line[start:i], start + 1))
    return tokens


def _closing_quote(line: str, i: int) -> int:
    """The index of the ``"`` closing a quoted token whose text starts at ``i``, or -1."""
    n = len(line)
    while i < n:
        ch = line[i]
        if ch == '"':
            return i
        i += 2 if ch == "\\" and i + 1 < n and line[i + 1] in '"\\' else 1
    return -1
