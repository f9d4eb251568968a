"""A tool result's JSON text: the same bytes as ``json.dumps`` whatever it holds."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kestrel_protocol import StandDown
from kestrel_protocol.canonical import (
    DECLINED,
    FAST_ENCODER,
    MAX_SAFE_INTEGER,
    fast_compact_text,
    fast_loads,
    own_loads,
)
from kestrel_protocol.surface import ToolResult, json_text


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


EDGES = [
    "",
    "plain",
    'a "quoted" \\ back\\slash',
    '{"ok":true,"text":"line\\nbreak \\"q\\""}',  # a JSON text, as a text block holds
    "tab\there",
    "new\nline",
    "\x00\x1f\x7f",
    "\u00e9\u4e2d\U0001f600",
    "line\u2028separator\u2029",
    "\ud800 lone surrogate",
]


@pytest.mark.parametrize("text", EDGES)
def test_a_string_is_written_as_json_dumps_writes_it(text: str) -> None:
    assert json_text(text) == _dumps(text)
    assert json.loads(json_text(text)) == text


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_any_string_is_written_as_json_dumps_writes_it(text: str) -> None:
    assert json_text(text) == _dumps(text)


@given(st.text())
def test_a_result_whose_text_is_a_string_frames_as_its_plain_encoding(text: str) -> None:
    """The text block of a result is escaped in its framing exactly as the encoder would."""
    result = ToolResult({"note": text})
    assert json.loads(result.encoded()) == json.loads(_dumps(dict(result)))
    assert result.encoded() == _dumps(dict(result))


_JSON_DATA = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.text(alphabet=st.characters(codec=None, exclude_categories=())),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=6),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@pytest.mark.skipif(FAST_ENCODER != "orjson", reason="the fast extra (orjson) is not installed")
@given(_JSON_DATA)
def test_fast_compact_text_is_json_dumps_or_declines(value: Any) -> None:
    """The text a protocol object's result carries when orjson writes it: json's, byte
    for byte, members in order; a value orjson cannot write (a lone surrogate, an
    integer past 64 bits) is declined, never written differently."""
    text = fast_compact_text(value)
    if text is not None:
        assert text == _dumps(value)


@pytest.mark.parametrize("text", EDGES)
def test_fast_compact_text_of_the_edge_strings(text: str) -> None:
    value = {"kind": "edge", "text": text, "list": [text, 2**53, -(2**63), None, True]}
    found = fast_compact_text(value)
    if FAST_ENCODER != "orjson" or "\ud800" in text:
        assert found is None
    else:
        assert found == _dumps(value)


def test_a_protocol_object_result_is_the_same_text_with_or_without_orjson() -> None:
    """run_tool's text of a model (orjson when installed) is the model's own dump."""
    model = StandDown(reason="statement", detail='bad \u2028 \x01 \x7f "q" \\ \u00e9 \U0001f600')
    found = fast_compact_text(model.to_json())
    assert found == (None if FAST_ENCODER != "orjson" else model.to_json_text())


def _same(found: Any, expected: Any) -> bool:
    """Equal with the same types all the way down (``1 == 1.0 == True`` is not enough),
    and a float's sign kept."""
    if type(found) is not type(expected):
        return False
    if isinstance(expected, dict):
        return list(found) == list(expected) and all(_same(found[k], expected[k]) for k in expected)
    if isinstance(expected, list):
        return len(found) == len(expected) and all(map(_same, found, expected))
    if isinstance(expected, float):
        return repr(found) == repr(expected)
    return bool(found == expected)


