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

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT, Diagnostic, ValidationReport, quoted

from ..catalog.model import LoadedScenario
from .parser import diagnostic, parse_located
from .syntax import Advance, Cancel, Located, Order

__all__ = ["ScenarioRules", "SessionContext", "check_located", "check_session", "validate_source"]


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
    sealed: bool = False
    """The session's tape is sealed: no check reads a bar after :attr:`clock` (see
    :func:`check_session`)."""
    margin: bool = False
    """A margin account's: an ``advance`` may run through a margin call, whose
    liquidation orders take the next ids, so an order this source places after one has
    no id known here (see :func:`check_session`)."""


_REMAINDER = DEFAULT_DECIMAL_CONTEXT.remainder


@dataclass(frozen=True, slots=True)
class _Instrument:
    tick_text: str
    tick: Decimal
    lot_text: str
    lot: Decimal


class ScenarioRules:
    """The scenario checks (K201-K203): each instrument's tick grid and lot, worked out
    once per scenario (a session keeps its rules for every source it checks)."""

    def __init__(self, loaded: LoadedScenario) -> None:
        self._instruments = {
            inst.symbol: _Instrument(
                inst.tick, Decimal(inst.tick), str(inst.lot), Decimal(inst.lot)
            )
            for inst in loaded.scenario.instruments
        }

    def check(self, located: Sequence[Located]) -> list[Diagnostic]:
        """The K201-K203 diagnostics of ``located``, statement by statement."""
        found: list[Diagnostic] = []
        for item in located:
            st = item.statement
            symbol = st.symbol if isinstance(st, (Order, Cancel)) else None
            if symbol is None:
                continue
            inst = self._instruments.get(symbol)
            if inst is None:
                known = ", ".join(sorted(self._instruments))
                message = f"unknown symbol {quoted(symbol)}; this scenario trades {known}"
                found.append(diagnostic(st.line, item.columns["symbol"], "K201", message))
            elif isinstance(st, Order):
                _check_order(item, st, inst, found)
        return found


def _check_order(item: Located, st: Order, inst: _Instrument, found: list[Diagnostic]) -> None:
    trail = None if st.trail is None or st.trail.percent else st.trail.value
    follows = st.loss_trail
    loss = st.loss if follows is None or follows.percent else follows.value
    if (
        st.stop is not None
        or st.limit is not None
        or trail is not None
        or st.take is not None
        or loss is not None
    ):
        prices = (
            ("stop", st.stop),
            ("limit", st.limit),
            ("trail", trail),
            ("take", st.take),
            ("loss", loss),
        )
        tick = inst.tick
        for part, price in prices:
            if price is not None and tick > 0 and _REMAINDER(price, tick) != 0:
                found.append(
                    diagnostic(
                        st.line,
                        item.columns[part],
                        "K202",
                        f"price {price} is not on {st.symbol}'s tick grid of {inst.tick_text}",
                    )
                )
    target = st.target
    if target is not None and not target.percent and _REMAINDER(target.value, inst.lot) != 0:
        found.append(
            diagnostic(
                st.line,
                item.columns["target"],
                "K203",
                f"target {target.value} is not a multiple of {st.symbol}'s lot of {inst.lot_text}",
            )
        )
    if target is None and _REMAINDER(st.qty, inst.lot) != 0:
        found.append(
            diagnostic(
                st.line,
                item.columns["qty"],
                "K203",
                f"quantity {st.qty} is not a multiple of {st.symbol}'s lot of {inst.lot_text}",
            )
        )


def check_located(
    located: Sequence[Located],
    loaded: LoadedScenario | None,
    session: SessionContext | None,
) -> list[Diagnostic]:
    """The K2xx diagnostics (and K105 for aliases the session already holds)."""
    found = [] if loaded is None else ScenarioRules(loaded).check(located)
    if session is not None:
        found += check_session(located, session)
    return found


def check_session(located: Sequence[Located], session: SessionContext) -> list[Diagnostic]:
    """The K204/K205 diagnostics, and K105 for aliases the session already holds.

    On a sealed session no check reads a bar after the clock, so no refusal (nor how
    long it takes) tells of the tape's end or later times: ``advance to`` is checked
    against the clock's time alone, not after an earlier advance of the same source (it
    is then a no-op if behind, as the engine applies it), and one beyond the tape's end
    is not refused: it runs to the last bar and stands down ``end-of-tape``, the end
    then shown, as it is to any advance that reaches it.
    """
    found: list[Diagnostic] = []
    orders = session.orders
    certain = orders  # ids known now: none after an advance on a margin account
    advanced = False
    aliases: set[str] = set()  # defined earlier in this source
    clock = session.clock
    times = session.times
    sealed = session.sealed
    last = clock if sealed else len(times) - 1  # sealed: the tape's length is not read
    moved = False  # sealed: an advance before this one took the clock where none may look
    for item in located:
        st = item.statement
        if isinstance(st, Order):
            orders += st.placed
            if not (advanced and session.margin):
                certain = orders
            if st.alias is not None:
                if st.alias in session.aliases:
                    found.append(
                        diagnostic(
                            st.line,
                            item.columns["alias"],
                            "K105",
                            f"duplicate alias {quoted(st.alias)}: this session already uses it",
                        )
                    )
                aliases.add(st.alias)
        elif isinstance(st, Cancel) and st.ref is not None:
            ref = st.ref
            known = ref in aliases or ref in session.aliases
            if not known and ref[0] == "o" and ref[1:].isdigit():
                known = 1 <= int(ref[1:]) <= orders and str(int(ref[1:])) == ref[1:]
                if known and int(ref[1:]) > certain:
                    found.append(
                        diagnostic(
                            st.line,
                            item.columns["ref"],
                            "K204",
                            f"order reference {quoted(ref)}: on a margin account an order"
                            " placed after an advance of the same source has no id known"
                            " in advance (a margin call's liquidation orders take the next"
                            " ids); name it with `as`",
                        )
                    )
                    continue
            if not known:
                found.append(
                    diagnostic(
                        st.line,
                        item.columns["ref"],
                        "K204",
                        f"unknown order reference {quoted(ref)}",
                    )
                )
        elif isinstance(st, Advance):
            advanced = True
            if moved:
                continue  # its clock lies after the session's: not known here, not checked
            if st.to is None:
                moved = sealed
                clock = clock if sealed else min(clock + (st.count or 1), last)
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
            elif sealed:
                moved = True  # how far it goes (the tape's end included) is not read
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
