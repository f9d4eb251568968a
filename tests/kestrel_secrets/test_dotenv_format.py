"""The .env grammar reads like python-dotenv and edits without disturbing other lines."""

from __future__ import annotations

import io

import pytest
from dotenv import dotenv_values
from hypothesis import given, settings
from hypothesis import strategies as st
from kestrel_secrets.dotenv_format import (
    DotenvEditError,
    encode_value,
    parse_dotenv,
    remove_key,
    set_key,
)

KEYS = st.from_regex(r"[A-Z_][A-Z0-9_]{0,8}", fullmatch=True).filter(lambda k: "LIVE" not in k)

# Fragments an operator's hand-written file is made of, including ones python-dotenv
# cannot parse, so the generated files exercise every branch of the grammar.
_FRAGMENTS = st.sampled_from(
    [
        "A=1",
        "export B=two words",
        "C='single $quoted'",
        'D="double \\"escaped\\" \\n"',
        "E= # empty with comment",
        "F=#not-a-comment",
        "G",
        "# a comment",
        "  H = spaced  ",
        "'I'=quoted-key",
        "J=trailing # comment",
        "not a binding",
        "K='unterminated",
        'L="multi\nline"',
        "",
        "   ",
        "\t",
        "A=again",
    ]
)
_ENDINGS = st.sampled_from(["\n", "\r\n", "\r", "\n\n"])
FILES = st.lists(st.tuples(_FRAGMENTS, _ENDINGS), max_size=12).map(
    lambda parts: "".join(text + end for text, end in parts)
)


def _reference(text: str) -> dict[str, str | None]:
    return dict(dotenv_values(stream=io.StringIO(text, newline=None), interpolate=False))


def _ours(text: str) -> dict[str, str | None]:
    return {b.key: b.value for b in parse_dotenv(text) if b.key is not None}


@settings(max_examples=300, deadline=None)
@given(FILES)
def test_parser_agrees_with_python_dotenv_and_tiles_the_text(text: str) -> None:
    bindings = parse_dotenv(text)
    assert "".join(text[b.start : b.end] for b in bindings) == text
    # python-dotenv reads files with universal newlines; compare on that text.
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    assert _ours(normalised) == _reference(normalised)


@settings(max_examples=300, deadline=None)
@given(FILES, KEYS, st.text())
def test_set_key_changes_only_that_key(text: str, key: str, value: str) -> None:
    before = _ours(text)
    malformed = [b for b in parse_dotenv(text) if b.malformed]
    refused: DotenvEditError | None = None
    try:
        after_text = set_key(text, key, value)
    except DotenvEditError as exc:
        refused = exc
    if refused is not None:
        # Only a malformed operator line (an unterminated quote) can make an edit
        # ambiguous; the refusal names it.
        assert malformed
        assert refused.line == text.count("\n", 0, malformed[0].start) + 1
        return
    after = _ours(after_text)
    assert after[key] == value
    assert {k: v for k, v in after.items() if k != key} == {
        k: v for k, v in before.items() if k != key
    }
    # Every byte outside the key's own bindings is unchanged. (Known limit: in a file
    # with old-Mac lone-CR line endings, dropping a duplicate can join a CR and a
    # following LF into one CRLF; the values are still right, checked above.)
    if "\r" not in text.replace("\r\n", ""):
        assert remove_key(after_text, key)[0] == remove_key(text, key)[0]


@settings(max_examples=200, deadline=None)
@given(FILES, KEYS)
def test_remove_key_drops_only_that_key(text: str, key: str) -> None:
    before = _ours(text)
    after_text, removed = remove_key(text, key)
    after = _ours(after_text)
    assert removed == (key in before)
    assert key not in after
    assert after == {k: v for k, v in before.items() if k != key}


def test_comments_crlf_export_and_bom_survive_an_edit() -> None:
    text = "\ufeff# operator note\r\nexport TOKEN='old'\r\n\r\nOTHER=x # keep me\r\n"
    edited = set_key(text, "TOKEN", "new")
    assert edited == '\ufeff# operator note\r\nexport TOKEN="new"\r\n\r\nOTHER=x # keep me\r\n'
    removed, was = remove_key(edited, "TOKEN")
    assert was
    assert removed == "\ufeff# operator note\r\n\r\nOTHER=x # keep me\r\n"


def test_set_appends_on_a_new_line_and_removes_later_duplicates() -> None:
    assert set_key("A=1", "B", "2") == 'A=1\nB="2"\n'
    assert set_key("", "B", "2") == 'B="2"\n'
    assert set_key("K=1\nA=x\n\nK=2\n", "K", "3") == 'K="3"\nA=x\n\n'


def test_encode_value_escapes_only_what_double_quotes_need() -> None:
    assert encode_value("a\\b\"c\nd\re $X ${Y} #z 'q'") == ('"a\\\\b\\"c\\nd\\re $X ${Y} #z \'q\'"')


def test_a_value_that_would_close_an_operators_dangling_quote_is_refused() -> None:
    text = "K='unterminated\n"
    with pytest.raises(DotenvEditError, match="line 1 cannot be parsed") as refused:
        set_key(text, "A", "it's")
    assert refused.value.line == 1
    # A value with no quote to pair with the dangling one is safe and is written.
    assert _ours(set_key(text, "A", "plain"))["A"] == "plain"
