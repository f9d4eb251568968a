r"""RFC 8785 (JCS) canonical JSON and sha256 roots.

Hand-written so that ``kestrel-protocol`` depends on pydantic alone; the tests prove it
byte-identical to the ``rfc8785`` package. Kestrel refuses floats outright (money and
ratios are decimal strings), so JCS's number serialisation reduces to integers, which
must lie in the IEEE-754 safe range to mean the same thing in every JSON reader.

Canonical JSON is on hot paths (roots, stored artifacts, the MCP face), so the common
case goes through the C encoder of :mod:`json` first. Its text is provably JCS when the
value is *plain* (exact ``dict``/``list``/``str``/``bool``/``None`` and safe ``int``):

* with ``ensure_ascii=False`` it escapes exactly ``"``, ``\``, ``\b \f \n \r \t`` and
  the other controls below U+0020 as lower-case ``\u00xx``, and nothing else - as JCS;
* integers print as their shortest decimal form, as JCS's ES6 number form for them;
* ``sort_keys`` orders by code points, JCS by UTF-16 code units. The two orders agree
  unless a key holds a non-BMP character (its UTF-16 form starts with a surrogate,
  which sorts *below* U+E000-U+FFFF).

Then the value is checked one depth at a time with C-level iteration (keys joined,
types collected in a set; no Python code runs per value), and the integers' range on
the encoded bytes. Anything else - floats, NaN, non-string keys (which ``json`` would
quietly turn into strings), unsafe integers, lone surrogates, non-BMP keys, subclasses
(enums), tuples, other mappings - goes to the exact encoder, which either writes the bytes or
raises the precise error. The encoder runs before the check, so a cyclic value ends in
``RecursionError`` there instead of looping.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain, compress, repeat
from operator import is_
from typing import Any

from pydantic import BaseModel

__all__ = [
    "MAX_SAFE_INTEGER",
    "CanonicalizationError",
    "canonical_json",
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


# The encoder runs before the check, so a cyclic value ends there in RecursionError and
# the encoder's own circular check would only cost time. NaN and the infinities need no
# refusal here either: they are floats, which the check sends to the exact encoder.
_FAST_ENCODER = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), check_circular=False
)
_STR = frozenset({str})
_LEAVES = frozenset({str, int, bool, type(None)})
_NODES = _LEAVES | {dict, list}
# The encoder's bytes with every digit as "1", and ":" for what may come right before a
# number's digits (":", ",", "[" and "-"). An integer outside the safe range has at least
# sixteen digits, so it leaves ":" and sixteen "1"s.
_NUMBER_MARKS = bytes.maketrans(b"0123456789,[-", b"1111111111:::")
_LONG_NUMBER = b":" + b"1" * 16


def _plain(value: Any) -> bool:
    """True when ``value``, which the C encoder accepted, is plain JSON data whose
    ``json`` encoding is its JCS form but for the integers' range (checked on the bytes).

    Plain: only ``dict``/``list``/``str``/``int``/``bool``/``None`` (no floats, no
    subclasses), keys of type ``str`` within the Basic Multilingual Plane. A ``str``
    subclass key is not plain: it may sit next to the equal plain string (a different
    hash), and ``json`` would order the two by their values. The check goes one depth at
    a time with C-level iteration (no Python code runs per value).
    """
    dicts: list[dict[Any, Any]] = []
    lists = [[value]]  # ``value`` as the one item of a list
    while True:
        keys = [*chain.from_iterable(dicts)]
        if not set(map(type, keys)) <= _STR:
            return False
        joined = "".join(keys)
        if not joined.isascii() and max(joined) > "\uffff":
            return False
        kinds = set(map(type, _values(dicts, lists)))
        if kinds <= _LEAVES:
            return True
        if not kinds <= _NODES:
            return False
        items = [*_values(dicts, lists)]
        types = [*map(type, items)]
        dicts, lists = (
            [*compress(items, map(is_, types, repeat(dict)))],
            [*compress(items, map(is_, types, repeat(list)))],
        )


def _values(dicts: list[dict[Any, Any]], lists: list[list[Any]]) -> Iterator[Any]:
    """The values of ``dicts`` and the items of ``lists``."""
    return chain(chain.from_iterable(map(dict.values, dicts)), chain.from_iterable(lists))


def _exact(value: Any) -> bytes:
    out: list[str] = []
    _encode(value, "$", out)
    return "".join(out).encode("utf-8")


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 bytes of ``value`` (a model or plain JSON data).

    Raises :class:`CanonicalizationError` naming where the first offending value is.
    """
    data = to_json_value(value)
    try:
        text = _FAST_ENCODER.encode(data)
    except (TypeError, ValueError):  # no JSON form, keys of mixed types:
        return _exact(data)  # the exact encoder names what is wrong
    if _plain(data):
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate
            return _exact(data)
        if _LONG_NUMBER not in (b"[" + raw).translate(_NUMBER_MARKS):  # as _plain sees it
            return raw
    return _exact(data)


def root_of_bytes(data: bytes) -> str:
    """``"sha256:<hex>"`` of raw bytes (the tape root is the root of its CSV bytes)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def root_of(value: Any) -> str:
    """The root of an object: sha256 of its canonical JSON *without* its ``root`` member."""
    data = to_json_value(value)
    if isinstance(data, Mapping) and "root" in data:
        data = {k: v for k, v in data.items() if k != "root"}
    return root_of_bytes(canonical_json(data))
