"""How verification names what differs: the first mismatch found, raised as
:class:`MismatchFound` and reported as a ``Mismatch`` (field, expected, found), and the
comparisons that raise it (one value, or every leaf of JSON data, content before roots).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kestrel_protocol import Mismatch, counted

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


def _equal(expected: object, found: object) -> bool:
    """Equal as JSON values: ``true`` is not ``1`` (as it is to Python), a list's items in
    their order; numbers by value (``200`` and ``200.0`` are one canonical number)."""
    if isinstance(expected, bool) or isinstance(found, bool):
        return type(expected) is type(found) and expected == found
    if isinstance(expected, dict) and isinstance(found, dict):
        return expected.keys() == found.keys() and all(
            _equal(v, found[k]) for k, v in expected.items()
        )
    if isinstance(expected, list) and isinstance(found, list):
        return len(expected) == len(found) and all(map(_equal, expected, found))
    return expected == found


def same(field: str, expected: object, found: object) -> None:
    if not _equal(expected, found):
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
    """Every leaf of ``expected`` against ``presented`` (then any extra leaf of it), then
    their shape: leaves are named by item ids, so an item given twice or items reordered
    are named by position (the root covers the items in their order, each once)."""
    found = dict(flatten(presented, prefix))
    for path, value in sorted(flatten(expected, prefix), key=_root_last):
        same(path, value, found.pop(path, "(absent)"))
    for path, value in found.items():
        same(path, "(absent)", value)
    _same_shape(prefix, expected, presented)


def _same_shape(path: str, expected: Any, presented: Any) -> None:
    """The first list whose items differ in number or order (their leaves already agree)."""
    if isinstance(expected, dict) and isinstance(presented, dict):
        for key, value in expected.items():
            _same_shape(f"{path}.{key}" if path else key, value, presented.get(key))
    elif isinstance(expected, list) and isinstance(presented, list):
        if len(expected) != len(presented):
            said = counted(len(expected), "item"), counted(len(presented), "item")
            raise MismatchFound(path, *said)
        for index, (item, given) in enumerate(zip(expected, presented, strict=True)):
            if not _equal(item, given):
                name = item.get("id") if isinstance(item, dict) else None
                field = f"{path}[{index}]" + (".id" if isinstance(name, str) else "")
                found = given.get("id") if isinstance(given, dict) else given
                raise MismatchFound(field, name if isinstance(name, str) else item, found)


def member(data: dict[str, Any], name: str, kind: type) -> Any:
    value = data.get(name)
    if not isinstance(value, kind):
        raise MismatchFound(name, f"a {'list' if kind is list else 'JSON object'}", as_text(value))
    return value
