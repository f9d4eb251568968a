"""The language as an agent meets it: statements parsed, mistakes located exactly."""

from __future__ import annotations

from decimal import Decimal

import pytest
from kestrel_protocol import KestrelError
from kestrel_sdk.runtime.lang import (
    Advance,
    Cancel,
    Order,
    StandDownStatement,
    parse,
    parse_located,
    parser,
    validate_source,
)

# (source, expected line, column, code); a missing token is reported just after the
# previous token.
SYNTAX_CASES = [
    ("purchase 10 ACME", 1, 1, "K100"),
    ("  \n   hold", 2, 4, "K100"),
    ("buy", 1, 4, "K101"),
    ("buy 10", 1, 7, "K101"),
    ("buy 10 ACME limit", 1, 18, "K101"),
    ("buy 10 ACME foo", 1, 13, "K101"),
    ("buy 10 9ACME", 1, 8, "K101"),
    ("buy 10 ACME as x tif day", 1, 18, "K101"),
    ("cancel", 1, 7, "K101"),
    ("cancel Entry", 1, 8, "K101"),
    ("advance 5 6", 1, 11, "K101"),
    ("stand", 1, 6, "K101"),
    ("stand up", 1, 7, "K101"),
    ('stand down "unterminated', 1, 12, "K101"),
    ("stand down why", 1, 12, "K101"),
    ('stand down "why" not', 1, 18, "K101"),
    ("buy 0 ACME", 1, 5, "K102"),
    ("sell 1.5x ACME", 1, 6, "K102"),
    ("sell 0.000000001 ACME", 1, 6, "K102"),
    ("sell 0.0 ACME", 1, 6, "K102"),
    ("buy 1234567890 ACME", 1, 5, "K102"),
    ("advance 0", 1, 9, "K102"),
    ("advance soon", 1, 9, "K102"),
    ("buy 1 ACME limit abc", 1, 18, "K103"),
    ("buy 1 ACME limit 1.", 1, 18, "K103"),
    ("buy 1 ACME stop 10 limit 0", 1, 26, "K103"),
    ("buy 1 ACME limit 123456789012345678.901", 1, 18, "K103"),
    ("buy 1 ACME limit 12345678901234567.891", 1, 18, "K103"),  # 21 characters
    ("buy 1 ACME stop 10 limit", 1, 25, "K101"),
    ("buy 1 ACME limit 10 stop 5", 1, 21, "K101"),  # one type per order
    ("buy 1 ACME tif", 1, 15, "K101"),
    ("buy 1 ACME tif day tif gtc", 1, 20, "K101"),  # one tif per order
    ("buy 1 ACME tif day limit 5", 1, 20, "K101"),  # the type comes before the tif
    ("buy 1 ACME as all", 1, 15, "K105"),
    ("buy 1 ACME as", 1, 14, "K101"),
    ("buy 1 ACME as a as b", 1, 17, "K101"),  # one alias per order
    ("cancel all ACME x", 1, 17, "K101"),
    ("cancel o1 x", 1, 11, "K101"),
    ("advance to 2024-01-01T00:00:00Z x", 1, 33, "K101"),
    ("buy 1 ACME tif week", 1, 16, "K104"),
    ("buy 1 ACME market tif forever", 1, 23, "K104"),
    ("buy 1 ACME as Entry", 1, 15, "K105"),
    ("buy 1 ACME as o3", 1, 15, "K105"),
    ("buy 1 ACME as a\nsell 1 ACME as a", 2, 16, "K105"),
    ("advance to tomorrow", 1, 12, "K106"),
    ("advance to 2024-02-30T00:00:00Z", 1, 12, "K106"),
    ("advance to 2024-03-01T15:30:00+02:00", 1, 12, "K106"),
    ("advance to 2024-03-01T15:30:00.Z", 1, 12, "K106"),
    ("advance to 2024-03-01T15:30.000Z", 1, 12, "K106"),
    ('stand down "ends in a backslash\\"', 1, 12, "K101"),
    ("\ufeffpurchase 10 ACME", 1, 1, "K100"),
    ("stand down\nadvance", 2, 1, "K107"),
    ('buy 1 ACME\nstand down "ok"\n  # fine\n  cancel all', 4, 3, "K107"),
]


