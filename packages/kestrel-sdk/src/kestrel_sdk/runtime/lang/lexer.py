"""Split one source line into located tokens.

A token is its text as written and its 1-based column, so a diagnostic points at exactly
the character an editor shows. A ``#`` outside a quoted string starts a comment; a token
that begins with ``"`` runs to the next unescaped ``"`` (the stand-down reason), spaces
included, and is the only kind of token that holds a ``"``. Inside it ``\\"`` stands for
``"`` and ``\\\\`` for ``\\``; any other backslash is itself.

One compiled pattern finds every token of a line; it never backtracks into a token it
has found, so a line costs time in proportion to its length.
"""

from __future__ import annotations

import re

__all__ = ["Token", "UnterminatedQuoteError", "is_quoted", "tokenize", "unquote"]

Token = tuple[str, int]
"""A word of a line: its text as written and its 1-based column."""

_QUOTED = r'"[^"\\]*(?:\\.[^"\\]*)*"'
# A word (up to a space, a comment or a quote), a quoted string, a comment (to the end of
# the line), or a quote no other quote closes (also to the end: the line stops there).
_TOKEN = re.compile(rf'[^ \t\f\v\r#"]+|{_QUOTED}|#.*|".*', re.DOTALL)
_CLOSED = re.compile(_QUOTED, re.DOTALL)
_ESCAPE = re.compile(r'\\(["\\])')


class UnterminatedQuoteError(ValueError):
    """A ``"`` with no closing ``"`` on the same line."""

    def __init__(self, column: int) -> None:
        super().__init__(f"unterminated quoted string at column {column}")
        self.column = column


def tokenize(line: str) -> list[Token]:
    """The tokens of ``line`` up to its comment; raises :class:`UnterminatedQuoteError`."""
    tokens: list[Token] = []
    end = 0
    for text in _TOKEN.findall(line):  # (no match objects: a token's column is found after)
        # between two tokens lie only the spaces the pattern skips, so a token's text is
        # found first where it starts
        start = line.find(text, end)
        tokens.append((text, start + 1))
        end = start + len(text)
    if tokens:
        text, column = tokens[-1]
        if text[0] == "#":
            tokens.pop()
        elif text[0] == '"' and _CLOSED.fullmatch(text) is None:
            raise UnterminatedQuoteError(column)
    return tokens


def is_quoted(text: str) -> bool:
    """Whether a token's text is a quoted string."""
    return text[0] == '"'


def unquote(text: str) -> str:
    """A quoted token's text between its quotes, escapes resolved."""
    return _ESCAPE.sub(r"\1", text[1:-1])
