"""Validation beyond syntax: against a scenario (K201-K203) and a live session (K204, K205).

The session checks walk the source in order with a projected clock and a projected set
of order ids and aliases, because statements apply in order: ``buy 1 ACME as a`` then
``cancel a`` is fine in one source, ``advance 5`` then ``advance to`` an earlier time is not.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from decimal import Decimal
from weakref import WeakKeyDictionary

from kestrel_protocol import Diagnostic, ValidationReport

from ..catalog.model import LoadedScenario
from .parser import Located, diagnostic, parse_located
from .syntax import Advance, Cancel, Order

__all__ = ["SessionContext", "check_located", "validate_source"]


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What the session checks need to know about a live session."""

    orders: int
    """Orders placed so far (ids ``o1`` … ``o{orders}`` exist)."""
    aliases: AbstractSet[str]
    """Aliases already taken in this session (an alias is never reused)."""
    clock: int
    """The clock bar."""
    times: Sequence[str]
    """The tape's bar times (ISO-8601 UTC, ``...Z``)."""


@dataclass(frozen=True, slots=True)
class _Instrument:
    """What the scenario checks need of one instrument."""

    tick_text: str
    tick: Decimal
    lot: int


_RULES: WeakKeyDictionary[LoadedScenario, dict[str, _Instrument]] = WeakKeyDictionary()


def _instruments(loaded: LoadedScenario) -> dict[str, _Instrument]:
    """A scenario's instruments by symbol, worked out once per loaded scenario."""
    found = _RULES.get(loaded)
    if found is None:
        found = {
            inst.symbol: _Instrument(inst.tick, Decimal(inst.tick), inst.lot)
            for inst in loaded.scenario.instruments
        }
        _RULES[loaded] = found
    return found


def _scenario_checks(
    item: Located, st: Order | Cancel, instruments: dict[str, _Instrument], found: list[Diagnostic]
) -> None:
    symbol = st.symbol
    if symbol is None:
        return
    inst = instruments.get(symbol)
    if inst is None:
        known = ", ".join(sorted(instruments))
        found.append(
            diagnostic(
                st.line,
                item.columns["symbol"],
                "K201",
                f"unknown symbol {symbol!r}; this scenario trades {known}",
            )
        )
        return
    if not isinstance(st, Order):
        return
    tick = inst.tick
    for part, price in (("stop", st.stop), ("limit", st.limit)):
        if price is not None and tick > 0 and price % tick != 0:
            found.append(
                diagnostic(
                    st.line,
                    item.columns[part],
                    "K202",
                    f"price {price} is not on {symbol}'s tick grid of {inst.tick_text}",
                )
            )
    if st.qty % inst.lot != 0:
        found.append(
            diagnostic(
                st.line,
                item.columns["qty"],
                "K203",
                f"quantity {st.qty} is not a multiple of {symbol}'s lot of {inst.lot}",
            )
        )


def check_located(
    located: Sequence[Located],
    loaded: LoadedScenario | None,
    session: SessionContext | None,
) -> list[Diagnostic]:
    """The K2xx diagnostics (and K105 for aliases the session already holds)."""
    found: list[Diagnostic] = []
    if loaded is not None:
        instruments = _instruments(loaded)
        for item in located:
            st = item.statement
            if isinstance(st, Order | Cancel):
                _scenario_checks(item, st, instruments, found)
    if session is None:
        return found
    orders = session.orders
    aliases: set[str] = set()  # defined earlier in this source
    clock = session.clock
    times = session.times
    last = len(times) - 1
    for item in located:
        st = item.statement
        if isinstance(st, Order):
            orders += 1
            if st.alias is not None:
                if st.alias in session.aliases:
                    found.append(
                        diagnostic(
                            st.line,
                            item.columns["alias"],
                            "K105",
                            f"duplicate alias {st.alias!r}: this session already uses it",
                        )
                    )
                aliases.add(st.alias)
        elif isinstance(st, Cancel) and st.ref is not None:
            ref = st.ref
            known = ref in aliases or ref in session.aliases
            if not known and ref[0] == "o" and ref[1:].isdigit():
                known = 1 <= int(ref[1:]) <= orders and str(int(ref[1:])) == ref[1:]
            if not known:
                found.append(
                    diagnostic(
                        st.line,
                        item.columns["ref"],
                        "K204",
                        f"unknown order reference {ref!r}",
                    )
                )
        elif isinstance(st, Advance):
            if st.to is None:
                clock = min(clock + (st.count or 1), last)
                continue
            if st.to <= times[clock]:
                # the session's clock is named; one an earlier advance of this source
                # reaches is not (it may lie beyond what the session has been shown)
                where = (
                    f"the clock ({times[clock]})"
                    if clock == session.clock
                    else "the clock the advances before it reach"
                )
                found.append(
                    diagnostic(
                        st.line,
                        item.columns["to"],
                        "K205",
                        f"advance to {st.to}: not after {where}",
                    )
                )
            elif st.to > times[last]:
                found.append(
                    diagnostic(
                        st.line,
                        item.columns["to"],
                        "K205",
                        # neither the last bar's time nor the bars left are named: both
                        # tell of bars beyond the clock
                        f"advance to {st.to}: beyond the tape's last bar",
                    )
                )
            else:
                clock = bisect_right(times, st.to) - 1
    return found


def validate_source(
    source: str,
    loaded: LoadedScenario | None = None,
    session: SessionContext | None = None,
) -> ValidationReport:
    """Every diagnostic of ``source``: syntax always, K201-K203 with a scenario, K204/K205
    (and session-wide alias reuse) with a session. Raises ``LIMIT_EXCEEDED``."""
    located, diagnostics = parse_located(source)
    diagnostics = diagnostics + check_located(located, loaded, session)
    diagnostics.sort(key=lambda d: (d.line, d.column))
    lines = {item.statement.line for item in located}
    lines.update(d.line for d in diagnostics if d.code.startswith("K1"))
    statements = len(lines)
    return ValidationReport(
        ok=not any(d.severity == "error" for d in diagnostics),
        statements=statements,
        diagnostics=diagnostics,
    )