@pytest.mark.parametrize(("source", "line", "column", "code"), SYNTAX_CASES)
def test_each_syntax_mistake_is_located(source: str, line: int, column: int, code: str) -> None:
    _, diagnostics = parse(source)
    assert [(d.line, d.column, d.code) for d in diagnostics] == [(line, column, code)]
    assert diagnostics[0].severity == "error"
    assert diagnostics[0].message


def test_full_grammar_parses_with_defaults() -> None:
    source = (
        "# a plan\n"
        "BUY 10 acme limit 101.25 TIF gtc as entry\n"
        "\n"
        "sell 5 ACME stop 99 limit 98.50\n"
        "buy 1 brk.b   # trailing comment\n"
        "sell 2 ACME stop 97.5 tif ioc\n"
        "buy 3 ACME stop 100 limit 101 tif day as x\n"
        "buy 1 ACME limit 12345678901234567.89\n"  # 20 characters: the longest price
        "cancel entry\n"
        "cancel o2\n"
        "cancel all acme\n"
        "advance\n"
        "advance 390\n"
        "advance TO 2024-03-01t15:30z\n"
        'stand down "done # for today"\n'
    )
    statements, diagnostics = parse(source)
    assert diagnostics == []
    assert statements == [
        Order(2, "buy", Decimal(10), "ACME", "limit", Decimal("101.25"), None, "gtc", "entry"),
        Order(
            4,
            "sell",
            Decimal(5),
            "ACME",
            "stop-limit",
            Decimal("98.50"),
            Decimal("99"),
            "day",
            None,
        ),
        Order(5, "buy", Decimal(1), "BRK.B", "market", None, None, "day", None),
        Order(6, "sell", Decimal(2), "ACME", "stop", None, Decimal("97.5"), "ioc", None),
        Order(
            7, "buy", Decimal(3), "ACME", "stop-limit", Decimal("101"), Decimal("100"), "day", "x"
        ),
        Order(
            8,
            "buy",
            Decimal(1),
            "ACME",
            "limit",
            Decimal("12345678901234567.89"),
            None,
            "day",
            None,
        ),
        Cancel(9, "entry", False, None),
        Cancel(10, "o2", False, None),
        Cancel(11, None, True, "ACME"),
        Advance(12, 1, None),
        Advance(13, 390, None),
        Advance(14, None, "2024-03-01T15:30:00Z"),
        StandDownStatement(15, "done # for today"),
    ]


def test_a_byte_order_mark_at_the_start_is_ignored() -> None:
    # Notepad and PowerShell's Out-File write one; it is not part of the first statement.
    plain, _ = parse("buy 10 ACME\nadvance 2\n")
    marked, diagnostics = parse("\ufeffbuy 10 ACME\nadvance 2\n")
    assert diagnostics == []
    assert marked == plain
    assert validate_source("\ufeffbuy 10 ACME").ok
    # only at the start: elsewhere it is a character like any other
    _, inner = parse("advance\n\ufeffbuy 10 ACME")
    assert [(d.line, d.code) for d in inner] == [(2, "K100")]


@pytest.mark.parametrize(
    "written",
    [
        "2024-03-01T00:00:00Z",
        "2024-03-01T00:00:00+00:00",
        "2024-03-01T00:00:00.000Z",
        "2024-03-01T00:00:00.000+00:00",
        "2024-03-01t00:00:00.000000z",
        "2024-03-01T00:00Z",
    ],
)
def test_advance_to_accepts_each_utc_spelling(written: str) -> None:
    statements, diagnostics = parse(f"advance to {written}")
    assert diagnostics == []
    assert statements == [Advance(1, None, "2024-03-01T00:00:00Z")]


