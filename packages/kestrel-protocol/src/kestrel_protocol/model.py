"""The base every protocol object is built on: camelCase, immutable, lossless.

Lossless means a parsed-then-dumped object has the same canonical bytes as its input:
unknown members are kept (``extra="allow"``) and re-emitted, an optional member that
was absent stays absent, and one that was ``null`` stays ``null``. The rule that makes
this work: a member is dumped when it was given, or when it has a non-``None`` value
(so defaults such as ``kind`` are always present).
"""

from __future__ import annotations

import json
import os
import re
from decimal import ROUND_HALF_EVEN, Context, Decimal
from pathlib import Path
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    PlainValidator,
    ValidationInfo,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticSerializationError

from .canonical import CanonicalizationError, canonical_json, root_of
from .decimals import DEFAULT_DECIMAL_CONTEXT
from .quoting import clipped, quoted

__all__ = [
    "DecimalStr",
    "ProtocolModel",
    "Quantity",
    "RootMismatchError",
    "RootStr",
    "SelfRooted",
    "Volume",
    "draft_context",
    "is_draft",
    "money",
    "ratio",
    "save_canonical",
]

_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?")
_ROOT = re.compile(r"sha256:[0-9a-f]{64}")
_VOLUME = re.compile(r"(0|[1-9][0-9]*)(\.[0-9]+)?")
_CENT = Decimal("0.01")
_DRAFT = "kestrel.draft"
_PLACEHOLDER_ROOT = "sha256:" + "0" * 64
_RATIO = Decimal("0.00000001")


def _check_decimal(text: str) -> str:
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f'{quoted(text)} is not a decimal string like "101.25"')
    return text


def _check_root(text: str) -> str:
    if not _ROOT.fullmatch(text):
        raise ValueError(f'{quoted(text)} is not a root ("sha256:" + 64 lower-case hex digits)')
    return text


DecimalStr = Annotated[str, AfterValidator(_check_decimal)]
"""A money, price or ratio value: a decimal string, never a float."""


def _check_volume(value: object) -> int | str:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and _VOLUME.fullmatch(value):
        return value
    raise ValueError(
        f"{clipped(repr(value))} is not a volume: a whole number, or a decimal string like "
        '"2012.25343589"'
    )


Volume = Annotated[int | str, PlainValidator(_check_volume, json_schema_input_type=int | str)]
"""A bar's volume: an integer on a tape whose volumes are all whole; on a tape with a
fractional volume (crypto, FX), every volume is its exact decimal string, never a float."""

_QUANTITY = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?")


def _check_quantity(value: object) -> int | str:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _QUANTITY.fullmatch(value):
        return value
    raise ValueError(
        f'{clipped(repr(value))} is not a quantity: a whole number, or a decimal string like "0.01"'
    )


Quantity = Annotated[int | str, PlainValidator(_check_quantity, json_schema_input_type=int | str)]
"""A quantity (an order's, a fill's, a position's) or a lot: an integer in a scenario
whose lots are all whole; in one with a fractional lot (crypto, FX), every quantity is
its exact decimal string without trailing zeros (``"0.01"``, ``"1.5"``, ``"2"``), never
a float."""

RootStr = Annotated[str, AfterValidator(_check_root)]
"""A content address: ``"sha256:" + hex``."""


def money(value: Decimal, context: Context = DEFAULT_DECIMAL_CONTEXT) -> str:
    """Money to the cent, half-even, as a decimal string (``-0`` normalised to ``0``);
    quantized in ``context`` (its precision bounds the digits), never the caller's."""
    quantized = value.quantize(_CENT, rounding=ROUND_HALF_EVEN, context=context)
    if quantized.is_zero():
        quantized = Decimal("0.00")
    return f"{quantized:f}"


def ratio(value: Decimal, context: Context = DEFAULT_DECIMAL_CONTEXT) -> str:
    """A ratio (metric) to 8 decimal places, half-even, as a decimal string; quantized in
    ``context`` (its precision bounds the digits), never the caller's."""
    quantized = value.quantize(_RATIO, rounding=ROUND_HALF_EVEN, context=context)
    if quantized.is_zero():
        quantized = Decimal("0E-8")
    return f"{quantized:f}"


def draft_context(cls: type[BaseModel]) -> dict[str, Any]:
    """Validation context in which ``cls`` itself (not its nested objects) skips its root
    check, because the caller is about to compute that root."""
    return {_DRAFT: cls}


