"""Disguise: a scenario's bars made unrecognisable, returns kept, deterministically.

From a source scenario and a secret, :func:`disguise_transform` draws the transform
and :func:`disguised_tape_csv` applies it:

- each symbol gets a fictitious ticker (four letters, none containing a source symbol);
- the first session's day moves by a whole number of weeks, to between 2200 and 2400 (a
  period no model has seen), and the bars are laid on sessions of the disguise's own
  (:mod:`.disguise_sessions`: the source's holidays closed up, no month length kept,
  every session on one template of times of day whatever the source's clock did;
  bar order and which bars share a session kept);
- each symbol's prices are multiplied by a secret factor chosen so that the disguised
  prices lie wholly above or wholly below the source's range (none within 5 % of a
  source price), and rounded to a new tick: a power of ten fine enough for at least
  10,000 ticks at the lowest price, but never finer than the factor times the grid the
  source's prices lie on (their greatest common divisor), then the least 1, 2 or 5
  times a power of ten not below it. A finer tick would keep that grid, scaled: every
  disguised price a multiple of one spacing, which an agent finds from the tape alone,
  and dividing by it gives back every source price. Every disguised price is exact on
  its tick and differs from ``factor * source`` by at most half a tick, so every
  bar-to-bar return is the source's within one tick's rounding;
- volumes are multiplied by one secret factor, rounded to a step per symbol (one
  unit, or 1, 2 or 5 times a power of ten) never finer than the factor times the grid
  of the source's volumes (GOOG's are in hundreds), for the same reason; a positive
  volume is never shown as 0.

Everything is drawn from sha256 of the secret and the source's tape root and computed
in integers and ``decimal`` (no float, no randomness), so the same (source, secret)
makes the same tape on every machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from math import gcd
from typing import Any

from kestrel_protocol import decimal_context

from .disguise_calendar import DisguiseCalendar, open_day_calendar, week_calendar
from .disguise_sessions import SESSIONS, session_calendar
from .instrument_terms import tick_scale
from .model import Tape
from .tape_format import HEADER
from .volumes import volume_text

__all__ = [
    "CALENDARS",
    "OPEN_DAYS",
    "SESSIONS",
    "DisguiseTransform",
    "SymbolDisguise",
    "disguise_transform",
    "disguised_tape_csv",
    "disguised_volume",
    "scaled_price",
]

_EPOCH = date(2200, 1, 1)
_SPAN_WEEKS = 200 * 52  # first bar between 2200 and 2400
_MIN_TICKS = 10_000  # ticks in the lowest disguised price, at least
_MARGIN = Decimal("1.05")  # disguised prices stay this far outside the source's range
_LETTERS = "BCDFGHJKLMNPQRSTVWXZ"
_VOWELS = "AEIOUY"
_DECIMAL = decimal_context()
_SIX = decimal_context(6)
OPEN_DAYS = "open-days"
"""The calendar a disguise made in issue 48's session 17 was laid on (its UTC days on open
days, each bar's time of day kept); a reveal naming no ``calendar`` is of a disguise
made before, moved by whole weeks. One made now is laid on :data:`SESSIONS`."""
CALENDARS = (SESSIONS, OPEN_DAYS, None)
"""Every calendar a disguise was laid on, the newest first."""


@dataclass(frozen=True, slots=True)
class SymbolDisguise:
    """One symbol's disguise: its new ticker, price factor and tick, and the step its
    volumes are rounded to (in volume, ``"1"`` before issue 48: then not in its JSON)."""

    symbol: str
    disguised: str
    factor: str
    tick: str
    volume_tick: str = "1"

    def to_json(self) -> dict[str, str]:
        made = {
            "symbol": self.symbol,
            "as": self.disguised,
            "factor": self.factor,
            "tick": self.tick,
        }
        if self.volume_tick != "1":
            made["volumeTick"] = self.volume_tick
        return made


@dataclass(frozen=True, slots=True)
class DisguiseTransform:
    """The whole transform: the first bar's week shift, the volume factor, each symbol's
    part, and the calendar the bars are laid on (one of :data:`CALENDARS`; ``None``:
    moved by whole weeks, as a disguise made before open days was, then not in its JSON)."""

    weeks: int
    volume_factor: str
    symbols: tuple[SymbolDisguise, ...]
    calendar: str | None = SESSIONS

    def to_json(self) -> dict[str, Any]:
        made: dict[str, Any] = {
            "weeks": self.weeks,
            "volumeFactor": self.volume_factor,
            "symbols": [item.to_json() for item in self.symbols],
        }
        if self.calendar is not None:
            made["calendar"] = self.calendar
        return made

    def calendar_of(self, times: Sequence[str]) -> DisguiseCalendar:
        """Where the source's bar ``times`` are laid (and any time between them)."""
        if self.calendar == SESSIONS:
            return session_calendar(times, self.weeks)
        if self.calendar == OPEN_DAYS:
            return open_day_calendar(times, self.weeks)
        return week_calendar(times, self.weeks)

    def renamed(self) -> dict[str, str]:
        return {item.symbol: item.disguised for item in self.symbols}

    def with_rules(
        self, ticks: Mapping[str, str], volume_ticks: Mapping[str, str], calendar: object
    ) -> DisguiseTransform:
        """The transform with the price and volume ticks these name by disguised symbol
        (each a decimal above 0; others are ignored) and its bars laid on ``calendar``
        (one of :data:`CALENDARS`, else by whole weeks): a disguise made under an earlier
        rule (its reveal says which) is the same transform otherwise."""
        parts = tuple(
            replace(
                part,
                tick=_tick_text(ticks.get(part.disguised)) or part.tick,
                volume_tick=_tick_text(volume_ticks.get(part.disguised)) or part.volume_tick,
            )
            for part in self.symbols
        )
        laid = next((name for name in CALENDARS if name == calendar), None)
        return replace(self, symbols=parts, calendar=laid)


