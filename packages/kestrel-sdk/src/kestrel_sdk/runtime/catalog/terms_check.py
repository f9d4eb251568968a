"""Checking a ``scenario.toml``: every fault found, each with the line it is on.

``tomllib`` gives no positions for values, so a small scan of the text finds the line of
a key inside its table; a user fixing a scenario wants ``scenario.toml:12``, not a dump.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

__all__ = ["TermsChecker", "TermsProblem", "control_character"]

_DECIMAL = re.compile(r"(0|[1-9][0-9]*)(\.[0-9]+)?")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Characters no shown text holds: a terminal's escapes and bells, direction overrides."""
_BREAK = re.compile(r"[\t\n\r]")
_LINE_BREAK = re.compile(r"[\n\r]")


def control_character(
    text: str, *, lines: bool = False, tabs: bool = False
) -> re.Match[str] | None:
    """The first character of ``text`` no listing shows as it is: a control character
    (a line break too, unless ``lines``; a tab too, unless ``lines`` or ``tabs``), or
    ``None``."""
    found = _CONTROL.search(text)
    if found is not None or lines:
        return found
    return (_LINE_BREAK if tabs else _BREAK).search(text)


_WHOLE_DIGITS = 18
"""The most digits before a decimal's point (more would pass Decimal's 28-digit precision
where the engine computes with it)."""
_TABLE_HEADER = re.compile(r"\s*(\[\[?)\s*([A-Za-z0-9_.\- ]+?)\s*\]\]?\s*(#.*)?$")
_KEY_LINE = re.compile(r"\s*([A-Za-z0-9_\-]+|\"[^\"]*\")\s*=")


@dataclass(frozen=True, slots=True)
class TermsProblem:
    """One fault in a ``scenario.toml`` (``line`` is 1-based, ``None`` when unknown)."""

    line: int | None
    reason: str


class _Locator:
    """Finds the line of ``key`` inside a table (``""`` = top level), best effort."""

    def __init__(self, text: str) -> None:
        self._lines: dict[tuple[str, int, str], int] = {}
        self._headers: dict[tuple[str, int], int] = {}
        table, index = "", 0
        counts: dict[str, int] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            header = _TABLE_HEADER.match(line)
            if header and not _KEY_LINE.match(line):
                table = header.group(2).strip()
                if header.group(1) == "[[":
                    index = counts.get(table, 0)
                    counts[table] = index + 1
                else:
                    index = 0
                self._headers.setdefault((table, index), number)
                continue
            key = _KEY_LINE.match(line)
            if key:
                name = key.group(1).strip('"')
                self._lines.setdefault((table, index, name), number)

    def line(self, table: str, key: str | None, index: int = 0) -> int | None:
        if key is not None:
            found = self._lines.get((table, index, key))
            if found is not None:
                return found
        return self._headers.get((table, index))


class TermsChecker:
    """Collects every fault of a ``scenario.toml`` with its line; ``table_keys`` names
    the keys each table allows."""

    def __init__(self, text: str, table_keys: Mapping[str, tuple[str, ...]]) -> None:
        self.locate = _Locator(text)
        self._table_keys = table_keys
        self.problems: list[TermsProblem] = []

    def fault(self, table: str, key: str | None, reason: str, index: int = 0) -> None:
        self.problems.append(TermsProblem(self.locate.line(table, key, index), reason))

    @staticmethod
    def _name(table: str, key: str, index: int | None = None) -> str:
        if not table:
            return key
        where = f"{table}[{index}]" if index is not None else table
        return f"{where}.{key}"

    def text(self, data: dict[str, Any], table: str, key: str, *, required: bool = True) -> str:
        value = data.get(key)
        if value is None:
            if required:
                self.fault(table, None, f"missing {self._name(table, key)}")
            return ""
        if not isinstance(value, str):
            self.fault(table, key, f"{self._name(table, key)} must be a string")
            return ""
        return value

    def shown(self, table: str, key: str, value: str, *, lines: bool = False) -> None:
        """A fault when ``value``, shown as it is by every listing, holds a control
        character (a line break or tab too, unless ``lines``)."""
        found = control_character(value, lines=lines)
        if found is not None:
            self.fault(
                table,
                key,
                f"{self._name(table, key)} holds the control character {found[0]!r} "
                f"(character {found.start() + 1})",
            )

    def decimal(
        self,
        data: dict[str, Any],
        table: str,
        key: str,
        *,
        low: Decimal | None = None,
        high: Decimal | None = None,
        positive: bool = False,
        index: int | None = None,
    ) -> str:
        name = self._name(table, key, index)
        at = 0 if index is None else index
        value = data.get(key)
        if value is None:
            self.fault(table, None, f"missing {name}", at)
            return "0"
        if not isinstance(value, str) or not _DECIMAL.fullmatch(value):
            self.fault(
                table,
                key,
                f'{name} must be a decimal string such as "0.01" (quoted, no sign or exponent),'
                f" not {value!r}",
                at,
            )
            return "0"
        if len(value.partition(".")[0]) > _WHOLE_DIGITS:
            self.fault(table, key, f"{name} is too large ({value})", at)
            return "0"
        number = Decimal(value)
        if positive and number <= 0:
            self.fault(table, key, f"{name} must be greater than 0, not {value}", at)
        if low is not None and number < low:
            self.fault(table, key, f"{name} must be at least {low}, not {value}", at)
        if high is not None and number > high:
            self.fault(table, key, f"{name} must be at most {high}, not {value}", at)
        return value

    def integer(
        self, data: dict[str, Any], table: str, key: str, *, low: int, index: int | None = None
    ) -> int:
        name = self._name(table, key, index)
        at = 0 if index is None else index
        value = data.get(key)
        if value is None:
            self.fault(table, None, f"missing {name}", at)
            return low
        if isinstance(value, bool) or not isinstance(value, int):
            self.fault(table, key, f"{name} must be an integer, not {value!r}", at)
            return low
        if value < low:
            self.fault(table, key, f"{name} must be at least {low}, not {value}", at)
            return low
        if value > 2**53 - 1:
            self.fault(table, key, f"{name} is too large ({value})", at)
            return low
        return value

    def table(self, data: dict[str, Any], name: str) -> dict[str, Any]:
        value = data.get(name)
        if value is None:
            self.fault("", None, f"missing table [{name}]")
            return {}
        if not isinstance(value, dict):
            self.fault("", name, f"{name} must be a table [{name}]")
            return {}
        for key in value:
            if key not in self._table_keys[name]:
                self.fault(name, key, f"unknown key {key!r} in [{name}]")
        return value
