"""Cursor pagination of list results: deterministic pages, opaque offset cursors.

MCP's list methods page with :func:`page`; a tool that lists (the caller's sessions)
reads its ``cursor`` argument with :func:`offset_of` and says the next one with
:func:`next_cursor`, so both speak one cursor format.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..jsonrpc import INVALID_PARAMS
from .rpc import RpcError

__all__ = ["next_cursor", "offset_of", "page"]


def offset_of(cursor: Any, total: int) -> int:
    """The offset a cursor (``"o<offset>"``, ``""`` or ``None`` for the first page)
    asks for among ``total`` items; ``ValueError`` for anything else or past the end."""
    if cursor is None or cursor == "":
        return 0
    if not isinstance(cursor, str) or not (cursor.startswith("o") and cursor[1:].isdigit()):
        raise ValueError("not a cursor this list gave")
    start = int(cursor[1:])
    if start > total:
        raise ValueError("past the end of the list")
    return start


def next_cursor(end: int, total: int) -> str | None:
    """The cursor of the page after one ending at ``end`` (``None``: it was the last)."""
    return f"o{end}" if end < total else None


def page(key: str, items: Sequence[Any], cursor: Any, page_size: int) -> dict[str, Any]:
    """``{key: items on this page}`` and ``nextCursor`` when more follow.

    Cursors are ``"o<offset>"``; anything else (or past the end) is -32602.
    """
    try:
        start = offset_of(cursor, len(items))
    except ValueError:
        raise RpcError(INVALID_PARAMS, "Invalid cursor", {"cursor": cursor}) from None
    end = start + max(1, page_size)
    result: dict[str, Any] = {key: list(items[start:end])}
    following = next_cursor(end, len(items))
    if following is not None:
        result["nextCursor"] = following
    return result
