"""Wire forms the engine and the service build without a generic encoder: a JSON string
(:func:`quote`), a tape price's text (:class:`PriceTexts`), a canonical text's root
(:func:`text_root`) and a protocol model from members already in wire form
(:func:`construct`). Every step uses them, so each is as cheap as it can be made; the
tests compare what they give with ``json.dumps``, ``root_of`` and pydantic on every frame
of pinned sessions.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final, TypeVar

from pydantic import BaseModel

from .scaled import scaled_text

__all__ = ["PriceTexts", "construct", "json_or_null", "quote", "text_root"]

_ENCODE: Final = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
).encode


def quote(text: str) -> str:
    """``text`` as a JSON string, exactly as ``_ENCODE`` writes it: only ``"``, ``\\``
    and the controls below U+0020 are escaped, so a printable string without the first
    two is itself (anything else, printable or not, goes through the encoder)."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return _ENCODE(text)


_PRICES_MAX: Final = 1 << 14
"""Price texts remembered per price format (a tape's prices recur: a minute bar's four
prices are mostly ones seen in the bars before)."""
_PRICES: Final[dict[tuple[int, int], dict[int, str]]] = {}
"""The remembered texts, by ``(unit, places)``: shared by every session's builder, so
memory does not grow with the sessions a process holds."""


class PriceTexts:
    """``scaled_text(value // unit, places)``, a tape price as the frame shows it, with
    the format made once and recent texts remembered (a frame shows four prices per
    symbol and bar)."""

    def __init__(self, unit: int, places: int) -> None:
        self._unit = unit
        self._places = places
        self._size = 10**places
        self._format = f"{{}}.{{:0{places}d}}".format
        self._seen = _PRICES.setdefault((unit, places), {})

    def text(self, value: int) -> str:
        seen = self._seen
        found = seen.get(value)
        if found is not None:
            return found
        shown = value // self._unit
        places = self._places
        if not places:
            found = str(shown)
        elif shown < 0:
            found = scaled_text(shown, places)
        else:
            found = self._format(*divmod(shown, self._size))
        if len(seen) >= _PRICES_MAX:
            seen.clear()
        seen[value] = found
        return found


def text_root(text: str) -> str:
    """The root of a canonical JSON text (``sha256:`` and the hex digest of its UTF-8)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


M = TypeVar("M", bound=BaseModel)


def construct(cls: type[M], members: dict[str, Any], given: set[str] | None = None) -> M:
    """``cls.model_construct`` of ``members``, which hold every field by its Python name
    (values already in wire form); ``given`` names those that are dumped (default: all).
    Nothing is validated: the caller made every member itself."""
    return cls.model_construct(set(members) if given is None else given, **members)


def json_or_null(text: str | None) -> str:
    """``text`` as a JSON string, or ``null``."""
    return "null" if text is None else quote(text)
