"""The compiled runtime's dump of protocol objects (``_dump.c``), used by every face.

``ProtocolModel.to_json`` (a tool result's data, on stdio and the door) is pydantic's
``model_dump(mode="json", by_alias=True, exclude_unset=True)``. When the compiled runtime
runs, :func:`install` puts the C dump first (``kestrel_protocol.model.use_dumper``): the
same data for the objects it accepts, ``None`` for the rest, which pydantic then dumps.
A class's *plan* says how: its fields, each with its key and the model classes its
annotation names (members are dumped in the order of the object's ``__dict__``, as
pydantic dumps them) (a nested object of another class declines the dump, as
pydantic would dump it by the annotation, not by its class). A class that customizes its
serialization (a serializer of its own or in an annotation, a computed or excluded field,
a root model) has no plan: its objects are always pydantic's.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Final

from kestrel_protocol.model import ProtocolModel, use_dumper
from pydantic import BaseModel, RootModel
from pydantic.functional_serializers import PlainSerializer, WrapSerializer

from . import native
from .engine.wire import MODEL_SLOTS

__all__ = ["install", "plan"]

Plan = dict[str, tuple[str, frozenset[type[Any]]]]

_PLANS: Final[dict[type[Any], Plan | None]] = {}
_SERIALIZERS: Final = (PlainSerializer, WrapSerializer)


def plan(cls: type[Any]) -> Plan | None:
    """How the C dump writes objects of ``cls``, or ``None``: pydantic must."""
    if not (isinstance(cls, type) and issubclass(cls, ProtocolModel)) or issubclass(cls, RootModel):
        return None
    decorators = cls.__pydantic_decorators__
    if decorators.field_serializers or decorators.model_serializers or cls.model_computed_fields:
        return None
    entries: Plan = {}
    for name, info in cls.model_fields.items():
        if info.exclude or info.exclude_if is not None:
            return None
        if any(isinstance(m, _SERIALIZERS) for m in info.metadata):
            return None
        models: set[type[Any]] = set()
        if not _annotation_models(info.annotation, models):
            return None
        entries[name] = (info.serialization_alias or info.alias or name, frozenset(models))
    return entries


def _annotation_models(annotation: Any, found: set[type[Any]]) -> bool:
    """Add the model classes ``annotation`` names to ``found``; ``False`` when it carries
    a serializer of its own (then the class has no plan)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found.add(annotation)
        return True
    if typing.get_origin(annotation) is typing.Annotated and any(
        isinstance(m, _SERIALIZERS) for m in annotation.__metadata__
    ):
        return False
    args = typing.get_args(annotation)
    if isinstance(annotation, types.UnionType) or args:
        return all(_annotation_models(arg, found) for arg in args)
    return True


def _plan_for(cls: type[Any]) -> None:
    _PLANS[cls] = plan(cls)


def install() -> bool:
    """Put the C dump first in ``ProtocolModel.to_json``; ``False`` when the runtime is
    pure Python (pydantic dumps every object)."""
    configure = native.c_function("_dump", "configure")
    if configure is None:
        return False
    configure(_PLANS, _plan_for, MODEL_SLOTS[:2])  # fields set, extras
    use_dumper(native.c_function("_dump", "dump"))
    return True
