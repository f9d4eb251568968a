"""The integer display paths agree with exact Decimal rounding (half-even, no ``-0.00``)."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st
from kestrel_sdk.runtime.engine.scaled import Terms, money_text, ratio_text, scaled_text

from tests.kestrel_sdk.runtime.engine.tapes import daily

_AMOUNTS = st.integers(min_value=-(10**18), max_value=10**18)


def _decimal_text(value: Decimal, places: int) -> str:
    """``value`` rounded half-even to ``places``, written without a negative zero."""
    with localcontext() as ctx:
        ctx.prec = 80
        text = format(value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN), "f")
    return text.lstrip("-") if set(text) <= set("-0.") else text


def _quotient(num: int, den: int) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 80
        return Decimal(num) / Decimal(den)


@settings(max_examples=300)
@given(_AMOUNTS, st.integers(min_value=0, max_value=9))
def test_scaled_text_is_the_exact_decimal(value: int, scale: int) -> None:
    assert scaled_text(value, scale) == format(Decimal(value).scaleb(-scale), "f")


@settings(max_examples=300)
@given(_AMOUNTS, st.integers(min_value=2, max_value=8))
def test_money_text_of_an_integer_rounds_half_even_to_the_cent(value: int, scale: int) -> None:
    assert money_text(value, scale) == _decimal_text(Decimal(value).scaleb(-scale), 2)


@settings(max_examples=300)
@given(_AMOUNTS, st.integers(min_value=1, max_value=10**6), st.integers(min_value=2, max_value=6))
def test_money_text_of_a_fraction_rounds_half_even_to_the_cent(
    num: int, den: int, scale: int
) -> None:
    exact = _quotient(num, den * 10**scale)
    assert money_text(Fraction(num, den), scale) == _decimal_text(exact, 2)


@settings(max_examples=300)
@given(_AMOUNTS, st.integers(min_value=1, max_value=10**18))
def test_ratio_text_rounds_half_even_to_eight_places(num: int, den: int) -> None:
    """A drawdown's text (a frame's, a stand-down's detail): ``num / den`` to 8 places."""
    assert ratio_text(num, den) == _decimal_text(_quotient(num, den), 8)
    assert ratio_text(1, 2 * 10**8) == "0.00000000"  # a tie to the even 0
    assert ratio_text(3, 2 * 10**8) == "0.00000002"
    assert ratio_text(-3, 2 * 10**8) == "-0.00000002"


def test_ties_go_to_the_even_cent_and_negative_zero_is_zero() -> None:
    assert money_text(12345, 3) == "12.34"  # 12.345 -> 12.34
    assert money_text(12355, 3) == "12.36"  # 12.355 -> 12.36
    assert money_text(-5, 3) == "0.00"  # -0.005 -> -0.00 -> 0.00
    assert money_text(-15, 3) == "-0.02"
    assert money_text(Fraction(-1, 3), 2) == "0.00"


_TERMS = Terms.of(daily([("1.0000", "1.0000", "1.0000", "1.0000")], tick="0.0005"))


@settings(max_examples=300)
@given(
    _AMOUNTS,
    st.integers(min_value=-(10**6), max_value=10**6).filter(bool),
    st.integers(min_value=1, max_value=50),
)
def test_average_price_is_the_rounded_quotient(total: int, qty: int, den: int) -> None:
    """``avgPrice``: a basis (P units, an integer or a fraction) over signed shares,
    rounded half-even to the price scale; a short's negative basis over negative
    shares is a positive price."""
    assert (_TERMS.scale, _TERMS.price_scale) == (4, 4)
    basis = Fraction(total, den)
    expected = _decimal_text(_quotient(total, den * qty).scaleb(-4), 4)
    assert _TERMS.average(basis if den > 1 else total, qty) == expected
    assert _TERMS.average(-basis, -qty) == expected
    if basis:
        assert _TERMS.price_of(basis / qty) == expected
