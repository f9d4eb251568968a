"""The order forms' grammar (docs/spec.md §3): each form reads, and each bad part is one
diagnostic at the column of the word that is wrong."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from kestrel_protocol import ORDER_FORMS, OrderForm
from kestrel_sdk.runtime.lang import FORM_EXAMPLES, Amount, Order, parse, validate_source

from tests.kestrel_sdk.runtime.engine.tapes import daily

ACME = daily([("100", "100", "100", "100")] * 3)


@pytest.mark.parametrize("source", sorted(FORM_EXAMPLES.values()))
def test_every_form_s_example_is_valid_on_a_scenario_trading_acme(source: str) -> None:
    report = validate_source(source, ACME)
    assert report.ok, report.diagnostics


def _form_of(order: Order) -> str:
    """The form an order statement reads as (what ``ORDER_FORMS`` names it)."""
    if order.target is not None:
        return "target-weight" if order.target.percent else "target-position"
    if order.trail is not None:
        return "trail-percent" if order.trail.percent else "trail-price"
    if order.take is not None and order.loss_trail is not None:
        return "bracket-trailing"
    if order.take is not None and order.loss is not None:
        return "bracket"
    return "oco" if order.oco is not None else "plain"


@pytest.mark.parametrize("form", ORDER_FORMS, ids=lambda form: form.form)
def test_each_taught_example_reads_as_the_form_it_names(form: OrderForm) -> None:
    """What agents are shown (the catalog, the instructions, the brief) is what the
    parser reads: an example that no longer parses, or reads as another form, fails."""
    statements, diagnostics = parse(form.example)
    assert diagnostics == []
    [order] = statements
    assert isinstance(order, Order)
    assert _form_of(order) == form.form
    required = re.sub(r"\[[^]]*\]", "", form.syntax)  # its optional parts dropped
    keywords = {word for word in required.split() if re.fullmatch("[a-z]+", word)}
    assert keywords <= set(form.example.split()), (form.syntax, form.example)


def test_the_forms_read_into_the_order_statement() -> None:
    statements, diagnostics = parse(
        "buy 10 ACME limit 99 take 110 loss 95 oco g as e\n"
        "sell 5 ACME trail 2.5 tif gtc\n"
        "sell 5 ACME trail 5%\n"
        "buy ACME to 10%\n"
        "sell acme to -20 limit 3\n"
        "buy 100 TO limit 7\n"  # a symbol named TO is still a symbol
        "sell 2 ACME loss trail 5% take 90\n"
    )
    assert diagnostics == []
    bracket, trail, percent, weight, position, plain, trailing = statements
    assert isinstance(trailing, Order)
    assert (trailing.loss, trailing.loss_trail, trailing.take, trailing.placed) == (
        None,
        Amount(Decimal(5), True),
        Decimal(90),
        3,
    )
    assert isinstance(bracket, Order)
    assert (bracket.take, bracket.loss, bracket.oco, bracket.placed) == (
        Decimal(110),
        Decimal(95),
        "g",
        3,
    )
    assert isinstance(trail, Order)
    assert (trail.type, trail.trail) == ("trailing-stop", Amount(Decimal("2.5"), False))
    assert isinstance(percent, Order)
    assert percent.trail == Amount(Decimal(5), True)
    assert isinstance(weight, Order)
    assert (weight.qty, weight.target) == (Decimal(0), Amount(Decimal(10), True))
    assert isinstance(position, Order)
    assert (position.symbol, position.target) == ("ACME", Amount(Decimal(-20), False))
    assert isinstance(plain, Order)
    assert (plain.symbol, plain.qty, plain.target, repr(plain).count("=")) == (
        "TO",
        Decimal(100),
        None,
        9,
    )


BAD = [
    ("buy ACME to 101%", 13, "K108"),
    ("buy ACME to x", 13, "K108"),
    ("buy ACME to", 12, "K101"),
    ("sell 1 ACME trail 100%", 19, "K108"),
    ("sell 1 ACME trail 0%", 19, "K108"),
    ("sell 1 ACME trail", 18, "K101"),
    ("buy 10 ACME take 90 loss 95", 18, "K109"),
    ("buy 1 ACME limit 10 loss 11", 26, "K109"),
    ("buy 1 ACME limit 10 take 9", 26, "K109"),
    ("sell 1 ACME limit 10 loss 10", 27, "K109"),
    ("buy 1 ACME take 2 take 3", 19, "K101"),
    ("buy 1 ACME oco all", 16, "K105"),
    ("buy ACME to 5 take 3", 15, "K101"),
    ("buy ACME to 5 stop 3", 20, "K101"),
    ("sell 1 ACME trail 2 loss 1", 21, "K101"),
    ("buy 1 ACME tif gtc take 3", 20, "K101"),
    ("buy 1 ACME loss trail", 22, "K101"),
    ("buy 1 ACME loss trail 100%", 23, "K108"),
    ("buy 1 ACME loss trail 2 loss 3", 25, "K101"),
]


@pytest.mark.parametrize(("source", "column", "code"), BAD)
def test_each_bad_part_is_one_diagnostic_at_its_word(source: str, column: int, code: str) -> None:
    _, diagnostics = parse(source)
    assert [(d.column, d.code) for d in diagnostics] == [(column, code)], diagnostics


def test_the_forms_prices_are_checked_against_the_tick_grid() -> None:
    report = validate_source(
        "buy 1 ACME take 100.005 loss 90\nsell 1 ACME trail 0.001\nbuy 1 ACME loss trail 0.015",
        ACME,
    )
    assert [(d.line, d.column, d.code) for d in report.diagnostics] == [
        (1, 17, "K202"),
        (2, 19, "K202"),
        (3, 23, "K202"),
    ]


def test_a_position_target_is_a_whole_number_of_lots() -> None:
    lots = daily([("100", "100", "100", "100")] * 3, lot=10)
    report = validate_source("buy ACME to 15\nsell ACME to -20\nbuy ACME to 15%", lots)
    assert [(d.line, d.column, d.code) for d in report.diagnostics] == [(1, 13, "K203")]
