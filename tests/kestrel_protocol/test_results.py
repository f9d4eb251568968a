"""A tool result's JSON text: the same bytes as ``json.dumps`` whatever it holds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kestrel_protocol import StandDown
from kestrel_protocol.canonical import FAST_ENCODER, fast_compact_text
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
