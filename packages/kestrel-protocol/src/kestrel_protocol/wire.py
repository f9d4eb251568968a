"""A protocol object carried as its JSON text, the object built on first use.

The runtime writes what a step made as text (a frame's canonical text is what its root
hashes); a face that sends JSON splices that text, and only a caller that reads the
object pays for building it. :class:`Wire` is that pairing.

Building the object from text the runtime wrote itself needs no validation: every
member is already in wire form. :func:`text_builder` makes, once per class, a
pydantic-core validator of a model schema whose leaves take any value as it is and whose
nested models, lists and maps of models are built the same way, members read by their
wire names (camelCase). It gives the object ``cls.model_validate_json`` gives for the
same text (the same members set, extra members kept), without the checks (decimal
patterns, roots): a test compares the two on every frame of pinned sessions.
"""

from __future__ import annotations

import json
import os
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, Generic, TypeVar, Union, cast

from pydantic import BaseModel
from pydantic_core import SchemaValidator, core_schema

from .canonical import DECLINED, canonical_json, own_loads
from .model import save_canonical

__all__ = ["Wire", "data_builder", "own_data", "text_builder"]

M = TypeVar("M", bound=BaseModel)

_BUILDERS: Final[dict[type[Any], Callable[[str | bytes], Any]]] = {}
_DATA_BUILDERS: Final[dict[type[Any], Callable[[Any], Any]]] = {}


def _value_schema(annotation: Any, where: str) -> core_schema.CoreSchema:
    """The schema of a member: a model, a list or map of models, either optional, or a
    leaf (anything else: taken as it is)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _value_schema(typing.get_args(annotation)[0], where)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _model_schema(annotation)
    if origin in (Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = len(members) < len(typing.get_args(annotation))
        inner = [_value_schema(a, where) for a in members]
        if all(s["type"] == "any" for s in inner):
            return core_schema.any_schema()
        if len(inner) == 1 and nullable:
            return core_schema.nullable_schema(inner[0])
        raise TypeError(f"{where}: a union of models ({annotation}) has no text builder")
    if origin is list:
        (item,) = typing.get_args(annotation)
        items = _value_schema(item, where)
        if items["type"] == "any":
            return core_schema.any_schema()
        return core_schema.list_schema(items)
    if origin is dict:
        _, value = typing.get_args(annotation)
        values = _value_schema(value, where)
        if values["type"] == "any":
            return core_schema.any_schema()
        return core_schema.dict_schema(core_schema.str_schema(), values)
    return core_schema.any_schema()


def _model_schema(cls: type[BaseModel]) -> core_schema.CoreSchema:
    fields: dict[str, core_schema.ModelField] = {}
    for name, info in cls.model_fields.items():
        value = _value_schema(info.annotation, f"{cls.__name__}.{name}")
        if info.default_factory is not None:
            value = core_schema.with_default_schema(
                value, default_factory=info.default_factory, default_factory_takes_data=False
            )
        elif not info.is_required():
            value = core_schema.with_default_schema(value, default=info.default)
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        fields[name] = core_schema.model_field(value, validation_alias=alias or name)
    extra = cls.model_config.get("extra")
    return core_schema.model_schema(
        cls, core_schema.model_fields_schema(fields, extra_behavior=extra or "ignore")
    )


def text_builder(cls: type[M]) -> Callable[[str | bytes], M]:
    """A function building ``cls`` from JSON text (or its UTF-8 bytes) the caller wrote
    itself, unchecked (made once per class and kept)."""
    build = _BUILDERS.get(cls)
    if build is None:
        build = _BUILDERS[cls] = SchemaValidator(_model_schema(cls)).validate_json
    return cast("Callable[[str | bytes], M]", build)  # a string: not subscripted per call


def data_builder(cls: type[M]) -> Callable[[dict[str, Any]], M]:
    """A function building ``cls`` in one call from JSON data the caller made itself
    (members by their wire names), unchecked, as :func:`text_builder` builds it from
    text: nested objects given as dicts are built too, objects already built are taken
    as they are (made once per class and kept)."""
    build = _DATA_BUILDERS.get(cls)
    if build is None:
        build = _DATA_BUILDERS[cls] = SchemaValidator(_model_schema(cls)).validate_python
    return cast("Callable[[dict[str, Any]], M]", build)  # a string: not subscripted per call


def own_data(text: str) -> Any:
    """The JSON value of ``text`` Kestrel wrote itself (no float, no integer beyond
    ±(2**53-1)): read by orjson where it reads it as ``json`` does
    (:func:`~kestrel_protocol.canonical.own_loads`), else by ``json`` (a lone surrogate,
    deep nesting, no orjson)."""
    try:
        data = own_loads(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate, which UTF-8 cannot hold: json reads it
        data = DECLINED
    return json.loads(text) if data is DECLINED else data


class Wire(Generic[M]):
    """A protocol object of class ``cls`` as its compact JSON text (the same JSON value
    as the object's ``to_json()``; members may be in another order, a frame's are in
    canonical order), the object made on the first call of :meth:`model`.
    ``canonical``: the text is the object's canonical JSON (RFC 8785), as a proof's is.

    A writer that holds the values the object is made of may subclass it and write the
    text (:meth:`make_text`) or make the object (:meth:`make`) from them, each only when
    asked for; by default the text is given and the object is built from it.
    """

    __slots__ = ("_canonical", "_model", "_text", "cls")

    def __init__(self, cls: type[M], text: str | None = None, *, canonical: bool = False) -> None:
        self.cls: Final = cls
        self._text = text
        self._canonical = canonical
        self._model: M | None = None

    @property
    def text(self) -> str:
        """The object's JSON text (written once, when first asked for)."""
        text = self._text
        if text is None:
            text = self._text = self.make_text()
        return text

    def make_text(self) -> str:
        """Write the text (a subclass that was given none writes it here)."""
        raise TypeError(f"{type(self).__name__} was given no text and writes none")

    def make(self) -> M:
        """Make the object (by default from :attr:`text`, without re-validating it)."""
        return text_builder(self.cls)(self.text)

    def model(self) -> M:
        """The object (made once, when first asked for)."""
        found = self._model
        if found is None:
            found = self._model = self.make()
        return found

    def to_json(self) -> dict[str, Any]:
        """The text as JSON data (a fresh dict); a writer holding the values may make it
        from them instead (the same value)."""
        data = own_data(self.text)
        if not isinstance(data, dict):
            raise TypeError(f"a {self.cls.__name__} is a JSON object, not {self.text[:40]!r}")
        return data

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Save the object to ``path`` as its canonical bytes and a newline, as a protocol
        object's ``write`` does (:func:`~kestrel_protocol.model.save_canonical`): the text
        as it is when it is canonical, else made canonical; no object is made."""
        if self._canonical:
            return save_canonical(path, self.text.encode("utf-8", "surrogatepass"))
        return save_canonical(path, canonical_json(self.to_json()))

    def __repr__(self) -> str:
        return f"Wire({self.cls.__name__})"
