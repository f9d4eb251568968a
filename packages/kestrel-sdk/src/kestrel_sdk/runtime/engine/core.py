"""The session state machine: statements, the clock, stand-down and frames (docs/spec.md §5).

Deterministic by construction: no I/O, no clock, no randomness, exact integers. The
engine applies a checked program's statements in order: it places and cancels orders
itself and hands each ``advance`` to its :class:`.loop.BarLoop`, which matches, fills
and marks equity bar by bar.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Final, Literal

from kestrel_protocol import (
    Blotter,
    KestrelError,
    RefusalCode,
    SessionFrame,
    StandDown,
)
from kestrel_protocol.objects.session import SessionStatus

from ..catalog.model import LoadedScenario
from ..lang.syntax import Advance, Cancel, Order, StandDownStatement
from ..lang.validate import SessionContext
from .account import Account
from .blotter import BlotterRecorder
from .brackets import Links
from .bus import Event, EventBus
from .cancels import Cancels
from .edge import forward_roots, unpublished
from .frame import FrameBuilder
from .liquidation import Liquidation
from .loop import BarLoop, columns
from .margin import MarginRules
from .orders import Fill, LiveOrder
from .placing import Placer
from .program import Program, Programs
from .scaled import Terms, ratio_text
from .step import Step
from .trailing import follow
from .wire import text_root

__all__ = ["Program", "SessionEngine"]

StandDownReason = Literal["statement", "max-drawdown", "end-of-tape"]


class SessionEngine:
    """One session over one scenario, opened with bar 0 complete (frame seq 0).

    It keeps the equity and exposure a grade measures as runs (:mod:`.equity`), so a
    step stays O(open orders + events). ``sealed=True`` makes a sealed session's:
    frames (and roots) without ``clock.remaining``, sources checked without reading a
    bar after the clock.
    """

    def __init__(self, loaded: LoadedScenario, session_id: str, *, sealed: bool = False) -> None:
        tape = loaded.tape
        self.sealed: Final = sealed
        self._loaded = loaded
        self._session_id = session_id
        self._terms = terms = Terms.of(loaded)
        self._symbols = tape.symbols
        self._cols = columns(loaded, terms.tape_factor)
        self._times = tape.times
        self._days = tape.days
        self._last = len(tape) - 1
        self._forward = loaded.forward
        """A forward scenario's session: trades at the edge (:mod:`.edge`)."""
        self._roots = forward_roots(loaded) if loaded.forward else None
        self._clock = 0
        self._status: SessionStatus = "open"
        self._seq = 0
        self._working_seq = 0
        self._account = Account(terms.cash)
        self._orders: list[LiveOrder] = []
        self._open: list[LiveOrder] = []
        self._aliases: dict[str, LiveOrder] = {}
        self._stand_down: StandDown | None = None
        self._skipped = 0
        self._programs = Programs(loaded)
        self._bus = EventBus()
        self._loop = BarLoop(
            loaded,
            terms,
            self._cols,
            account=self._account,
            open_orders=self._open,
            bus=self._bus,
            margin=MarginRules(loaded, terms) if loaded.scenario.account.kind == "margin" else None,
            liquidate=self._margin_call_liquidation,
        )
        self._frames = FrameBuilder(session_id, loaded, terms, self._cols, sealed=sealed)
        self._blotter = BlotterRecorder(
            session_id,
            terms,
            self._times,
            orders=self._orders,
            fills=self._loop.fills,
            changes=self._frames.change_count,
        )
        self._bus.subscribe(self._frames.on_event)
        links = Links(self._open, self._bus)  # (it subscribes when an order is linked)
        self._cancels = Cancels(self._orders, self._open, self._aliases, self._bus)
        self._placer = Placer(
            terms,
            self._cols,
            tape.days,
            self._loop,
            links,
            account=self._account,
            orders=self._orders,
            open_orders=self._open,
            aliases=self._aliases,
            forward=self._forward,
        )
        self._liquidation = Liquidation(
            terms,
            self._symbols,
            account=self._account,
            orders=self._orders,
            open_orders=self._open,
            bus=self._bus,
            loop=self._loop,
            cancels=self._cancels,
        )
        self._last_step = Step("")
        self._root: str | None = None
        self._make_frame()

    # -- reading -----------------------------------------------------------------------

    @property
    def status(self) -> SessionStatus:
        return self._status

    @property
    def seq(self) -> int:
        """Accepted submissions so far (the current frame's seq)."""
        return self._seq

    @property
    def clock(self) -> int:
        return self._clock

    @property
    def account(self) -> Account:
        return self._account

    @property
    def orders(self) -> list[LiveOrder]:
        """Every order so far, in id order (read-only use)."""
        return self._orders

    @property
    def open_orders(self) -> list[LiveOrder]:
        """The orders open now, in id order (read-only use)."""
        return self._open

    @property
    def fills(self) -> list[Fill]:
        return self._blotter.fills

    def series(self) -> list[int]:
        """Equity at bar 0 and at every processed bar's close (P units)."""
        return self._loop.series()

    def holding(self) -> bytearray:
        """Per bar of :meth:`series`, 1 where a position was held at its close."""
        return self._loop.trace.holding()

    @property
    def margin(self) -> MarginRules | None:
        """A margin account's rules and accruals (``None`` on a cash account)."""
        return self._loop.margin

    @property
    def terms(self) -> Terms:
        return self._terms

    @property
    def stand_down(self) -> StandDown | None:
        return self._stand_down

    @property
    def skipped(self) -> int:
        """Statements left unapplied because the session stood down mid-source."""
        return self._skipped

    def frame(self) -> SessionFrame:
        """The latest frame (its events are those of the last submission), made on first
        use (from the engine's state, or from its text once the engine moved on)."""
        return self._last_step.frame

    def frame_root(self) -> str:
        """The latest frame's root: the sha256 of the canonical text it was built with."""
        root = self._root
        if root is None:
            root = self._root = text_root(self._last_step.text)
        return root

    def frame_text(self) -> str:
        """The latest frame's canonical JSON text (RFC 8785)."""
        return self._last_step.text

    def blotter(self) -> Blotter:
        """All orders and fills so far, rooted."""
        return self._blotter.build()

    def blotter_bytes(self) -> bytes:
        """:meth:`blotter`'s canonical bytes (what a close stores)."""
        return self._blotter.canonical()

    def blotter_root(self) -> str:
        """:meth:`blotter`'s root (what a record names), without building the object."""
        return self._blotter.root()

    def context(self) -> SessionContext:
        """What the validator needs to know about this session now."""
        return SessionContext(
            orders=len(self._orders),
            aliases=self._aliases.keys(),
            clock=self._clock,
            times=self._times,
            sealed=self.sealed,
            margin=self._loop.margin is not None,
        )

    # -- submitting --------------------------------------------------------------------

    def _refuse_unless_open(self) -> None:
        if self._status == "closed":
            raise KestrelError(RefusalCode.SESSION_CLOSED, f"session {self._session_id} is closed")
        if self._status == "stood-down":
            raise KestrelError(
                RefusalCode.SESSION_STOOD_DOWN,
                f"session {self._session_id} has stood down; it can be read, closed and graded",
            )

    @property
    def last(self) -> int:
        """The last bar of the tape this engine holds (a forward tape's edge)."""
        return self._last

    def unpublished(self, program: Program) -> tuple[str, int] | None:
        """On a forward session, the first bar ``program`` would advance to past the
        edge (as its source names it) and the bars the tape must hold for it; ``None``
        when there is none."""
        if not self._forward:
            return None
        interval = self._loaded.scenario.tape.interval
        return unpublished(program.statements, self._clock, self._last, self._times, interval)

    def extend(self, loaded: LoadedScenario) -> None:
        """Hold ``loaded``'s tape from now on: the same forward tape with more bars
        published (the engine's state is unchanged; later bars become reachable)."""
        self._frames.changing()
        tape = loaded.tape
        self._loaded = loaded
        self._cols = columns(loaded, self._terms.tape_factor)
        self._times = tape.times
        self._days = tape.days
        self._last = len(tape) - 1
        self._roots = forward_roots(loaded)
        self._loop.retape(self._cols, tape.days)
        self._placer.retape(self._cols, tape.days)
        self._frames.retape(loaded, self._cols)
        self._blotter.retape(tape.times)
        if self._loop.margin is not None:
            self._loop.margin.retime(tape.times)

    def check(self, source: str) -> Program:
        """Parse and validate ``source`` against this session without changing it.

        Raises ``KestrelError``: ``LIMIT_EXCEEDED``; ``INVALID_SOURCE`` with
        ``detail={"diagnostics": [...]}``; ``SESSION_STOOD_DOWN``; ``SESSION_CLOSED``.
        """
        self._refuse_unless_open()
        return self._programs.check(source, self.context)

    def apply(self, program: Program) -> Step:
        """Apply a checked program atomically; the new frame has ``seq + 1``."""
        self._refuse_unless_open()
        self._apply(program)
        return self._last_step

    def submit(self, source: str) -> Step:
        """``apply(check(source))``."""
        self._refuse_unless_open()  # (once: nothing between the check and the apply)
        self._apply(self._programs.check(source, self.context))
        return self._last_step

    def replay(self, source: str) -> str:
        """``submit(source)`` for a replay, which needs the new frame's root alone."""
        self.submit(source)
        return self.frame_root()

    def _apply(self, program: Program) -> None:
        """Apply ``program`` to an open session (the caller refused a closed one)."""
        self._frames.changing()
        self._working_seq = self._seq + 1
        statements = program.statements
        for index, st in enumerate(statements):
            if isinstance(st, Order):
                self._placer.place(st, self._clock, self._working_seq)
            elif isinstance(st, Advance):
                if self._advance(st):
                    self._skipped += len(statements) - index - 1
                    break
            elif isinstance(st, Cancel):
                self._cancels.statement(st, self._clock)
            elif isinstance(st, StandDownStatement):
                detail = st.reason if st.reason else f"stand down on line {st.line}"
                self._stand("statement", detail)
                break
        self._seq = self._working_seq
        self._make_frame(self._stand_down if self._status == "stood-down" else None)

    def close(self) -> SessionFrame:
        """Mark the session closed (event ``closed``); open orders are cancelled."""
        if self._status == "closed":
            raise KestrelError(RefusalCode.SESSION_CLOSED, f"session {self._session_id} is closed")
        self._frames.changing()
        bar = self._clock
        self._cancels.cancel_open(bar, "closed")
        self._status = "closed"
        self._bus.publish(Event("closed", bar))
        self._make_frame()
        return self.frame()

    # -- statements --------------------------------------------------------------------

    def _advance(self, st: Advance) -> bool:
        """Process bars; True when the session stood down (drawdown or end of tape)."""
        if st.to is not None:
            target = max(self._clock, bisect_right(self._times, st.to) - 1)
        else:
            target = self._clock + (st.count or 1)
            target = target if target < self._last else self._last  # (not min(): a call less)
        if self._forward and self._clock >= self._last:
            asks = st.to is None or st.to > self._times[self._clock]
            if asks:  # past the last bar of a frozen tape (the runtime refuses it before)
                self._stand("end-of-tape", f"the tape ended at bar {self._last}")
            return asks
        self._clock, stood = self._loop.run(self._clock, target)
        for order in self._open:  # each trailing stop shows the stop for the next bar
            if order.trail is not None:
                follow(order, self._cols[order.symbol][3], self._clock + 1)
        if stood:
            self._stand_drawdown(self._clock)
            return True
        if self._clock >= self._last and not self._forward:
            self._stand("end-of-tape", f"the tape ended at bar {self._last} ({self._times[-1]})")
            return True
        return False

    # -- standing down -----------------------------------------------------------------

    def _stand_drawdown(self, j: int) -> None:
        equity = self._loop.equity(j)
        peak = self._loop.peak
        drawdown = ratio_text(peak - equity, peak)
        self._stand(
            "max-drawdown",
            f"drawdown {drawdown} of peak reached max_drawdown"
            f" {self._loaded.scenario.account.max_drawdown} at bar {j} ({self._times[j]})",
        )

    def _stand(self, reason: StandDownReason, detail: str) -> None:
        """Close the book out at the clock bar's close (:mod:`.liquidation`) and stand
        down."""
        bar = self._clock
        self._liquidation.stand_down(bar, self._working_seq, self._cols)
        self._status = "stood-down"
        self._stand_down = StandDown(reason=reason, detail=detail)
        self._bus.publish(Event("stood-down", bar, reason=reason))

    def _margin_call_liquidation(self, j: int) -> None:
        """After a margin call: close the book out at bar ``j``'s open."""
        self._liquidation.margin_call(j, self._working_seq, self._cols)

    # -- frames ------------------------------------------------------------------------

    def _make_frame(self, stand_down: StandDown | None = None) -> None:
        self._root = None
        frames = self._frames
        text = frames.build(
            seq=self._seq,
            clock=self._clock,
            last=self._last,
            status=self._status,
            account=self._account,
            peak=self._loop.peak,
            open_orders=self._open,
            tape=None if self._roots is None else self._roots[self._clock],
        )
        self._last_step = Step(text, frames, frames.changes, stand_down)
