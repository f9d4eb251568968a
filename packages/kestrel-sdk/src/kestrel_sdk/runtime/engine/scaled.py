"""Exact integer arithmetic for one session: every price and amount in units of 10**-P.

The engine never touches a float or a Decimal in its inner loop. ``P`` is the finest
scale the scenario needs (tape prices, ticks, starting cash, and at least cents), so
fills, cash, fees and equity are exact integers; only the frame's display rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

from ..catalog.model import LoadedScenario
from .lots import lot_places, quantity_json, quantity_member, quantity_units

__all__ = [
    "NEVER",
    "Terms",
    "div_ceil",
    "div_round_half_even",
    "fraction_of",
    "money_text",
    "places",
    "ratio_text",
    "scaled_text",
]

NEVER = 1 << 62
"""A bar index no tape reaches (``gtc`` never expires, an unseen trigger never comes)."""


def places(text: str) -> int:
    """Decimal places of a decimal string."""
    return len(text.split(".", 1)[1]) if "." in text else 0


def fraction_of(text: str) -> Fraction:
    """A decimal string as an exact fraction."""
    return Fraction(Decimal(text))


def div_round_half_even(num: int, den: int) -> int:
    """``num / den`` rounded to an integer, ties to even (``den`` > 0)."""
    q, r = divmod(num, den)
    twice = 2 * r
    if twice > den or (twice == den and q % 2 == 1):
        q += 1
    return q


def div_ceil(num: int, den: int) -> int:
    """``ceil(num / den)`` for ``den`` > 0."""
    return -((-num) // den)


def scaled_text(value: int, scale: int) -> str:
    """An integer in units of 10**-scale as a decimal string with ``scale`` places."""
    if not scale:
        return str(value)
    if value < 0:
        whole, frac = divmod(-value, 10**scale)
        return "-%d.%0*d" % (whole, scale, frac)  # noqa: UP031 - the fastest format
    whole, frac = divmod(value, 10**scale)
    return "%d.%0*d" % (whole, scale, frac)  # noqa: UP031 - the fastest format


def money_text(value: Fraction | int, scale: int) -> str:
    """An amount in units of 10**-scale as money: to the cent, half-even, never ``-0.00``.

    Written on every step (a frame's account and positions), so it formats the cents
    itself: one ``%`` of the whole and the two-digit cents."""
    if isinstance(value, int):
        cents = value if scale == 2 else div_round_half_even(value, 10 ** (scale - 2))
    else:
        cents = div_round_half_even(value.numerator * 100, value.denominator * 10**scale)
    if cents < 0:  # (an amount that rounds to no cent is ``0.00``, never ``-0.00``)
        return "-%d.%02d" % divmod(-cents, 100)  # noqa: UP031 - the fastest format
    return "%d.%02d" % divmod(cents, 100)  # noqa: UP031 - the fastest format


def ratio_text(num: int, den: int) -> str:
    """``num / den`` as a ratio: 8 places, half-even (``den`` > 0)."""
    q = div_round_half_even(num * 100_000_000, den)
    if q < 0:
        return "-%d.%08d" % divmod(-q, 100_000_000)  # noqa: UP031 - the fastest format
    return "%d.%08d" % divmod(q, 100_000_000)  # noqa: UP031 - the fastest format


@dataclass(frozen=True, slots=True)
class Terms:
    """A scenario's account, fee and fill terms as exact integers and fractions."""

    scale: int
    """``P``: amounts are integers in units of 10**-P."""
    price_scale: int
    """Places shown for prices (the tape's or the finest tick's, whichever is finer)."""
    tape_factor: int
    """Multiply a tape integer by this to get P units."""
    cent: int
    """One cent in money units (``10**(P + Q - 2)``)."""
    cash: int
    shortable: bool
    max_position: int
    max_drawdown: Fraction
    fee_rate: tuple[int, int]
    """Fee per unit of notional (bps / 10000) as its numerator and denominator, in
    lowest terms (plain integers: a ``Fraction``'s are properties, read on every fill)."""
    fee_minimum: int
    participation: Fraction
    slippage: Fraction
    """Slippage per unit of price (slippage_bps / 10000)."""
    ticks: dict[str, int]
    lots: dict[str, int]
    """Each instrument's lot in quantity units."""
    qty_scale: int = 0
    """``Q``: quantities are integers in units of 10**-Q (see :mod:`.lots`); 0 when every
    lot is whole."""

    @property
    def money_scale(self) -> int:
        """``P + Q``: cash, fees, P&L and equity are integers in units of 10**-(P+Q),
        so a quantity (10**-Q) times a price (10**-P) is money with no division."""
        return self.scale + self.qty_scale

    @classmethod
    def of(cls, loaded: LoadedScenario) -> Terms:
        sc = loaded.scenario
        tape = loaded.tape
        price_scale = max([tape.scale] + [places(inst.tick) for inst in sc.instruments])
        scale = max(2, price_scale, places(sc.account.cash), places(sc.fees.minimum))
        unit = 10**scale
        qty_scale = lot_places(inst.lot for inst in sc.instruments)
        money_unit = 10 ** (scale + qty_scale)
        cent = 10 ** (scale + qty_scale - 2)

        def amount(text: str) -> int:
            return int(DEFAULT_DECIMAL_CONTEXT.multiply(Decimal(text), unit))

        fee_rate = fraction_of(sc.fees.bps) / 10000
        minimum = fraction_of(sc.fees.minimum)
        cents = div_round_half_even(minimum.numerator * 100, minimum.denominator)
        return cls(
            scale=scale,
            price_scale=price_scale,
            tape_factor=10 ** (scale - tape.scale),
            cent=cent,
            cash=int(DEFAULT_DECIMAL_CONTEXT.multiply(Decimal(sc.account.cash), money_unit)),
            shortable=sc.account.shortable,
            max_position=sc.account.max_position * 10**qty_scale,
            max_drawdown=fraction_of(sc.account.max_drawdown),
            fee_rate=fee_rate.as_integer_ratio(),
            fee_minimum=cents * cent,
            participation=fraction_of(sc.fill.participation),
            slippage=fraction_of(sc.fill.slippage_bps) / 10000,
            ticks={inst.symbol: amount(inst.tick) for inst in sc.instruments},
            lots={inst.symbol: quantity_units(inst.lot, qty_scale) for inst in sc.instruments},
            qty_scale=qty_scale,
        )

    def units(self, qty: Decimal | int) -> int:
        """A quantity (shares, as a statement writes it) in quantity units."""
        return quantity_units(qty, self.qty_scale)

    def shares(self, units: int) -> Decimal:
        """Quantity units as shares, exactly (the value a statement would write)."""
        return Decimal(units).scaleb(-self.qty_scale, DEFAULT_DECIMAL_CONTEXT)

    def quantity(self, units: int) -> int | str:
        """A quantity in quantity units as protocol objects carry it (see :mod:`.lots`)."""
        return quantity_member(units, self.qty_scale)

    def quantity_json(self, units: int) -> str:
        """:meth:`quantity` as JSON text."""
        return quantity_json(units, self.qty_scale)

    def money(self, value: Fraction | int) -> str:
        """A money amount (money units) as text to the cent (:func:`money_text`)."""
        return money_text(value, self.scale + self.qty_scale)

    def fee(self, notional: int) -> int:
        """``max(minimum, notional × bps / 10000)`` rounded to the cent, in money units."""
        num, den = self.fee_rate
        cent = self.cent
        cents = div_round_half_even(notional * num, den * cent)
        return max(self.fee_minimum, cents * cent)

    def amount(self, value: Decimal) -> int:  # a price: P units
        """A decimal (a limit or stop price) in P units, truncated to the scale."""
        return int(DEFAULT_DECIMAL_CONTEXT.multiply(value, 10**self.scale))

    def price(self, value: int) -> str:
        """A P-unit price as a decimal string with the price scale's places."""
        return scaled_text(value // 10 ** (self.scale - self.price_scale), self.price_scale)

    def price_of(self, value: Fraction) -> str:
        """A fractional price (an average) rounded half-even to the price scale."""
        return self.average(value.numerator, value.denominator)

    def average(self, total: Fraction | int, qty: int) -> str:
        """``total / qty`` (a basis or a notional over shares, ``qty`` ≠ 0) as a price
        rounded half-even to the price scale, in integers only (it is shown per step)."""
        num, den = total.numerator, total.denominator * qty
        if den < 0:
            num, den = -num, -den
        shown = div_round_half_even(num, den * 10 ** (self.scale - self.price_scale))
        return scaled_text(shown, self.price_scale)
