r"""RFC 8785 (JCS) canonical JSON and sha256 roots.

Hand-written so that ``kestrel-protocol`` depends on pydantic alone; the tests prove it
byte-identical to the ``rfc8785`` package. Kestrel refuses floats outright (money and
ratios are decimal strings), so JCS's number serialisation reduces to integers, which
must lie in the IEEE-754 safe range to mean the same thing in every JSON reader.

The runtime roots a frame on every step, so the common case is fast: one type-checking
walk, then a C encoder - ``orjson`` with ``OPT_SORT_KEYS`` when the optional ``fast``
extra is installed, else the one of :mod:`json`. Both are provably JCS for the values the
walk admits (plain ``dict``/``list``/``str``/safe ``int``/``bool``/``None``):

* they escape exactly ``"``, ``\``, ``\b \f \n \r \t`` and the other controls below
  U+0020 as lower-case ``\u00xx``, and nothing else, writing the rest as raw UTF-8 (json
  with ``ensure_ascii=False``) - as JCS;
* integers print as their shortest decimal form, as JCS's ES6 number form for them;
* both sort keys by code points (orjson by UTF-8 bytes, the same order), JCS by UTF-16
  code units. The two orders agree unless a key holds a non-BMP character (its UTF-16
  form starts with a surrogate, which sorts *below* U+E000-U+FFFF). The walk sends any
  object with such a key, and anything else unusual (floats, odd types), to the exact
  encoder, which either produces the bytes or raises the precise error; so does a fast
  encoder's refusal (a lone surrogate, or orjson's nesting limit of 255).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from pydantic import BaseModel

__all__ = [
    "DECLINED",
    "FAST_ENCODER",
    "MAX_SAFE_INTEGER",
    "CanonicalizationError",
    "canonical_json",
    "fast_compact_bytes",
    "fast_compact_line",
    "fast_compact_text",
    "fast_loads",
    "own_loads",
    "root_of",
    "root_of_bytes",
    "to_json_value",
]

MAX_SAFE_INTEGER = 2**53 - 1

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


class CanonicalizationError(ValueError):
    """A value that has no canonical JSON form in Kestrel (float, NaN, bad key, ...)."""


def _encode_string(text: str, where: str) -> str:
    out: list[str] = ['"']
    for ch in text:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        elif "\ud800" <= ch <= "\udfff":
            raise CanonicalizationError(f"lone surrogate U+{ord(ch):04X} in a string at {where}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _encode(value: Any, where: str, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_encode_string(value, where))
    elif isinstance(value, int):
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise CanonicalizationError(
                f"integer {value} at {where} is outside the safe range ±(2**53-1); "
                "send it as a decimal string"
            )
        out.append(str(int(value)))
    elif isinstance(value, float):
        kind = "NaN" if value != value else "a float"  # noqa: PLR0124 - NaN test
        raise CanonicalizationError(
            f"{kind} ({value!r}) at {where}: Kestrel objects carry no floats; "
            'use a decimal string such as "101.25"'
        )
    elif isinstance(value, Mapping):
        items: list[tuple[str, Any]] = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalizationError(
                    f"object key {key!r} at {where} is of type {type(key).__name__}, not a string"
                )
            items.append((key, item))
        items.sort(key=lambda kv: _utf16_key(kv[0]))
        out.append("{")
        for index, (key, item) in enumerate(items):
            if index:
                out.append(",")
            out.append(_encode_string(key, f"{where} (key {key!r})"))
            out.append(":")
            _encode(item, f"{where}.{key}", out)
        out.append("}")
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _encode(item, f"{where}[{index}]", out)
        out.append("]")
    else:
        raise CanonicalizationError(
            f"value of type {type(value).__name__} at {where} has no JSON form"
        )


def to_json_value(value: Any) -> Any:
    """Turn a protocol model (or plain JSON value) into plain JSON data."""
    if isinstance(value, BaseModel):
        dump = getattr(value, "to_json", None)
        if callable(dump):
            return dump()
        return value.model_dump(mode="json", by_alias=True)
    return value


# check_circular is off because _plain has already walked the value (a cycle would have
# ended there in RecursionError).
_JSON_ENCODER = json.JSONEncoder(
    ensure_ascii=False,
    sort_keys=True,
    separators=(",", ":"),
    allow_nan=False,
    check_circular=False,
)


def _json_dumps(value: Any) -> bytes | None:
    """The stdlib C encoder's bytes, or None when it refuses (a lone surrogate)."""
    try:
        return _JSON_ENCODER.encode(value).encode("utf-8")
    except UnicodeEncodeError:
        return None


