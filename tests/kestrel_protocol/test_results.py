"""A tool result's JSON text: the same bytes as ``json.dumps`` whatever it holds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
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
