"""Checking a session's sources: a source becomes a :class:`Program` (its statements,
ready to apply atomically) or a refusal naming every diagnostic.

An agent repeats sources, within a session and across the sessions of one scenario (a
training loop's episodes replay one tape: the same quantities come back), so a program
whose diagnostics cannot depend on the session's state is remembered for its scenario
(:class:`Programs`, shared by every session of it in the process) and a repeat is not
parsed again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from kestrel_protocol import KestrelError, RefusalCode

from ..catalog.model import LoadedScenario
from ..lang.parser import parse_located
from ..lang.syntax import Advance, Cancel, Located, Order, Statement
from ..lang.validate import ScenarioRules, SessionContext, check_session
from .per_scenario import Bounded, PerScenario

__all__ = ["Program", "Programs"]

_CHECKED_MAX: Final = 4096
"""Programs remembered per scenario (all forgotten when it is full)."""
_CHECKED_MAX_CHARS: Final = 1024


@dataclass(slots=True, unsafe_hash=True)
class Program:
    """A checked source: its exact text and its statements, ready to apply atomically;
    ``places`` whether it places an order, ``placed`` the orders it may leave open at
    most (each order's own and its bracket's, one for any other statement). Read-only
    (``Final``, as the statements: see :mod:`..lang.syntax`)."""

    source: Final[str]
    statements: Final[tuple[Statement, ...]]
    places: Final[bool] = False
    placed: Final[int] = 0
    session_free: Final[bool] = False
    """Whether its diagnostics can never depend on the session's state.

    An order without an alias, ``cancel all``, ``advance N`` and ``stand down`` are
    checked against the scenario alone (K201-K203), which a session never changes; an
    alias (K105 reuse), an order reference (K204) or ``advance to`` (K205) depend on
    what the session holds now. A source made only of the former that passed once
    passes on every later check in any session of the same scenario, so its program
    is remembered.
    """

    @classmethod
    def of(cls, source: str, located: list[Located]) -> Program:
        """``source``'s program of the statements of ``located`` (one pass over them)."""
        statements = []
        places = False
        placed = len(located)  # one each, an order's bracket children added
        free = True
        for item in located:
            st = item.statement
            statements.append(st)
            if isinstance(st, Order):
                places = True
                placed += st.placed - 1
                free = free and st.alias is None
            elif isinstance(st, Advance):
                free = free and st.to is None
            elif isinstance(st, Cancel):
                free = free and st.ref is None
        return cls(source, tuple(statements), places, placed, free)


_SHARED: Final = PerScenario[tuple[ScenarioRules, Bounded[str, Program]]](
    lambda loaded: (ScenarioRules(loaded), Bounded(_CHECKED_MAX))
)
"""Each loaded scenario's rules and remembered programs, kept while it is loaded."""


class Programs:
    """One session's source checker, remembering the programs that stay valid: its
    scenario's rules and remembered programs are every session's of that scenario."""

    def __init__(self, loaded: LoadedScenario) -> None:
        self._rules, self._checked = _SHARED.of(loaded)

    def check(self, source: str, context: Callable[[], SessionContext]) -> Program:
        """``source`` as a program, checked against the scenario and ``context()`` (what
        the session holds now; asked only for a source not remembered that holds a
        statement the session's state bears on).

        Raises ``KestrelError``: ``LIMIT_EXCEEDED``; ``INVALID_SOURCE`` with
        ``detail={"diagnostics": [...]}``.
        """
        program = self._checked.get(source)
        if program is not None:
            return program
        located, syntax = parse_located(source)
        program = Program.of(source, located)
        diagnostics = self._rules.check(located)
        if not program.session_free:  # the session checks find nothing in the others
            diagnostics += check_session(located, context())
        if syntax or diagnostics:
            diagnostics = [*syntax, *diagnostics]
            diagnostics.sort(key=lambda d: (d.line, d.column))
            first = diagnostics[0]
            raise KestrelError(
                RefusalCode.INVALID_SOURCE,
                f"{len(diagnostics)} error(s); first at line {first.line} column"
                f" {first.column}: {first.code} {first.message}",
                {"diagnostics": [d.to_json() for d in diagnostics]},
            )
        if program.session_free and len(source) <= _CHECKED_MAX_CHARS:
            self._checked.keep(source, program)
        return program
