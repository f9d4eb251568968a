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
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

from pydantic import BaseModel
from pydantic_core import SchemaValidator, core_schema

from .scaled import scaled_text

__all__ = ["PriceTexts", "builder", "construct", "json_or_null", "quote", "text_root"]

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

    __slots__ = ("_format", "_places", "_seen", "_size", "_unit")

    def __init__(self, unit: int, places: int) -> None:
        self._unit = unit
        self._places = places
        self._size = 10**places
        self._format = f"{{}}.{{:0{places}d}}".format
        self._seen = _PRICES.setdefault((unit, places), {})

    def text(self, value: int) -> str:
        """``value``'s text (a text is never empty: a miss is ``None``)."""
        return self._seen.get(value) or self._new(value)

    def bar(self, o: int, h: int, lo: int, c: int) -> tuple[str, str, str, str]:
        """The texts of a bar's open, high, low and close, in one call (every frame of a
        new bar shows them)."""
        seen = self._seen
        return (
            seen.get(o) or self._new(o),
            seen.get(h) or self._new(h),
            seen.get(lo) or self._new(lo),
            seen.get(c) or self._new(c),
        )

    def _new(self, value: int) -> str:
        """``value``'s text made and remembered."""
        seen = self._seen
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


_sha256: Final = hashlib.sha256


def text_root(text: str) -> str:
    """The root of a canonical JSON text (``sha256:`` and the hex digest of its UTF-8)."""
    return "sha256:" + _sha256(text.encode()).hexdigest()  # (UTF-8, the default)


M = TypeVar("M", bound=BaseModel)

Builder = Callable[[dict[str, Any]], Any]
_BUILDERS: Final[dict[type[Any], Builder]] = {}
"""Per model class, pydantic-core's validator of a model schema whose fields take any
value as it is (so building an object checks nothing and converts nothing)."""


def _builder(cls: type[BaseModel]) -> Builder:
    """A validator that builds ``cls`` from its members (by Python name), unchecked:
    pydantic-core's public ``model_schema`` with every field ``any`` and the class's own
    defaults, so the object is what ``cls.model_construct`` makes of the same members
    (the same member order, the members given as its fields set), at a fraction of the
    cost."""
    fields: dict[str, core_schema.ModelField] = {}
    for name, info in cls.model_fields.items():
        value: core_schema.CoreSchema = core_schema.any_schema()
        if info.default_factory is not None:
            value = core_schema.with_default_schema(
                value, default_factory=info.default_factory, default_factory_takes_data=False
            )
        elif not info.is_required():
            value = core_schema.with_default_schema(value, default=info.default)
        fields[name] = core_schema.model_field(value)
    extra = cls.model_config.get("extra")
    schema = core_schema.model_schema(
        cls, core_schema.model_fields_schema(fields, extra_behavior=extra or "ignore")
    )
    return SchemaValidator(schema).validate_python


def builder(cls: type[M]) -> Callable[[dict[str, Any]], M]:
    """What :func:`construct` calls for ``cls``, for a caller that builds many (made
    once per class and kept)."""
    build = _BUILDERS.get(cls)
    if build is None:
        build = _BUILDERS[cls] = _builder(cls)
    return cast("Callable[[dict[str, Any]], M]", build)  # a string: not subscripted per call


def construct(cls: type[M], members: dict[str, Any]) -> M:
    """``cls`` built from ``members``, which hold its fields by Python name, values
    already in wire form: nothing is validated, the caller made every member itself.
    The members given are the model's fields set (what it dumps); a field not given
    takes its default. A frame and its parts are built on every step, so this is
    pydantic-core's public model schema (see :func:`_builder`), not
    ``model_construct``'s per-field loop in Python."""
    return builder(cls)(members)


def json_or_null(text: str | None) -> str:
    """``text`` as a JSON string, or ``null``."""
    return "null" if text is None else quote(text)