def _no_fast_text(value: Any) -> str | None:
    return None


def _no_fast_line(value: Any) -> bytes | None:
    return None


def _no_fast_bytes(value: Any) -> bytes | None:
    return None


DECLINED: Final = object()
"""What :func:`fast_loads` returns for input it leaves to ``json``."""

_DIGITS_AS_ZERO: Final = bytes(0x30 if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
"""A byte table: digits to ``0``, every other byte to a space."""
_LONG_DIGITS: Final = b"0" * 19
"""Nineteen digits in a row (in ``data.translate(_DIGITS_AS_ZERO)``): maybe an integer
orjson makes a float, below -2**63 (nineteen digits) or above 2**64 - 1 (twenty).
Cheaper than a regular expression's search."""


def _no_fast_loads(data: bytes) -> Any:
    return DECLINED


_fast_dumps: Callable[[Any], bytes | None] = _json_dumps
_fast_loads: Callable[[bytes], Any] = _no_fast_loads
_own_loads: Callable[[bytes], Any] = _no_fast_loads
_fast_text: Callable[[Any], str | None] = _no_fast_text
_fast_line: Callable[[Any], bytes | None] = _no_fast_line
_fast_bytes: Callable[[Any], bytes | None] = _no_fast_bytes
FAST_ENCODER = "json"

try:
    import orjson
except ImportError:  # the optional "fast" extra is not installed: json's encoder serves
    pass
else:
    # OPT_STRICT_INTEGER is left out: _plain has already refused unsafe integers.
    def _orjson_dumps(value: Any) -> bytes | None:
        """orjson's bytes, or None when it refuses (a lone surrogate, deep nesting)."""
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            return None

    def _orjson_text(value: Any) -> str | None:
        try:
            return orjson.dumps(value).decode("utf-8")
        except orjson.JSONEncodeError:
            return None

    def _orjson_bytes(value: Any) -> bytes | None:
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:
            return None

    def _orjson_line(value: Any) -> bytes | None:
        try:
            return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
        except orjson.JSONEncodeError:
            return None

    def _orjson_loads(data: bytes) -> Any:
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            return DECLINED
        # Compact text as orjson and json write it (every frame a face splices) is written
        # back as it came, which costs less than the scan of its digits.
        if _written_back(value, data) or _LONG_DIGITS not in data.translate(_DIGITS_AS_ZERO):
            return value
        return DECLINED

    def _written_back(value: Any, data: bytes) -> bool:
        """Whether orjson writes ``value`` back as ``data``, byte for byte: then no
        integer became a float (a float is written with a point or an exponent) and
        json reads the same value."""
        try:
            return orjson.dumps(value) == data
        except orjson.JSONEncodeError:  # nested deeper than orjson writes
            return False

    def _orjson_loads_own(data: bytes) -> Any:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            return DECLINED

    _fast_dumps = _orjson_dumps
    _fast_loads = _orjson_loads
    _own_loads = _orjson_loads_own
    _fast_text = _orjson_text
    _fast_line = _orjson_line
    _fast_bytes = _orjson_bytes
    FAST_ENCODER = "orjson"


def fast_compact_text(value: Any) -> str | None:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` through orjson
    (members in their order), for JSON data that holds no float, such as a protocol
    object's :meth:`~kestrel_protocol.model.ProtocolModel.to_json`; ``None`` when the
    ``fast`` extra is not installed or orjson refuses the value (a lone surrogate, an
    integer beyond 64 bits, deep nesting): the caller then encodes it another way.

    Equal to json's text for such data for the reasons in this module's docstring
    (escapes and integers; no sorting is involved). A float is written as orjson writes
    it (``1e-7`` where json writes ``1e-07``): the same value in other bytes, so pass
    float-free data where the bytes must be json's.
    """
    return _fast_text(value)


def fast_compact_bytes(value: Any) -> bytes | None:
    """:func:`fast_compact_text` as its UTF-8 bytes (what orjson writes, not decoded);
    ``None`` where that declines (same rules, same caveat: pass float-free data)."""
    return _fast_bytes(value)


def fast_loads(data: bytes) -> Any:
    """``json.loads(data)``'s value, decoded by orjson when the ``fast`` extra is
    installed; :data:`DECLINED` when it is not, or where orjson would decode otherwise
    or refuses: an integer past 64 bits (nineteen digits in a row, even inside a string,
    are left to json unless orjson writes the value back as the very same bytes), a lone
    surrogate, a number past a double's range, ``NaN``
    literals, invalid UTF-8, deep nesting. The caller then decodes with ``json`` and
    gets its value or its error."""
    return _fast_loads(data)


def own_loads(data: bytes) -> Any:
    """:func:`fast_loads` of JSON text Kestrel wrote itself from its objects' data (a
    :class:`~kestrel_protocol.wire.Wire`'s): such text holds no float and no integer
    outside ±(2**53-1), so orjson reads it as ``json`` does and its value is taken as it
    comes, without the check foreign text needs; :data:`DECLINED` where orjson is not
    installed or refuses (a lone surrogate, deep nesting)."""
    return _own_loads(data)


def fast_compact_line(value: Any) -> bytes | None:
    """:func:`fast_compact_text` as UTF-8 with a newline: one stdio frame, written by
    orjson in one call; ``None`` where that declines (same rules, same caveat: pass
    float-free data)."""
    return _fast_line(value)


def _plain(value: Any) -> bool:
    """True when ``value`` is plain JSON data whose ``json`` encoding is its JCS form."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER)
    if kind is dict:
        astral_key = False
        for key, item in value.items():
            if type(key) is not str:
                return False
            if not key.isascii() and max(key) > "\uffff":
                astral_key = True
            if type(item) is not str and not _plain(item):  # strings are the common case
                return False
        return not (astral_key and len(value) > 1)
    if kind is list:
        for item in value:  # noqa: SIM110 - a loop beats all(genexpr) here
            if type(item) is not str and not _plain(item):
                return False
        return True
    return False


def _exact(value: Any) -> bytes:
    out: list[str] = []
    _encode(value, "$", out)
    return "".join(out).encode("utf-8")


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 bytes of ``value`` (a model or plain JSON data).

    Raises :class:`CanonicalizationError` naming where the first offending value is.
    """
    data = to_json_value(value)
    if _plain(data):
        fast = _fast_dumps(data)
        if fast is not None:
            return fast
        # refused: the exact encoder writes the bytes or names what is wrong
    return _exact(data)


def root_of_bytes(data: bytes) -> str:
    """``"sha256:<hex>"`` of raw bytes (the tape root is the root of its CSV bytes)."""
    found = RootOfBytes()
    found.update(data)
    return found.root()


class RootOfBytes:
    """``root_of_bytes`` of bytes that arrive in pieces (a tape written as it is made):
    ``update`` with each piece in order, then ``root``."""

    __slots__ = ("_hash",)

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def update(self, data: bytes) -> None:
        self._hash.update(data)

    def root(self) -> str:
        return "sha256:" + self._hash.hexdigest()


def root_of(value: Any) -> str:
    """The root of an object: sha256 of its canonical JSON *without* its ``root`` member."""
    data = to_json_value(value)
    if isinstance(data, Mapping) and "root" in data:
        data = {k: v for k, v in data.items() if k != "root"}
    return root_of_bytes(canonical_json(data))
