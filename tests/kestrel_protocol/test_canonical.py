"""canonical_json is RFC 8785, byte for byte, and refuses what has no canonical form."""

from __future__ import annotations

import hashlib
import importlib.util
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from decimal import Decimal
from enum import IntEnum, StrEnum
from typing import Any

import kestrel_protocol.canonical
import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kestrel_protocol import (
    MAX_SAFE_INTEGER,
    CanonicalizationError,
    FrameEvent,
    ProtocolModel,
    SelfRooted,
    canonical_json,
    root_of,
    root_of_bytes,
)
from kestrel_protocol.canonical import _exact, _json_dumps
from pydantic import BaseModel, Field

canonical_module = kestrel_protocol.canonical
# The encoder of the optional "fast" extra; the dev group installs it, so both paths run.
_FAST_DUMPS = canonical_module._fast_dumps
HAS_ORJSON = canonical_module.FAST_ENCODER == "orjson"

# --- the two fast paths ---------------------------------------------------------------


@pytest.fixture(params=["orjson", "json"])
def encoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test with orjson writing plain values, then with json's encoder (what a
    machine without the ``fast`` extra gets)."""
    name: str = request.param
    if name == "orjson":
        if not HAS_ORJSON:
            pytest.skip("orjson (the fast extra) is not installed")
        monkeypatch.setattr(canonical_module, "_fast_dumps", _FAST_DUMPS)
    else:
        monkeypatch.setattr(canonical_module, "_fast_dumps", _json_dumps)
    return name


@contextmanager
def _fast_path(dumps: Any) -> Iterator[None]:
    saved = canonical_module._fast_dumps
    canonical_module._fast_dumps = dumps
    try:
        yield
    finally:
        canonical_module._fast_dumps = saved


def canonical_both_ways(value: Any) -> bytes:
    """canonical_json of ``value`` with orjson and with json's encoder, which must agree.

    The corpora call this per example rather than run twice, so both paths see every
    value at the cost of one generation.
    """
    with _fast_path(_json_dumps):
        pure = canonical_json(value)
    with _fast_path(_FAST_DUMPS):
        fast = canonical_json(value)
    assert fast == pure, "orjson and json's encoder disagree"
    return pure


# --- the corpus ---------------------------------------------------------------------

# Characters that stress JCS: escapes, controls, DEL, line separators, the private-use and
# non-BMP ranges whose UTF-16 vs code-point order differs, and the top of the BMP.
_TRICKY = [
    '"',
    "\\",
    "/",
    "\b",
    "\f",
    "\n",
    "\r",
    "\t",
    "\x00",
    "\x01",
    "\x1f",
    "\x7f",
    "\x80",
    "é",
    "\u2028",
    "\u2029",
    "\ud7ff",
    "\ue000",
    "\uf8ff",
    "\ufeff",
    "\uffff",
    "\U00010000",
    "\U0001f600",
    "\U0010ffff",
]
# Long digit runs after ":", ",", "[" or "-": inside strings they must stay text, whatever
# a scan of the encoded bytes for long numbers would make of them.
_PIECES = [":1234567890123456", ",-12345678901234567", "[9007199254740993", "0" * 20]
_chars = st.one_of(st.characters(codec="utf-8"), st.sampled_from(_TRICKY))
_text = st.one_of(
    st.text(_chars, max_size=12),
    st.lists(st.one_of(_chars, st.sampled_from(_PIECES)), max_size=4).map("".join),
)
# Short keys over a small alphabet collide in prefixes, so the sort order is exercised.
_keys = st.one_of(
    _text, st.text(st.sampled_from(["a", "b", "\ue000", "\U0001f600", "é"]), max_size=3)
)
_ints = st.one_of(
    st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
    st.sampled_from([0, -1, 1, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 2**31, -(2**31)]),
    # fifteen and sixteen digits, either side of where an integer may stop being safe
    st.sampled_from([10**15 - 1, -(10**15 - 1), 10**15, -(10**15), MAX_SAFE_INTEGER - 1]),
)
_leaves = st.one_of(st.none(), st.booleans(), _ints, _text)
json_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(_keys, inner, max_size=6)),
    max_leaves=40,
)


def _nest(value: Any, path: list[tuple[bool, str]]) -> Any:
    for in_object, key in reversed(path):
        value = {key: value} if in_object else [value]
    return value


deep_values = st.builds(
    _nest,
    json_values,
    st.lists(
        st.tuples(st.booleans(), st.sampled_from(["", "k", "\ue000", "\U0001f600"])),
        min_size=20,
        max_size=100,
    ),
)

# 7,000 flat-ish + 3,000 deep values: the >= 10,000 values per CI run of issue 2.
_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large]


@settings(max_examples=7_000, deadline=None, suppress_health_check=_SLOW_IS_FINE)
@given(json_values)
def test_corpus_is_byte_identical_to_rfc8785(value: Any) -> None:
    expected = rfc8785.dumps(value)
    assert canonical_both_ways(value) == expected
    assert _exact(value) == expected  # the fallback encoder is JCS too, not only the fast path


@settings(max_examples=3_000, deadline=None, suppress_health_check=_SLOW_IS_FINE)
@given(deep_values)
def test_deeply_nested_corpus_is_byte_identical_to_rfc8785(value: Any) -> None:
    expected = rfc8785.dumps(value)
    assert canonical_both_ways(value) == expected
    assert _exact(value) == expected


@pytest.mark.slow
@pytest.mark.timeout(1800)
@settings(max_examples=40_000, deadline=None, suppress_health_check=_SLOW_IS_FINE)
@given(st.one_of(json_values, deep_values))
def test_large_corpus_is_byte_identical_to_rfc8785(value: Any) -> None:
    """The long variant (``-m slow``): four times the default corpus."""
    expected = rfc8785.dumps(value)
    assert canonical_both_ways(value) == expected
    assert _exact(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        "",
        {"": []},
        [{}, [], ""],
        {"\U0001f600": 1, "\ue000": 2, "a": 3},  # UTF-16 order: a, U+1F600, U+E000
        {"\U0001f600": 1, "\uffff": 2},
        {"\U00010000": {"\ufb01": 1, "\U0001d11e": 2}},
        {"b": '\x00\x1f\x7f\u2028"\\/', "a": [True, False, None]},
        {"big": MAX_SAFE_INTEGER, "small": -MAX_SAFE_INTEGER, "zero": 0},
        "\U0010ffff",
        [MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, 10**15, -(10**15)],
        {"t": "a:12345678901234567", "u": ["x,-1234567890123456", "[9007199254740993"]},
        {"a": {}, "b": [[], {}], "c": [{"d": []}]},
        {"\U0001f600": {"\U0001f600": [], "\ue000": {}}},
        {"é": 1, "\uffff": 2, "\ue000": 3, "z": 4},
        {"a\U0001f600": 1, "a\ue000": 2},  # UTF-16: the non-BMP one first
        {"k e": ' \x00\x1f\x7f é"\\\b\f\n\r\t/'},
    ],
)
def test_edge_values_match_rfc8785(value: Any, encoder: str) -> None:
    expected = rfc8785.dumps(value)
    assert canonical_json(value) == expected
    assert _exact(value) == expected


def test_keys_sort_by_utf16_code_units_not_code_points(encoder: str) -> None:
    # U+1F600 is a surrogate pair D83D DE00, which sorts below U+E000 in UTF-16.
    out = canonical_json({"\ue000": 1, "\U0001f600": 2})
    assert out == '{"\U0001f600":2,"\ue000":1}'.encode()


def test_every_protocol_object_kind_is_covered(
    samples: list[ProtocolModel], kinds: list[type[ProtocolModel]]
) -> None:
    assert {type(s) for s in samples} == set(kinds)
    assert len(kinds) > 50


def test_protocol_object_is_byte_identical_to_rfc8785(sample: ProtocolModel) -> None:
    data = sample.to_json()
    expected = rfc8785.dumps(data)
    assert canonical_json(data) == expected
    assert canonical_json(sample) == expected
    assert sample.canonical() == expected


def test_root_is_sha256_of_jcs_without_root(sample: ProtocolModel) -> None:
    data = sample.to_json()
    body = {k: v for k, v in data.items() if k != "root"}
    expected = "sha256:" + hashlib.sha256(rfc8785.dumps(body)).hexdigest()
    assert root_of(data) == expected
    assert root_of(sample) == expected
    if isinstance(sample, SelfRooted):
        assert sample.root == expected


def test_root_of_bytes_is_sha256_of_raw_bytes() -> None:
    data = b"time,close\n2015-01-02,101.20\n"
    assert root_of_bytes(data) == "sha256:" + hashlib.sha256(data).hexdigest()


def test_plain_json_objects_only_drop_a_root_member() -> None:
    assert root_of({"a": 1, "root": "x"}) == root_of({"a": 1})
    assert root_of({"a": {"root": "x"}}) != root_of({"a": {}})  # only the top-level root
    assert root_of([1, 2]) == "sha256:" + hashlib.sha256(b"[1,2]").hexdigest()
    # an array (or a string) holding "root" has no member to drop
    assert root_of(["root", 1]) == "sha256:" + hashlib.sha256(b'["root",1]').hexdigest()
    assert root_of("root") == "sha256:" + hashlib.sha256(b'"root"').hexdigest()


# --- refusals -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (1.5, ["a float", "1.5", "at $", "decimal string"]),
        ({"price": 101.25}, ["a float", "at $.price"]),
        ([0, [1.0]], ["a float", "at $[1][0]"]),
        (float("nan"), ["NaN", "at $"]),
        ({"x": [float("inf")]}, ["a float", "inf", "at $.x[0]"]),
        ({"x": float("-inf")}, ["-inf", "at $.x"]),
        ({1: "a"}, ["key 1", "int", "not a string"]),
        ({"a": {None: 1}}, ["key None", "at $.a", "not a string"]),
        ({("a",): 1}, ["key ('a',)", "tuple"]),
        (2**53, ["9007199254740992", "safe range", "decimal string"]),
        ({"n": -(2**53)}, ["-9007199254740992", "at $.n", "safe range"]),
        (10**30, ["safe range"]),
        ("\ud800", ["lone surrogate U+D800", "at $"]),
        ({"a": ["ok", "x\udfffy"]}, ["lone surrogate U+DFFF", "at $.a[1]"]),
        ({"\udc00k": 1}, ["lone surrogate U+DC00", "key"]),
        ({True: 1}, ["key True", "bool", "not a string"]),
        ({"a": [{1.5: "x"}]}, ["key 1.5", "at $.a[0]", "float"]),
        ({1: "a", 2: "b"}, ["key 1", "int"]),
        ({"a": 1, 2: "b"}, ["key 2", "int"]),
        ({float("nan"): 1}, ["key nan", "float"]),
        ({"a": {"b": 1.5}}, ["a float", "at $.a.b"]),
        ([1, -(2**53)], ["-9007199254740992", "at $[1]"]),
        ({"n": [[10**17]]}, ["100000000000000000", "at $.n[0][0]"]),
        ([{"k": "ok"}, {"k": "\ud800"}], ["lone surrogate U+D800", "at $[1].k"]),
        (b"bytes", ["bytes", "no JSON form"]),
        ({"when": object()}, ["object", "at $.when", "no JSON form"]),
    ],
)
def test_values_without_canonical_form_are_refused_with_a_clear_message(
    value: Any, words: list[str], encoder: str
) -> None:
    with pytest.raises(CanonicalizationError) as caught:
        canonical_json(value)
    message = str(caught.value)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


def test_a_float_is_named_nan_or_a_float_at_the_start_of_the_message() -> None:
    with pytest.raises(CanonicalizationError, match=r"^NaN \(nan\) at \$\.x: "):
        canonical_json({"x": float("nan")})
    with pytest.raises(CanonicalizationError, match=r"^a float \(1\.5\) at \$: "):
        canonical_json(1.5)


def test_refusals_are_value_errors() -> None:
    with pytest.raises(ValueError, match="float"):
        root_of({"a": 0.1})


# --- non-plain but valid inputs take the exact path and still match -----------------


class _Side(StrEnum):
    BUY = "buy"


class _Level(IntEnum):
    HIGH = 3


def test_mappings_tuples_and_enums_encode_as_their_json_values() -> None:
    value = OrderedDict([("z", (1, 2)), ("a", _Side.BUY), ("m", _Level.HIGH)])
    expected = rfc8785.dumps({"z": [1, 2], "a": "buy", "m": 3})
    assert canonical_json(value) == expected


class _Foreign(BaseModel):
    """A pydantic model that is not a protocol model (it has no ``to_json``)."""

    avg_price: Decimal = Field(alias="avgPrice")
    day: date


def test_other_pydantic_models_encode_as_their_json_dump_by_alias() -> None:
    model = _Foreign(avgPrice=Decimal("101.25"), day=date(2016, 8, 19))
    assert canonical_json(model) == b'{"avgPrice":"101.25","day":"2016-08-19"}'


def test_a_protocol_model_encodes_only_the_members_it_carries() -> None:
    event = FrameEvent(type="accepted", order="o1", bar=3)  # qty, price, fee, reason unset
    assert canonical_json(event) == b'{"bar":3,"order":"o1","type":"accepted"}'


def test_booleans_are_not_integers() -> None:
    assert canonical_json([True, 1, False, 0]) == b"[true,1,false,0]"


# --- the fast path: what takes it, what leaves it -----------------------------------

_PLAIN_VALUES = [
    "x",
    MAX_SAFE_INTEGER,
    -MAX_SAFE_INTEGER,
    -(10**15 - 1),
    None,
    True,
    False,
    {},
    [],
    {"a": {}, "b": [[], {}], "c": [{"d": []}]},
    {"\U0001f600": "one non-BMP key alone: no order to get wrong"},
    {"é": 1, "\uffff": [2, -(10**15 - 1)], "\ue000": '\U0001f600 \x00"\\'},
    [{"qty": 10**15 - 1, "price": "101.25", "when": "20:00:00"}, ["a", [None, True]]],
    ["s", 1, True, None, {"k e": " \x1f\x7f"}, []],
]


def _refuse_exact(_value: Any) -> bytes:
    raise AssertionError("the exact encoder ran for a plain value")


@pytest.mark.parametrize("value", _PLAIN_VALUES)
def test_plain_json_is_written_by_the_c_encoder_alone(
    value: Any, encoder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain values (exact JSON types, safe integers, keys within the BMP or a dict's
    only key) never reach the slow exact encoder."""

    expected = rfc8785.dumps(value)
    monkeypatch.setattr(kestrel_protocol.canonical, "_exact", _refuse_exact)
    assert canonical_json(value) == expected


