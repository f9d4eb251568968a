"""scenario.toml rules: each malformed kind is reported at its line, and skipped."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from kestrel_sdk.runtime.catalog import check_catalog, load_catalog
from kestrel_sdk.runtime.catalog.instrument_terms import tick_scale
from kestrel_sdk.runtime.catalog.terms import ScenarioTerms, parse_terms

MakeScenario = Callable[..., Path]
SHIPPED = {"acme-chop", "acme-crash", "acme-trend", "basket-20", "minute-200k", "pairs-kx"}

# (kind, (old, new) replacement in the good template, expected line, reason phrase)
# Lines of the template: 1 id, 2 title, 3 description, 4 tape, 5 interval,
# 6 bars_per_year, 8 [account], 9 cash, 10 shortable, 11 max_position, 12 max_drawdown,
# 14 [fees], 15 bps, 16 minimum, 18 [fill], 19 participation, 20 slippage_bps,
# 22 [[instruments]], 23 symbol, 24 tick, 25 lot.
MALFORMED: list[tuple[str, tuple[str, str], int | None, str]] = [
    ("toml-syntax", ('slippage_bps = "0"', "slippage_bps = "), 20, "not valid TOML"),
    ("id-pattern", ('id = "{id}"', 'id = "Bad_Id"'), 1, "must match [a-z0-9][a-z0-9-]{0,63}"),
    ("id-too-long", ('id = "{id}"', 'id = "' + "a" * 65 + '"'), 1, "must match"),
    ("id-missing", ('id = "{id}"\n', ""), None, "missing id"),
    ("id-empty", ('id = "{id}"', 'id = ""'), 1, "id '' must match [a-z0-9][a-z0-9-]{0,63}"),
    (
        "title-terminal-escape",
        ('title = "A user scenario"', 'title = "A\\u001b[2J user scenario"'),
        2,
        "title holds the control character '\\x1b' (character 2)",
    ),
    (
        "title-line-break",
        ('title = "A user scenario"', 'title = "A user\\nscenario"'),
        2,
        "title holds the control character '\\n' (character 7)",
    ),
    (
        "description-direction-override",
        ('description = "two days of FOO"', 'description = "two days\\nof \\u202eFOO"'),
        3,
        "description holds the control character '\\u202e' (character 13)",
    ),
    ("cash-digits", ('cash = "5000.00"', 'cash = "' + "9" * 5000 + '"'), 9, "cash is too large"),
    ("tick-digits", ('tick = "0.01"', 'tick = "' + "9" * 5000 + '"'), 24, "tick is too large"),
    (
        "integer-digits",
        ("max_position = 1000", "max_position = " + "9" * 5000),
        None,
        "not readable TOML: a number too long",
    ),
    (
        "nested-too-deeply",
        ('title = "A user scenario"', "title = " + "[" * 5000 + "]" * 5000),
        None,
        "not readable TOML: nested too deeply",
    ),
    ("title-not-string", ('title = "A user scenario"', "title = 3"), 2, "title must be a string"),
    ("unknown-top-key", ('interval = "1d"', 'interval = "1d"\ncolour = "red"'), 6, "unknown key"),
    ("interval", ('interval = "1d"', 'interval = "2d"'), 5, "interval '2d' must be one of"),
    ("bars-per-year", ("bars_per_year = 252", "bars_per_year = 0"), 6, "at least 1"),
    ("bars-per-year-bool", ("bars_per_year = 252", "bars_per_year = true"), 6, "integer"),
    ("tape-escapes", ('tape = "tape.csv"', 'tape = "../x/tape.csv"'), 4, "inside the scenario"),
    ("tape-absolute", ('tape = "tape.csv"', 'tape = "/etc/tape.csv"'), 4, "inside the scenario"),
    ("tape-not-csv", ('tape = "tape.csv"', 'tape = "tape.txt"'), 4, ".csv or .csv.gz"),
    ("cash-float", ('cash = "5000.00"', "cash = 5000.0"), 9, "decimal string"),
    ("cash-negative", ('cash = "5000.00"', 'cash = "-5"'), 9, "decimal string"),
    ("cash-exponent", ('cash = "5000.00"', 'cash = "5e3"'), 9, "decimal string"),
    ("cash-sub-cent", ('cash = "5000.00"', 'cash = "5000.001"'), 9, "2 decimal places"),
    ("cash-zero", ('cash = "5000.00"', 'cash = "0"'), 9, "greater than 0"),
    ("shortable", ("shortable = false", 'shortable = "no"'), 10, "true or false"),
    ("max-position", ("max_position = 1000", "max_position = 0"), 11, "at least 1"),
    ("max-drawdown-high", ('max_drawdown = "1.0"', 'max_drawdown = "1.5"'), 12, "at most 1"),
    ("max-drawdown-zero", ('max_drawdown = "1.0"', 'max_drawdown = "0"'), 12, "greater than 0"),
    ("account-missing-key", ("max_position = 1000\n", ""), 8, "missing account.max_position"),
    (
        "account-unknown-key",
        ("max_position = 1000", "max_position = 1000\nleverage = 2"),
        12,
        "unknown key 'leverage' in [account]",
    ),
    ("fees-missing", ('[fees]\nbps = "10"\nminimum = "0.00"\n', ""), None, "missing table [fees]"),
    ("fee-bps-int", ('bps = "10"', "bps = 10"), 15, "decimal string"),
    ("participation-zero", ('participation = "1"', 'participation = "0"'), 19, "greater than 0"),
    ("participation-high", ('participation = "1"', 'participation = "2"'), 19, "at most 1"),
    ("slippage", ('slippage_bps = "0"', 'slippage_bps = "-1"'), 20, "decimal string"),
    ("symbol-lower", ('symbol = "FOO"', 'symbol = "foo"'), 23, "upper-case symbol"),
    ("tick-zero", ('tick = "0.01"', 'tick = "0"'), 24, "greater than 0"),
    ("tick-float", ('tick = "0.01"', "tick = 0.01"), 24, "decimal string"),
    ("lot-zero", ("lot = 1", "lot = 0"), 25, "at least 1"),
    ("lot-decimal-zero", ("lot = 1", 'lot = "0.00"'), 25, "greater than 0"),
    ("lot-float", ("lot = 1", "lot = 0.01"), 25, 'decimal string such as "0.01"'),
    ("lot-too-fine", ("lot = 1", 'lot = "0.000000001"'), 25, "lot 0.000000001 is finer than 1e-8"),
    (
        "margin-kind",
        ("max_position = 1000", 'max_position = 1000\nkind = "loan"'),
        12,
        """account.kind must be "margin", not 'loan'""",
    ),
    (
        "margin-missing-term",
        (
            "max_position = 1000",
            'max_position = 1000\nkind = "margin"\nleverage = "2"'
            '\nborrow_rate = "0"\ncash_rate = "0"',
        ),
        8,
        "missing account.maintenance_margin",
    ),
    (
        "margin-leverage-low",
        (
            "max_position = 1000",
            'max_position = 1000\nkind = "margin"\nleverage = "0.5"\nmaintenance_margin = "0.25"'
            '\nborrow_rate = "0"\ncash_rate = "0"',
        ),
        13,
        "account.leverage must be at least 1, not 0.5",
    ),
    (
        "instrument-unknown-key",
        ("lot = 1", "lot = 1\nmargin = 2"),
        26,
        "unknown key 'margin' in [[instruments]]",
    ),
    (
        "no-instruments",
        ('[[instruments]]\nsymbol = "FOO"\ntick = "0.01"\nlot = 1\n', ""),
        None,
        "missing [[instruments]]",
    ),
    (
        "duplicate-symbol",
        ("lot = 1\n", 'lot = 1\n[[instruments]]\nsymbol = "FOO"\ntick = "0.01"\nlot = 1\n'),
        27,
        "duplicate instrument FOO",
    ),
]


@pytest.mark.parametrize("case", MALFORMED, ids=[case[0] for case in MALFORMED])
def test_malformed_scenario_toml_is_reported_and_skipped(
    tmp_path: Path,
    make_scenario: MakeScenario,
    good_toml: str,
    caplog: pytest.LogCaptureFixture,
    case: tuple[str, tuple[str, str], int | None, str],
) -> None:
    _, (old, new), line, phrase = case
    assert old in good_toml
    make_scenario(tmp_path, "good")
    bad = make_scenario(tmp_path, "bad", toml=good_toml.replace(old, new, 1))
    with caplog.at_level(logging.WARNING, logger="kestrel_sdk.runtime.catalog"):
        index = load_catalog([tmp_path])
    assert len(index.problems) == 1, index.problems
    problem = index.problems[0]
    assert problem.path == bad / "scenario.toml"
    assert problem.line == line
    assert phrase in problem.reason
    assert index.get("good") is not None
    assert set(index.ids()) >= SHIPPED
    assert set(index.ids()) == SHIPPED | {"good"}
    assert str(bad / "scenario.toml") in caplog.text
    assert [(p.path, p.line, p.reason) for p in check_catalog([tmp_path])] == [
        (problem.path, problem.line, problem.reason)
    ]


def test_every_fault_of_one_file_is_reported(
    tmp_path: Path, make_scenario: MakeScenario, good_toml: str
) -> None:
    toml = (
        good_toml.replace('interval = "1d"', 'interval = "1w"')
        .replace("lot = 1", "lot = -1")
        .replace('cash = "5000.00"', "cash = 5000")
    )
    bad = make_scenario(tmp_path, "bad", toml=toml)
    problems = check_catalog([tmp_path])
    assert [(p.path, p.line) for p in problems] == [(bad / "scenario.toml", n) for n in (5, 9, 25)]


def test_description_is_optional(good_toml: str) -> None:
    terms = parse_terms(
        good_toml.replace('description = "two days of FOO"\n', "").replace("{id}", "x")
    )
    assert isinstance(terms, ScenarioTerms)
    assert terms.description == ""
    assert terms.cash == "5000.00"


def test_cash_is_normalised_to_the_cent(good_toml: str) -> None:
    terms = parse_terms(good_toml.replace('"5000.00"', '"5000"').replace("{id}", "x"))
    assert isinstance(terms, ScenarioTerms)
    assert terms.cash == "5000.00"


@pytest.mark.parametrize(
    ("tick", "scale"), [("0.01", 2), ("0.05", 2), ("0.50", 1), ("1", 0), ("0.0001", 4)]
)
def test_tick_scale(tick: str, scale: int) -> None:
    assert tick_scale(tick) == scale


def test_tape_scale_is_the_finest_tick(good_toml: str) -> None:
    toml = good_toml + '\n[[instruments]]\nsymbol = "BAR"\ntick = "0.001"\nlot = 1\n'
    terms = parse_terms(toml.replace("{id}", "x"))
    assert isinstance(terms, ScenarioTerms)
    assert terms.symbols == ("FOO", "BAR")
    assert terms.scale == 3
