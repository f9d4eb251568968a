"""How a refusal or a diagnostic quotes what was sent, on every face.

A message names what was wrong by quoting it, but never repeats a long input back to its
sender (a 64 KiB source token, a tool or argument name, a URI): an input of up to
:data:`QUOTE_MAX` characters is quoted whole, a longer one by its first
:data:`QUOTE_MAX` characters and how long it was, e.g.
``'xxxx…xxxx'… (60000 characters)``. :data:`QUOTE_MAX` is 128, the longest id, label,
symbol or cursor any face accepts, so no bounded argument is ever clipped, nor any
diagnostic of the parser corpus (its longest quoted token has 33 characters).

:func:`counted` says how many of a thing a line is about, in the number's own form
(``1 proof``, ``2 proofs``), so no face prints "1 proofs".
"""

from __future__ import annotations

from typing import Final

__all__ = ["QUOTE_MAX", "clipped", "counted", "quoted"]

QUOTE_MAX: Final = 128
"""The most characters of an input a refusal or diagnostic quotes."""


def clipped(text: str) -> str:
    """``text`` when it is short, else its first :data:`QUOTE_MAX` characters, marked."""
    if len(text) <= QUOTE_MAX:
        return text
    return f"{text[:QUOTE_MAX]}… ({len(text)} characters)"


def quoted(text: str) -> str:
    """``repr(text)`` when it is short, else that of its first :data:`QUOTE_MAX`
    characters, marked clipped and with the length it had."""
    if len(text) <= QUOTE_MAX:
        return repr(text)
    return f"{text[:QUOTE_MAX]!r}… ({len(text)} characters)"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the noun plural unless the count is one: ``1 proof``,
    ``0 proofs``, ``3 news items``; ``plural`` where adding ``s`` is wrong."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {plural if plural is not None else noun + 's'}"