def test_fractional_seconds_select_the_same_bar_as_the_whole_second() -> None:
    # Bars are stamped at whole seconds, so the last bar at or before 15:30:00.999 is the
    # last bar at or before 15:30:00.
    statements, diagnostics = parse("advance to 2024-03-01T15:30:00.999Z")
    assert diagnostics == []
    assert statements == [Advance(1, None, "2024-03-01T15:30:00Z")]


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ('stand down "said \\"enough\\""', 'said "enough"'),
        ('stand down "a\\\\b"', "a\\b"),
        ('stand down "C:\\\\"', "C:\\"),
        ('stand down "keep \\n as written"', "keep \\n as written"),
        ('stand down "\\"# not a comment"  # a comment', '"# not a comment'),
    ],
)
def test_a_quoted_reason_carries_escaped_quotes(source: str, reason: str) -> None:
    statements, diagnostics = parse(source)
    assert diagnostics == []
    assert statements == [StandDownStatement(1, reason)]


def test_crlf_and_tabs_are_whitespace() -> None:
    statements, diagnostics = parse("buy\t2 ACME\r\nadvance 3\r\n")
    assert diagnostics == []
    assert [type(s).__name__ for s in statements] == ["Order", "Advance"]


def test_one_diagnostic_per_line_and_lines_in_order() -> None:
    _, diagnostics = parse("buy 0 ACME tif week\nfly\nadvance 0")
    assert [(d.line, d.code) for d in diagnostics] == [(1, "K102"), (2, "K100"), (3, "K102")]


def test_source_over_64_kib_is_refused() -> None:
    with pytest.raises(KestrelError) as err:
        parse("# " + "x" * (64 * 1024))
    assert err.value.code == "LIMIT_EXCEEDED"


def test_exactly_64_kib_is_accepted() -> None:
    source = "advance\n" + "#" * (64 * 1024 - len("advance\n"))
    statements, _ = parse(source)
    assert len(statements) == 1


def test_more_than_10000_statements_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # The shortest statement takes 8 bytes a line, so 64 KiB already stops 10,001 of
    # them; lift the byte limit to prove the statement limit holds on its own.
    with pytest.raises(KestrelError) as err:
        parse("advance\n" * 10_001)
    assert err.value.code == "LIMIT_EXCEEDED"
    monkeypatch.setattr(parser, "MAX_SOURCE_BYTES", 1 << 20)
    with pytest.raises(KestrelError) as err:
        parse("advance\n" * 10_001)
    assert err.value.code == "LIMIT_EXCEEDED"
    assert err.value.detail["limit"] == "statements"
    assert len(parse("advance\n" * 10_000)[0]) == 10_000


def test_validation_report_counts_statements() -> None:
    report = validate_source("# plan\nbuy 1 ACME\nfly away\n\nadvance\n")
    assert not report.ok
    assert report.statements == 3
    assert [d.code for d in report.diagnostics] == ["K100"]
    assert validate_source("advance 2").ok


def test_quoted_reasons_end_at_their_closing_quote() -> None:
    statements, diagnostics = parse('stand down ""\n')
    assert (statements, diagnostics) == ([StandDownStatement(1, "")], [])
    statements, diagnostics = parse('stand down "ok" # a note')
    assert (statements, diagnostics) == ([StandDownStatement(1, "ok")], [])
    _, diagnostics = parse('stand down "a"b')  # the quote ends the token; b is a new one
    assert [(d.line, d.column, d.code) for d in diagnostics] == [(1, 15, "K101")]
    _, diagnostics = parse('buy "10" ACME')
    assert [(d.line, d.column, d.code) for d in diagnostics] == [(1, 5, "K102")]