_FLOATY = st.recursive(
    st.floats(allow_nan=False, allow_infinity=False) | _JSON_DATA,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@given(_FLOATY, st.booleans(), st.sampled_from([None, 1]))
def test_fast_loads_gives_json_loads_value_or_declines(
    value: Any, ascii_only: bool, indent: int | None
) -> None:
    """A stdio frame decoded by orjson is the value json would give it, types and key
    order included (never a float for a big integer); what orjson would read otherwise
    it leaves to json."""
    data = json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode(
        "utf-8", "surrogatepass"
    )
    found = fast_loads(data)
    if found is DECLINED:
        assert FAST_ENCODER != "orjson" or _declinable(data)
    else:
        assert _same(found, json.loads(data.decode("utf-8", "surrogatepass")))


def _declinable(data: bytes) -> bool:
    """Input orjson may leave to json: nineteen digits in a row, or a lone surrogate
    (escaped, or as raw surrogate bytes)."""
    text = data.decode("utf-8", "surrogatepass")
    return (
        re.search(r"[0-9]{19}", text) is not None
        or re.search(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]", text) is not None
    )


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"id":18446744073709551615}', {"id": 18446744073709551615}),
        (b'{"id":18446744073709551616}', {"id": 18446744073709551616}),
        (b'{"id":-123456789012345678901234}', {"id": -123456789012345678901234}),
        (b'{"id":-9223372036854775808}', {"id": -9223372036854775808}),
        (b'{"id":-9223372036854775809}', {"id": -9223372036854775809}),  # 19 digits
        (b'{"a":"\\ud800"}', {"a": "\ud800"}),
        (b'{"x":1e400}', {"x": float("inf")}),
        (b'{"a":1,"a":2}', {"a": 2}),
        (b'{"v":-0.0,"w":-0}', {"v": -0.0, "w": 0}),
    ],
)
def test_fast_loads_of_the_edge_frames(data: bytes, expected: Any) -> None:
    found = fast_loads(data)
    assert found is DECLINED or _same(found, expected)
    assert _same(json.loads(data), expected)
    if b"2345678901234567890" in data or b"616" in data or b"809" in data or b"\\ud800" in data:
        assert found is DECLINED  # orjson would have given a float, or refused


@pytest.mark.parametrize(
    "value",
    [
        {"root": "sha256:" + "1234567890" * 6 + "abcd", "seq": 1},  # a root's digit run
        {"id": "7" * 40, "volume": 18446744073709551615, "low": -9223372036854775808},
        {"source": "buy 1000000000000000000000 ACME", "n": [0, -1, 2**53]},
    ],
)
def test_a_compact_frame_with_long_digit_runs_is_read_by_orjson(value: Any) -> None:
    """Nineteen digits in a row in a frame's strings (a root, an id, a statement), or an
    integer orjson reads exactly, do not send a compact frame (what every face splices
    and every SDK sends) to json: orjson writes it back byte for byte, so its value is
    json's."""
    data = _dumps(value).encode()
    found = fast_loads(data)
    if FAST_ENCODER == "orjson":
        assert found is not DECLINED
        assert _same(found, json.loads(data))
    else:
        assert found is DECLINED


@pytest.mark.parametrize(
    "data",
    [
        b'{"n":18446744073709551616}',
        b'{"root":"sha256:1234567890123456789","n":-9223372036854775809}',
        b'{"n": 123456789012345678901234567890}',
    ],
)
def test_an_integer_past_64_bits_is_left_to_json_compact_or_not(data: bytes) -> None:
    """orjson would read it as a float, which it writes back with an exponent: never the
    integer's bytes."""
    assert fast_loads(data) is DECLINED
    assert type(json.loads(data)["n"]) is int


@pytest.mark.parametrize("data", [b"", b"{", b"NaN", b'{"a":NaN}', b"\xff{}", b"[" * 2000])
def test_fast_loads_leaves_what_json_refuses_or_reads_otherwise_to_json(data: bytes) -> None:
    assert fast_loads(data) is DECLINED


_OWN_DATA = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
    | st.text(alphabet=st.characters(codec="utf-8")),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)


@given(_OWN_DATA)
def test_own_text_is_read_as_json_reads_it(value: Any) -> None:
    """Text Kestrel writes from its objects' data (no float, every integer safe: a
    Wire's, which every face's result carries) reads as json reads it, nineteen digits
    in a row or not, without the check foreign text gets."""
    data = _dumps(value).encode()
    found = own_loads(data)
    if FAST_ENCODER == "orjson":
        assert _same(found, json.loads(data))
    else:
        assert found is DECLINED


@pytest.mark.parametrize(
    "data", [b'{"a":"\\ud800"}', '{"a":"\ud800"}'.encode("utf-8", "surrogatepass")]
)
def test_own_text_orjson_refuses_is_left_to_json(data: bytes) -> None:
    """A lone surrogate (escaped, or as its bytes) is declined: the caller reads it with
    json, as it does without orjson."""
    assert own_loads(data) is DECLINED