class _OtherKey(str):
    """A string whose hash differs from the equal plain string's."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(("other", str(self)))


def test_keys_with_equal_text_keep_their_order_like_rfc8785(encoder: str) -> None:
    # Two keys written "a": JCS's stable sort keeps them as inserted, while json's
    # sort_keys would order the pair by value.
    value = {"a": 2, _OtherKey("a"): 1}
    assert len(value) == 2
    assert canonical_json(value) == rfc8785.dumps(value) == b'{"a":2,"a":1}'


def test_a_cyclic_value_fails_instead_of_looping(encoder: str) -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(RecursionError):
        canonical_json(loop)
    ring: dict[str, Any] = {}
    ring["self"] = [ring]
    with pytest.raises(RecursionError):
        canonical_json(ring)


_surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
_bad_leaves = st.one_of(
    st.floats(),  # NaN and the infinities too
    st.integers(min_value=MAX_SAFE_INTEGER + 1),
    st.integers(max_value=-MAX_SAFE_INTEGER - 1),
    st.builds(lambda a, s, b: a + s + b, _text, _surrogates, _text),
    st.dictionaries(
        st.one_of(st.integers(), st.floats(), st.booleans(), st.none(), _surrogates),
        _leaves,
        min_size=1,
        max_size=3,
    ),
)
bad_values = st.builds(
    lambda good, bad, first: [bad, good] if first else {"good": good, "bad": bad},
    json_values,
    st.builds(
        _nest,
        _bad_leaves,
        st.lists(st.tuples(st.booleans(), st.sampled_from(["", "k", "é"])), max_size=4),
    ),
    st.booleans(),
)


@settings(max_examples=300, deadline=None, suppress_health_check=_SLOW_IS_FINE)
@given(bad_values)
def test_a_value_without_canonical_form_is_refused_as_the_exact_encoder_refuses_it(
    value: Any,
) -> None:
    with pytest.raises(CanonicalizationError) as exact:
        _exact(value)
    for dumps in (_FAST_DUMPS, _json_dumps):
        with _fast_path(dumps), pytest.raises(CanonicalizationError) as fast:
            canonical_json(value)
        assert str(fast.value) == str(exact.value)


# --- orjson's own limits leave the fast path, not the result ------------------------


def test_nesting_beyond_orjsons_limit_still_encodes(encoder: str) -> None:
    # orjson refuses more than 255 levels; the exact encoder then writes the bytes.
    value: Any = "leaf"
    for depth in range(300):
        value = {"k": value} if depth % 2 else [value]
    expected = rfc8785.dumps(value)
    assert canonical_json(value) == expected


def test_every_control_character_and_separator_is_escaped_as_jcs(
    encoder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # BMP keys in a two-key object: the fast encoder writes it all, keys included.
    bmp = "".join(chr(c) for c in range(0x80)) + "\u2028\u2029\ud7ff\ue000\uffff"
    value = {bmp: bmp + "\U0001f600", "a" + bmp: [bmp, "/\U0010ffff"]}
    expected = rfc8785.dumps(value)
    monkeypatch.setattr(canonical_module, "_exact", _refuse_exact)
    assert canonical_json(value) == expected


def test_a_big_object_sorts_like_rfc8785(encoder: str, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = [
        chr(c) + chr(d)
        for c in (0x41, 0x7A, 0xE9, 0x3B1, 0x4E00, 0xE000, 0xFFFF)
        for d in range(0x20, 0x2020, 37)
    ]
    value: dict[str, Any] = {
        key: {"n": index, "s": key, "e": [{}, []]} for index, key in enumerate(reversed(keys))
    }
    assert len(value) > 1_000
    expected = rfc8785.dumps(value)
    monkeypatch.setattr(canonical_module, "_exact", _refuse_exact)
    assert canonical_json(value) == expected


@pytest.mark.skipif(not HAS_ORJSON, reason="orjson (the fast extra) is not installed")
def test_orjson_writes_plain_values_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the fast extra installed, plain values never reach json's encoder."""

    class Refuse:
        def encode(self, _value: Any) -> str:
            raise AssertionError("json's encoder ran although orjson is installed")

    value = {"b": [1, None, True], "a": "déjà vu ✓"}
    monkeypatch.setattr(canonical_module, "_JSON_ENCODER", Refuse())
    assert canonical_json(value) == rfc8785.dumps(value)


def test_the_named_fast_encoder_is_the_one_installed() -> None:
    # What benchmarks/canonical.py prints: orjson when the fast extra is there, else json.
    installed = importlib.util.find_spec("orjson") is not None
    named = canonical_module.FAST_ENCODER
    assert named == ("orjson" if installed else "json")
    assert (canonical_module._fast_dumps is _json_dumps) is not installed