def is_draft(obj: BaseModel, info: ValidationInfo) -> bool:
    """Whether ``obj`` is being validated under :func:`draft_context` for its own class."""
    return isinstance(info.context, dict) and info.context.get(_DRAFT) is type(obj)


class RootMismatchError(ValueError):
    """An object whose ``root`` member is not the root of its content."""

    def __init__(self, kind: str, expected: str, found: str) -> None:
        super().__init__(f"{kind} root does not verify: expected {expected}, found {found}")
        self.kind = kind
        self.expected = expected
        self.found = found


def save_canonical(path: str | os.PathLike[str], canonical: bytes) -> Path:
    """Save an object's canonical bytes and a newline to ``path`` (what ``kestrel verify``
    and ``kestrel report`` read), replacing the file in one step: a reader never sees
    half of it. The path written."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        temporary.write_bytes(canonical + b"\n")
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return target


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
        self._mark_defaults_given()
        extra = self.model_extra
        if extra:
            # Unknown members pass through unchanged, so they must be canonical JSON too
            # (no floats, no unsafe integers): refuse them now, naming the member.
            for key, value in extra.items():
                try:
                    canonical_json(value)
                except CanonicalizationError as exc:
                    raise ValueError(f"unknown member {key!r}: {exc}") from None
        return self

    def _mark_defaults_given(self) -> None:
        # A default with a value (``kind``, ``version`` ...) is dumped like a given member.
        fields_set = self.model_fields_set  # the instance's own set (pydantic's public view)
        for name in type(self).model_fields:
            if name not in fields_set and getattr(self, name) is not None:
                fields_set.add(name)

    def to_json(self) -> dict[str, Any]:
        """The object as plain JSON data, exactly the members it carries."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def to_json_text(self) -> str:
        """:meth:`to_json` as compact JSON text, members in order, non-ASCII as is.

        The same text as ``json.dumps(obj.to_json(), ensure_ascii=False,
        separators=(",", ":"))`` (a protocol object holds no floats), dumped by pydantic
        in one pass; a string it cannot encode (a lone surrogate) takes that path.
        """
        try:
            return self.model_dump_json(by_alias=True, exclude_unset=True)
        except PydanticSerializationError:
            return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"))

    def canonical(self) -> bytes:
        """RFC 8785 bytes of the object."""
        return canonical_json(self.to_json())

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Save the object to ``path`` (:func:`save_canonical` of its canonical bytes)."""
        return save_canonical(path, self.canonical())

    @classmethod
    def parse(cls, data: Any) -> Self:
        """Validate JSON data (a dict or a JSON text) into this model."""
        if isinstance(data, str | bytes | bytearray):
            return cls.model_validate_json(data)
        return cls.model_validate(data)


class SelfRooted(ProtocolModel):
    """An object bound by its own ``root``: sha256 of its JCS without ``root``.

    Validation (parse or constructor) verifies the root and fails naming the expected
    and the found value; :meth:`with_root` builds a fresh object whose root is computed.
    The check runs on the validated object's own dump, which by the lossless rule is the
    input's JSON, so it holds however the object was built (JSON text, camelCase data,
    snake_case keywords, nested model instances).
    """

    root: RootStr
    unrooted: ClassVar[tuple[str, ...]] = ()
    """Members the root does not cover (a proof's ``attestation``, signed about it)."""

    def rooted_json(self) -> dict[str, Any]:
        """:meth:`to_json` without the members the root does not cover."""
        data = self.to_json()
        return {k: v for k, v in data.items() if k not in self.unrooted}

    @model_validator(mode="after")
    def _verify_root(self, info: ValidationInfo) -> Self:
        if is_draft(self, info):
            return self
        self._mark_defaults_given()
        expected = root_of(self.rooted_json())
        if self.root != expected:
            kind = getattr(self, "kind", None)
            raise RootMismatchError(
                kind if isinstance(kind, str) else type(self).__name__, expected, self.root
            )
        return self

    @classmethod
    def with_root(cls, **members: Any) -> Self:
        """Build the object from its members and bind it with its computed root."""
        members.pop("root", None)
        draft = cls.model_validate(
            {**members, "root": _PLACEHOLDER_ROOT}, context=draft_context(cls)
        )
        return draft.model_copy(update={"root": root_of(draft.rooted_json())})