def _draw(secret: bytes, tape_root: str, label: str) -> int:
    digest = hashlib.sha256(b"kestrel.disguise\n" + tape_root.encode() + b"\n")
    digest.update(label.encode() + b"\n" + secret)
    return int.from_bytes(digest.digest(), "big")


def _fraction(value: int, places: int = 6) -> Decimal:
    """A number in ``[0, 1)`` from a draw, with ``places`` decimals."""
    return _DECIMAL.divide(Decimal(value % 10**places), Decimal(10**places))


def _ticker(draw: int, taken: set[str], sources: tuple[str, ...]) -> str | None:
    letters = [
        _LETTERS[draw % 20],
        _VOWELS[draw // 20 % 6],
        _LETTERS[draw // 120 % 20],
        _LETTERS[draw // 2400 % 20],
    ]
    name = "".join(letters)
    if name in taken or any(s in name or name in s for s in sources):
        return None
    return name


def _factor(secret: bytes, tape: Tape, symbol: str) -> Decimal:
    """The price factor: the disguised range wholly above or below the source's (all
    arithmetic in one fixed context, whatever the caller's decimal context is)."""
    columns = tape.columns[symbol]
    spread = _DECIMAL.divide(Decimal(max(columns.high)), Decimal(max(min(columns.low), 1)))
    draw = _draw(secret, tape.root, f"factor {symbol}")
    exponent = _DECIMAL.add(Decimal("0.1"), _DECIMAL.multiply(Decimal("0.9"), _fraction(draw)))
    away = _DECIMAL.multiply(_MARGIN, _DECIMAL.power(Decimal(10), exponent))
    above = draw >> 64 & 1
    factor = (
        _DECIMAL.multiply(spread, away)
        if above
        else _DECIMAL.divide(1, _DECIMAL.multiply(spread, away))
    )
    return _SIX.plus(factor)


def _tick_text(tick: object) -> str | None:
    """``tick`` when it is the text of a finite decimal above 0, else ``None``."""
    if not isinstance(tick, str):
        return None
    try:
        value = Decimal(tick)
    except ArithmeticError:
        return None
    return tick if value.is_finite() and value > 0 else None


def _at_least(grid: Decimal) -> Decimal:
    """The least of 1, 2 and 5 times a power of ten not below ``grid``."""
    power = Decimal(1).scaleb(grid.adjusted(), _DECIMAL)
    return next(step * power for step in (1, 2, 5, 10) if step * power >= grid)


def _tick_for(lowest: Decimal, grid: Decimal) -> str:
    """A power-of-ten tick giving at least ``_MIN_TICKS`` ticks at ``lowest`` (1e-8 to
    1), or, when coarser, the least 1, 2 or 5 times a power of ten not below ``grid``
    (the source's grid times the factor; it may be above 1): a finer tick shows the grid."""
    places = min(8, max(0, len(str(_MIN_TICKS)) - 1 - lowest.adjusted()))
    return f"{max(Decimal(1).scaleb(-places, _DECIMAL), _at_least(grid)).normalize(_DECIMAL):f}"


def _volume_tick(volumes: Sequence[int], scale: int, factor: Decimal) -> str:
    """The step disguised volumes are rounded to: one unit of the tape's volume places,
    or, when coarser, the least 1, 2 or 5 times a power of ten (units) not below the
    factor times the source volumes' grid."""
    grid = _DECIMAL.multiply(Decimal(max(gcd(*volumes), 1)), factor)
    step = max(Decimal(1), _at_least(grid)).scaleb(-scale, _DECIMAL)
    return f"{step.normalize(_DECIMAL):f}"


def disguised_volume(units: int, scale: int, factor: Decimal, volume_tick: str) -> int:
    """A source volume (``units`` of ``10**-scale``) times ``factor``, rounded half up
    to ``volume_tick``, in the same units; a positive volume is at least one step."""
    step = int(Decimal(volume_tick).scaleb(scale, _DECIMAL))
    shown = scaled_price(units, 0, factor, str(step))
    return step if units > 0 and shown == 0 else shown


def disguise_transform(tape: Tape, secret: bytes) -> DisguiseTransform:
    """The transform (source tape, secret) decides."""
    unit = Decimal(1).scaleb(-tape.scale, _DECIMAL)
    first = datetime.strptime(tape.times[0], "%Y-%m-%dT%H:%M:%SZ").date()
    target = _EPOCH + timedelta(weeks=_draw(secret, tape.root, "weeks") % _SPAN_WEEKS)
    weeks = (target - first).days // 7
    volume_draw = _draw(secret, tape.root, "volume")
    exponent = _DECIMAL.subtract(
        _DECIMAL.multiply(Decimal("0.6"), _fraction(volume_draw)), Decimal("0.3")
    )
    volume_factor = _SIX.plus(_DECIMAL.power(Decimal(10), exponent))
    taken: set[str] = set()
    parts: list[SymbolDisguise] = []
    for symbol in tape.symbols:
        attempt = 0
        name = None
        while name is None:
            draw = _draw(secret, tape.root, f"ticker {symbol} {attempt}")
            name = _ticker(draw, taken, tape.symbols)
            attempt += 1
        taken.add(name)
        factor = _factor(secret, tape, symbol)
        columns = tape.columns[symbol]
        low = _DECIMAL.multiply(Decimal(max(min(columns.low), 1)), unit)
        lowest = _DECIMAL.multiply(low, factor)
        step = gcd(*columns.open, *columns.high, *columns.low, *columns.close)
        grid = _DECIMAL.multiply(_DECIMAL.multiply(Decimal(max(step, 1)), unit), factor)
        volume_tick = _volume_tick(columns.volume, tape.volume_scale, volume_factor)
        tick = _tick_for(lowest, grid)
        parts.append(SymbolDisguise(symbol, name, f"{factor:f}", tick, volume_tick))
    return DisguiseTransform(weeks, f"{volume_factor:f}", tuple(parts))


def scaled_price(units: int, scale: int, factor: Decimal, tick: str) -> int:
    """A source price (``units`` of ``10**-scale``) times ``factor``, rounded half up to
    a multiple of ``tick``, in units of that tick's places."""
    places = tick_scale(tick)
    step = int(Decimal(tick).scaleb(places, _DECIMAL))  # 1, or 10, 100 … for a tick above 1
    sign, digits, exponent = factor.as_tuple()
    assert isinstance(exponent, int)
    assert not sign
    whole = int("".join(map(str, digits)))
    shift = places - scale + exponent
    numerator: int = units * whole * 10 ** max(shift, 0)
    divisor: int = 10 ** max(-shift, 0) * step
    return (2 * numerator + divisor) // (2 * divisor) * step


def _text(units: int, places: int) -> str:
    whole, frac = divmod(units, 10**places)
    return f"{whole}.{frac:0{places}d}" if places else str(whole)


def disguised_tape_csv(tape: Tape, transform: DisguiseTransform, scale: int) -> str:
    """The canonical CSV of the disguised tape (prices with ``scale`` places, the
    finest of the new ticks; symbols in code-point order within a time)."""
    volume = Decimal(transform.volume_factor)
    parts: Mapping[str, SymbolDisguise] = {item.symbol: item for item in transform.symbols}
    order = sorted(tape.symbols, key=lambda symbol: parts[symbol].disguised)
    rows: list[str] = [HEADER, "\n"]
    for index, moved in enumerate(transform.calendar_of(tape.times).bar_times()):
        for symbol in order:
            part = parts[symbol]
            factor = Decimal(part.factor)
            places = tick_scale(part.tick)
            col = tape.columns[symbol]
            prices = [
                _text(
                    scaled_price(values[index], tape.scale, factor, part.tick)
                    * 10 ** (scale - places),
                    scale,
                )
                for values in (col.open, col.high, col.low, col.close)
            ]
            shown = disguised_volume(col.volume[index], tape.volume_scale, volume, part.volume_tick)
            rows.append(
                f"{moved},{part.disguised},{','.join(prices)},"
                f"{volume_text(shown, tape.volume_scale)}\n"
            )
    return "".join(rows)
