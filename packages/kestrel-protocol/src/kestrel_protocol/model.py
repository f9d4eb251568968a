"""The base every protocol object is built on: camelCase, immutable, lossless.

Lossless means a parsed-then-dumped object has the same canonical bytes as its input:
unknown members are kept (``extra="allow"``) and re-emitted, an optional member that
was absent stays absent, and one that was ``null`` stays ``null``. The rule that makes
this work: a member is dumped when it was given, or when it has a non-``None`` value
(so defaults such as ``kind`` are always present).
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Annotated, Any, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationInfo, model_validator
from pydantic.alias_generators import to_camel

from .canonical import canonical_json, root_of

__all__ = [
    "DecimalStr",
    "ProtocolModel",
    "RootMismatchError",
    "RootStr",
    "SelfRooted",
    "money",
    "ratio",
]

_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?")
_ROOT = re.compile(r"sha256:[0-9a-f]{64}")
_CENT = Decimal("0.01")
_DRAFT = "kestrel.draft"
_PLACEHOLDER_ROOT = "sha256:" + "0" * 64
_RATIO = Decimal("0.00000001")


def _check_decimal(text: str) -> str:
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f'{text!r} is not a decimal string like "101.25"')
    return text


def _check_root(text: str) -> str:
    if not _ROOT.fullmatch(text):
        raise ValueError(f'{text!r} is not a root ("sha256:" + 64 lower-case hex digits)')
    return text


DecimalStr = Annotated[str, AfterValidator(_check_decimal)]
"""A money, price or ratio value: a decimal string, never a float."""

RootStr = Annotated[str, AfterValidator(_check_root)]
"""A content address: ``"sha256:" + hex``."""


def money(value: Decimal) -> str:
    """Money to the cent, half-even, as a decimal string (``-0`` normalised to ``0``)."""
    quantized = value.quantize(_CENT, rounding=ROUND_HALF_EVEN)
    if quantized.is_zero():
        quantized = Decimal("0.00")
    return f"{quantized:f}"


def ratio(value: Decimal) -> str:
    """A ratio (metric) to 8 decimal places, half-even, as a decimal string."""
    quantized = value.quantize(_RATIO, rounding=ROUND_HALF_EVEN)
    if quantized.is_zero():
        quantized = Decimal("0E-8")
    return f"{quantized:f}"


class RootMismatchError(ValueError):
    """An object whose ``root`` member is not the root of its content."""

    def __init__(self, kind: str, expected: str, found: str) -> None:
        super().__init__(f"{kind} root does not verify: expected {expected}, found {found}")
        self.kind = kind
        self.expected = expected
        self.found = found


class ProtocolModel(BaseModel):
    """Base for protocol objects and their parts."""

    model_config = ConfigDict(
        frozen=True,
        extra="allow",
        strict=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    @model_validator(mode="after")
    def _mark_present_defaults(self) -> Self:
        fields_set = self.__pydantic_fields_set__
        for name in type(self).model_fields:
            if name not in fields_set and getattr(self, name) is not None:
                fields_set.add(name)
        return self

    def to_json(self) -> dict[str, Any]:
        """The object as plain JSON data, exactly the members it carries."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def canonical(self) -> bytes:
        """RFC 8785 bytes of the object."""
        return canonical_json(self.to_json())

    @classmethod
    def parse(cls, data: Any) -> Self:
        """Validate JSON data (a dict or a JSON text) into this model."""
        if isinstance(data, str | bytes | bytearray):
            return cls.model_validate_json(data)
        return cls.model_validate(data)


class SelfRooted(ProtocolModel):
    """An object bound by its own ``root``: sha256 of its JCS without ``root``.

    Parsing verifies the root and fails naming the expected and the found value;
    :meth:`with_root` builds a fresh object whose root is computed.
    """

    root: RootStr

    @model_validator(mode="before")
    @classmethod
    def _verify_root(cls, data: Any, info: ValidationInfo) -> Any:
        drafting = isinstance(info.context, dict) and info.context.get(_DRAFT) is True
        if not drafting and isinstance(data, dict) and isinstance(data.get("root"), str):
            found = data["root"]
            expected = root_of({k: v for k, v in data.items() if k != "root"})
            if found != expected:
                kind = str(data.get("kind", cls.__name__))
                raise RootMismatchError(kind, expected, found)
        return data

    @classmethod
    def with_root(cls, **members: Any) -> Self:
        """Build the object from its members and bind it with its computed root."""
        members.pop("root", None)
        draft = cls.model_validate({**members, "root": _PLACEHOLDER_ROOT}, context={_DRAFT: True})
        body = draft.to_json()
        body["root"] = root_of(body)
        return cls.model_validate(body)
