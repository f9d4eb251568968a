"""Cursor pagination of MCP list results: deterministic pages, opaque offset cursors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..jsonrpc import INVALID_PARAMS
from .rpc import RpcError

__all__ = ["page"]


def page(key: str, items: Sequence[Any], cursor: Any, page_size: int) -> dict[str, Any]:
    """``{key: items on this page}`` and ``nextCursor`` when more follow.

    Cursors are ``"o<offset>"``; anything else (or past the end) is -32602.
    """
    start = 0
    if cursor is not None:
        if not isinstance(cursor, str) or not (
            cursor == "" or (cursor.startswith("o") and cursor[1:].isdigit())
        ):
            raise RpcError(INVALID_PARAMS, "Invalid cursor", {"cursor": cursor})
        start = int(cursor[1:]) if cursor else 0
        if start > len(items):
            raise RpcError(INVALID_PARAMS, "Invalid cursor", {"cursor": cursor})
    end = start + max(1, page_size)
    result: dict[str, Any] = {key: list(items[start:end])}
    if end < len(items):
        result["nextCursor"] = f"o{end}"
    return result