def test_statements_keep_the_columns_of_their_parts() -> None:
    located, _ = parse_located(
        "  buy 5 ACME stop 99 limit 98 as e\n"
        "cancel  e\n"
        "cancel all ACME\n"
        "advance 3\n"
        "advance to 2024-01-01T00:00:00Z\n"
        'stand down "x"'
    )
    assert [item.columns for item in located] == [
        {"start": 3, "qty": 7, "symbol": 9, "stop": 19, "limit": 28, "alias": 34},
        {"start": 1, "ref": 9},
        {"start": 1, "symbol": 12},
        {"start": 1, "count": 9},
        {"start": 1, "to": 12},
        {"start": 1},
    ]


def test_an_unexpected_word_names_what_may_come_next() -> None:
    expected = {
        "buy 1 ACME foo": "expected market, limit, stop, trail, take, loss, oco, tif or as",
        "buy 1 ACME limit 5 foo": "expected take, loss, oco, tif or as",
        "buy 1 ACME tif day foo": "expected as",
        "buy 1 ACME as a foo": "expected the end of the line",
    }
    for source, words in expected.items():
        _, diagnostics = parse(source)
        assert diagnostics[0].message == f"unexpected 'foo'; {words}", source


def test_every_line_is_checked_and_diagnostics_come_in_line_order() -> None:
    _, diagnostics = parse('stand down "x\nfly')  # an unterminated quote, then the next line
    assert [(d.line, d.code) for d in diagnostics] == [(1, "K101"), (2, "K100")]
    assert diagnostics[0].message == "unterminated quoted string at column 12"
    _, diagnostics = parse("stand down\nadvance\nfly")
    assert [(d.line, d.code) for d in diagnostics] == [(2, "K107"), (3, "K107")]
    _, diagnostics = parse("buy 1 ACME as a\nbuy 1 ACME as a\nfly")  # K105 is found last
    assert [(d.line, d.code) for d in diagnostics] == [(2, "K105"), (3, "K100")]
    _, diagnostics = parse("advance\n\ud800")  # a lone surrogate is text, not a crash
    assert [(d.line, d.code) for d in diagnostics] == [(2, "K100")]


def test_limit_refusals_say_which_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    source = "# " + "x" * (64 * 1024)
    with pytest.raises(KestrelError) as err:
        parse(source)
    assert err.value.detail == {"limit": "bytes", "max": 65536, "found": len(source)}
    monkeypatch.setattr(parser, "MAX_SOURCE_BYTES", 1 << 20)
    # an unterminated quote is a statement too: it is the 10,001st here
    with pytest.raises(KestrelError) as err:
        parse("advance\n" * 9_999 + '"\nadvance')
    assert err.value.detail == {"limit": "statements", "max": 10_000, "line": 10_001}
    _, diagnostics = parse('"\n' + "advance\n" * 9_999)  # exactly 10,000: not refused
    assert [(d.line, d.code) for d in diagnostics] == [(1, "K101")]


def test_a_backslash_ending_an_unterminated_reason_is_no_crash() -> None:
    _, diagnostics = parse('stand down "abc\\')
    assert [(d.line, d.column, d.code) for d in diagnostics] == [(1, 12, "K101")]


def test_statements_are_values_that_compare_and_hash_alike() -> None:
    # read-only by type (Final members), not frozen dataclasses: two parses of one source
    # (too long for the remembered lines, so no object is shared) still compare and hash
    # as equal values, so a set or a dict key of statements works as it did
    source = "# " + "x" * 1100 + "\nbuy 10 ACME limit 101.25 take 103 loss 99 as e\n"
    source += "buy ACME to 10%\nsell 5 ACME trail 2.50 oco g\ncancel e\nadvance 2 wait 5s\n"
    source += 'stand down "done"'
    first, _ = parse(source)
    again, _ = parse(source)
    assert len(first) == 6
    assert all(a is not b for a, b in zip(first, again, strict=True))
    assert first == again
    assert [hash(a) for a in first] == [hash(b) for b in again]
    assert set(first) == set(again)
    assert len(set(first) | set(again)) == 6
