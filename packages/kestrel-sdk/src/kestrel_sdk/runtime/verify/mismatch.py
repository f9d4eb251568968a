"""How verification names what differs: the first mismatch found, raised as
:class:`MismatchFound` and reported as a ``Mismatch`` (field, expected, found), and the
comparisons that raise it (one value, or every leaf of JSON data, content before roots).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kestrel_protocol import Mismatch

__all__ = ["MismatchFound", "as_text", "compare", "flatten", "member", "same"]


class MismatchFound(Exception):
    """The first field that differs: ``mismatch`` is what the report names."""

    def __init__(self, field: str, expected: object, found: object) -> None:
        super().__init__(field)
        self.mismatch = Mismatch(field=field, expected=as_text(expected), found=as_text(found))


def as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def same(field: str, expected: object, found: object) -> None:
    if expected != found:
        raise MismatchFound(field, expected, found)


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Leaves of JSON data as ``(path, value)``; list items with an ``id`` are named by it."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from flatten(item, f"{prefix}.{key}" if prefix else key)
    elif isinstance(value, list):
        if not value:
            yield prefix, "[]"
        for index, item in enumerate(value):
            name = item.get("id") if isinstance(item, dict) else None
            yield from flatten(item, f"{prefix}[{name if isinstance(name, str) else index}]")
    else:
        yield prefix, value


def _root_last(leaf: tuple[str, Any]) -> tuple[int, int]:
    """Content before roots, inner roots before outer ones: a changed member is named
    rather than the root that no longer covers it."""
    path = leaf[0]
    if path == "root" or path.endswith(".root"):
        return 1, -path.count(".")
    return 0, 0


def compare(prefix: str, expected: Any, presented: Any) -> None:
    """Every leaf of ``expected`` against ``presented`` (then any extra leaf of it)."""
    found = dict(flatten(presented, prefix))
    for path, value in sorted(flatten(expected, prefix), key=_root_last):
        same(path, value, found.pop(path, "(absent)"))
    for path, value in found.items():
        same(path, "(absent)", value)


def member(data: dict[str, Any], name: str, kind: type) -> Any:
    value = data.get(name)
    if not isinstance(value, kind):
        raise MismatchFound(name, f"a {'list' if kind is list else 'JSON object'}", as_text(value))
    return value
