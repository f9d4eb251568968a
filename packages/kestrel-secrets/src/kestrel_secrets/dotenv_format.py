"""Reading and editing ``.env`` text the way python-dotenv reads it, without losing a byte.

The grammar mirrors python-dotenv's parser (``dotenv.parser``, BSD-3-Clause) so a file
Kestrel writes means the same to every tool that loads it with python-dotenv, and so an
operator's hand-written lines (comments, ``export``, single quotes, lines python-dotenv
cannot parse) are recognised and left exactly as they were. Only the bindings of the
key being set or unset are rewritten.

Values are always written double-quoted, escaping only backslash, double quote, CR and
LF. Everything else (``$``, ``${X}``, ``#``, single quotes, tabs, leading or trailing
spaces, any Unicode) is literal inside double quotes, so any string round-trips through
``dotenv_values(path, interpolate=False)``. CR and LF must be escaped rather than
written raw because python-dotenv opens the file with universal newlines, which would
turn a raw CR into LF.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

__all__ = [
    "DotenvBinding",
    "DotenvEditError",
    "encode_value",
    "parse_dotenv",
    "remove_key",
    "render_assignment",
    "set_key",
]

_multiline_whitespace = re.compile(r"\s*", re.MULTILINE)
_whitespace = re.compile(r"[^\S\r\n]*")
_export = re.compile(r"(?:export[^\S\r\n]+)?")
_single_quoted_key = re.compile(r"'([^']+)'")
_unquoted_key = re.compile(r"([^=\#\s]+)")
_equal_sign = re.compile(r"(=[^\S\r\n]*)")
_single_quoted_value = re.compile(r"'((?:\\.|[^'\\])*)'", re.DOTALL)
_double_quoted_value = re.compile(r'"((?:\\.|[^"\\])*)"', re.DOTALL)
_unquoted_value = re.compile(r"([^\r\n]*)")
_comment = re.compile(r"(?:[^\S\r\n]*#[^\r\n]*)?")
_end_of_line = re.compile(r"[^\S\r\n]*(\r\n|\n|\r|$)")
_rest_of_line = re.compile(r"[^\r\n]*(?:\r|\n|\r\n)?")
_double_quote_escapes = re.compile(r"\\[\\'\"abfnrtv]")
_single_quote_escapes = re.compile(r"\\[\\']")
_inline_comment = re.compile(r"\s+#.*")


@dataclass(frozen=True, slots=True)
class DotenvBinding:
    """One parsed stretch of the file: ``text[start:end]`` is its exact original text.

    ``key`` is ``None`` for comments, blank tails and lines that do not parse;
    ``value`` is ``None`` for a bare ``KEY`` line. ``lead`` is the whitespace before
    the key (blank lines included) and ``export`` the ``export`` prefix, both kept when
    the binding is rewritten; ``eol`` is the line ending it had, reused so CRLF files
    stay CRLF.
    """

    start: int
    end: int
    key: str | None
    value: str | None
    lead: str = ""
    export: str = ""
    eol: str = ""
    malformed: bool = False

    @property
    def lead_lines(self) -> str:
        """The blank lines before the binding, without indentation of its own line."""
        cut = max(self.lead.rfind("\n"), self.lead.rfind("\r"))
        return self.lead[: cut + 1]


class _NoMatch(Exception):
    pass


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self, count: int) -> str:
        return self.text[self.pos : self.pos + count]

    def read_regex(self, regex: re.Pattern[str]) -> re.Match[str]:
        match = regex.match(self.text, self.pos)
        if match is None:
            raise _NoMatch
        self.pos = match.end()
        return match


def _decode(regex: re.Pattern[str], raw: str) -> str:
    return regex.sub(lambda m: codecs.decode(m.group(0), "unicode-escape"), raw)


def _parse_value(reader: _Reader) -> str:
    char = reader.peek(1)
    if char == "'":
        return _decode(_single_quote_escapes, reader.read_regex(_single_quoted_value).group(1))
    if char == '"':
        return _decode(_double_quote_escapes, reader.read_regex(_double_quoted_value).group(1))
    if char in ("", "\n", "\r"):
        return ""
    part = reader.read_regex(_unquoted_value).group(1)
    return _inline_comment.sub("", part).rstrip()


def _parse_binding(reader: _Reader) -> DotenvBinding:
    start = reader.pos
    try:
        lead = reader.read_regex(_multiline_whitespace).group(0)
        if reader.pos >= len(reader.text):
            return DotenvBinding(start, reader.pos, None, None, lead)
        export = reader.read_regex(_export).group(0)
        key: str | None
        if reader.peek(1) == "#":
            key = None
        elif reader.peek(1) == "'":
            key = reader.read_regex(_single_quoted_key).group(1)
        else:
            key = reader.read_regex(_unquoted_key).group(1)
        reader.read_regex(_whitespace)
        value: str | None = None
        if reader.peek(1) == "=":
            equal_sign = reader.read_regex(_equal_sign).group(1)
            # `KEY= # note` is an empty value and a comment; `KEY=#v` is the value "#v".
            comment_only = len(equal_sign) > 1 and reader.peek(1) == "#"
            value = "" if comment_only else _parse_value(reader)
        reader.read_regex(_comment)
        eol = reader.read_regex(_end_of_line).group(1)
        return DotenvBinding(start, reader.pos, key, value, lead, export, eol)
    except _NoMatch:
        # Like python-dotenv: skip to the end of the line where parsing stopped, which
        # may be several lines on when an unterminated quote swallowed them.
        reader.read_regex(_rest_of_line)
        return DotenvBinding(start, reader.pos, None, None, malformed=True)


def parse_dotenv(text: str) -> list[DotenvBinding]:
    """Every binding of ``text`` in order; their spans tile the text exactly.

    A leading byte-order mark is skipped as python-dotenv skips it (it stays in the
    text, outside every span, and is written back untouched).
    """
    reader = _Reader(text)
    if text.startswith("\ufeff"):
        reader.pos = 1
    out: list[DotenvBinding] = []
    while reader.pos < len(text):
        out.append(_parse_binding(reader))
    return out


def encode_value(value: str) -> str:
    """``value`` as a double-quoted python-dotenv value that decodes back to itself."""
    escaped = (
        value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    )
    return f'"{escaped}"'


def render_assignment(key: str, value: str) -> str:
    """The line body (no line ending) Kestrel writes for ``key``."""
    return f"{key}={encode_value(value)}"


def _prefix_end(text: str) -> int:
    return 1 if text.startswith("\ufeff") else 0


class DotenvEditError(ValueError):
    """An edit that the file's own malformed lines would change the meaning of.

    An unterminated quote on an operator's line swallows text up to the next matching
    quote, so a line Kestrel adds after it could be read as part of that value. Such an
    edit is refused (nothing is written) and the malformed line is named.
    """

    def __init__(self, key: str, line: int | None) -> None:
        where = f"line {line} cannot be parsed (an unterminated quote?)" if line else "it"
        super().__init__(
            f"editing {key} would change how other lines read because {where}; fix that line first"
        )
        self.key = key
        self.line = line


def _bindings(text: str) -> dict[str, str | None]:
    return {b.key: b.value for b in parse_dotenv(text) if b.key is not None}


def _checked(before: str, after: str, key: str, value: str | None, present: bool) -> str:
    """``after``, once proven to change the meaning of ``key`` alone."""
    old, new = _bindings(before), _bindings(after)
    old.pop(key, None)
    got_present = key in new
    got = new.pop(key, None)
    if old != new or got_present != present or (present and got != value):
        bad = next((b for b in parse_dotenv(before) if b.malformed), None)
        line = before.count("\n", 0, bad.start) + 1 if bad is not None else None
        raise DotenvEditError(key, line)
    return after


def set_key(text: str, key: str, value: str) -> str:
    """``text`` with ``key`` bound to ``value``; every other byte unchanged.

    The first binding of ``key`` is rewritten in place (keeping its leading
    whitespace, ``export`` and line ending); later duplicates are removed, since
    python-dotenv lets the last one win and a stale duplicate would shadow the new
    value. A missing key is appended on a line of its own. Raises
    :class:`DotenvEditError` when a malformed line would change what the edit means.
    """
    pieces: list[str] = [text[: _prefix_end(text)]]
    done = False
    for binding in parse_dotenv(text):
        if binding.key != key:
            pieces.append(text[binding.start : binding.end])
        elif not done:
            assignment = render_assignment(key, value)
            pieces.append(binding.lead + binding.export + assignment + binding.eol)
            done = True
        else:
            pieces.append(binding.lead_lines)
    if not done:
        if text and not text.endswith(("\n", "\r")):
            pieces.append("\n")
        pieces.append(render_assignment(key, value) + "\n")
    return _checked(text, "".join(pieces), key, value, present=True)


def remove_key(text: str, key: str) -> tuple[str, bool]:
    """``text`` without any binding of ``key``, and whether there was one.

    The blank lines before a removed binding are kept; its own line (with any inline
    comment) goes.
    """
    pieces: list[str] = [text[: _prefix_end(text)]]
    removed = False
    for binding in parse_dotenv(text):
        if binding.key == key:
            pieces.append(binding.lead_lines)
            removed = True
        else:
            pieces.append(text[binding.start : binding.end])
    return _checked(text, "".join(pieces), key, None, present=False), removed
