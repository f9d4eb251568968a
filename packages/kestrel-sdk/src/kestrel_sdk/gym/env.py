"""``TradingEnv``: a Gymnasium environment over any catalog scenario, in process or remote.

One episode is one Kestrel session; ``step`` checks the action against the action space
(``gymnasium.error.InvalidAction`` otherwise, and nothing is submitted), then submits the
action's order and ``advance 1``. ``terminated`` means the session stood down (its
drawdown limit, or a ``stand down``), ``truncated`` that the tape or the episode's window
(``start``/``length``, :mod:`.windows`) ended; either way the
env closes and grades the session, and the grade is in that step's ``info["grade"]``
and on ``env.grades``, its proof (``kestrel.proof``: the grade with everything needed to
re-verify it) in ``info["proof"]`` and on ``env.proofs``, as its canonical text (a
``Wire``: ``.model()`` makes the object when first asked for, ``.text`` is the text).
``proof.write(path)`` saves it;
``kestrel verify`` checks the file on any machine with an empty home, from the shipped
catalog, or from the tape the proof embeds with ``embed_tape=True`` (needed for a user
scenario the verifier does not have). ``grade=False`` skips grading (a training loop
that needs no proofs): a finished session is then only closed.

Sessions are deterministic: their id, every frame root and the grade follow from the
scenario, the session label and the actions. So ``reset(seed=S)`` opens the session
labelled ``seed-S`` and each later ``reset()`` ``seed-S.1``, ``seed-S.2``, ...; the same
seed and actions give the same roots and grades on any machine. A vector env seeds its
sub-env ``i`` with ``S + i``, so each sub-env is the session a single env seeded ``S + i``
would be. (Never seeded: ``1``, ``2``, ... in the env's own store, the runtime's next
unused label in a kept one; ``options={"label": ...}`` names one.)

By default the env runs the runtime in this process and calls it synchronously (no event
loop, no thread), on a private store: a fresh one at every seeded reset, which holds the
episodes until the next (their principal's horizon: an episode after the first fails
``no-lookahead``, since the earlier ones showed it the tape; a proved one is discarded
there, its proof holding it and the horizon its reach), and with ``grade=False``
a fresh one at every reset (nothing is graded, and a training run's memory stays flat).
Proofs outlive the store. ``home=`` or ``store=`` keep the sessions instead (a label can
be played once per store: replaying a finished seed there is refused), and
``transport=`` reaches any transport (a door, say) through the SDK on an event loop of
its own (:mod:`.backends`). An env that is never closed releases all of it when it is
garbage-collected or at interpreter exit: its process exits as if it had been closed.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from kestrel_protocol import Delivery, GradeResult, Proof, SessionFrame, Wire
from kestrel_protocol.ports import Transport
from numpy.typing import NDArray

from ..render import render_frame
from ..runtime.frame_values import FrameValues
from .arguments import check_arguments
from .backends import Backend, InProcess, OverTransport, Stepped
from .basket import Basket
from .money import cents, price_units
from .picture import picture
from .reward import Reward, step_values
from .spaces import Account, ActionKind, ActionMapping, BarHistory
from .whole import whole_quantity
from .windows import END_OF_WINDOW, Window, check_bound, choose_window

__all__ = ["TradingEnv"]

ABANDON = 'stand down "episode abandoned"\n'


def _account(frame: FrameValues, symbol: str) -> Account:
    held = frame.positions.get(symbol)
    equity = cents(frame.equity)
    price, unit = price_units(frame.marks[symbol])
    return Account._make(  # (made from a tuple: no Python frame for ``__new__``)
        (
            0 if held is None else whole_quantity(held),
            price,
            unit,
            float(frame.cash),  # as float(Decimal(text)) is: the text's nearest float
            equity,
            equity / 100,  # the same float: cents / 100 is rounded once (.money)
        )
    )


class TradingEnv(gymnasium.Env[NDArray[np.float32], Any]):
    """Trade one symbol of a Kestrel scenario, one bar per step (spaces: ``.spaces``), or
    with ``action="weights"`` a basket of ``symbols`` (default: all), a weight each
    (``.basket``).

    ``symbol`` defaults to the scenario's first instrument. ``start`` and ``length`` set
    the episodes' window (``.windows``); ``reward`` a custom reward (``.reward``). The
    runtime runs in this process over ``catalog_paths`` (``KESTREL_CATALOG_PATH`` when
    ``None``) and a private store, or the store ``store`` names (as ``local_transport``
    takes it) in ``home``; ``transport`` is a zero-argument factory of any transport
    instead (called on the env's own event loop), e.g.
    ``lambda: remote_transport(base_url=url)``.
    ``embed_tape`` carries the scenario and its tape in every episode's proof;
    ``grade=False`` grades and proves no episode.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        scenario: str = "acme-trend",
        *,
        symbol: str | None = None,
        symbols: Sequence[str] | None = None,
        action: ActionKind = "discrete",
        window: int = 16,
        exposure: float = 0.95,
        start: int | None = None,
        length: int | None = None,
        reward: Reward | None = None,
        transport: Callable[[], Transport] | None = None,
        home: str | Path | None = None,
        store: str | None = None,
        catalog_paths: Sequence[str | Path] | None = None,
        render_mode: str | None = None,
        embed_tape: bool = False,
        grade: bool = True,
    ) -> None:
        self._start, self._length = check_arguments(
            action=action,
            symbol=symbol,
            symbols=symbols,
            start=start,
            length=length,
            reward=reward,
            window=window,
            exposure=exposure,
            render_mode=render_mode,
            transport=transport,
            in_process=(home, store, catalog_paths),
        )
        self.render_mode = render_mode
        self.scenario_id = scenario
        self.window = window
        self.grades: list[GradeResult] = []
        self.proofs: list[Wire[Proof]] = []
        self._embed_tape = embed_tape
        self._grade = grade
        self._reward = reward
        self._window = Window(0, None)
        self._session: str | None = None
        self._frame: FrameValues | None = None
        self._latest: Stepped | Delivery | None = None  # the latest frame, for `frame`
        self._closed = False
        self._seed: int | None = None
        self._episode = 0  # episodes since the last seeded reset
        backend: Backend = (
            OverTransport(transport)
            if transport is not None
            else InProcess(home, catalog_paths, store)
        )
        self._backend = backend
        # Holds the backend, never the env: runs when the env is collected or at exit.
        self._finalizer = weakref.finalize(self, backend.close)
        try:
            described = backend.scenario(scenario)
            instruments = {item.symbol: item for item in described.instruments}
            self.symbol = symbol or described.instruments[0].symbol
            if self.symbol not in instruments:
                raise ValueError(
                    f"{scenario} has no symbol {self.symbol} ({', '.join(instruments)})"
                )
            tape = backend.tape(scenario)
            self._basket = (
                Basket(described, tape, symbols, window, exposure) if action == "weights" else None
            )
            if self._basket is not None:
                self.symbol = self._basket.symbols[0]
            self._history = BarHistory(tape, self.symbol, window)
        except BaseException:
            self._finalizer()
            raise
        self.symbols = (self.symbol,) if self._basket is None else self._basket.symbols
        """The traded symbols: ``(symbol,)``, or the basket's."""
        self._mapping = ActionMapping(
            kind=action,
            shortable=described.account.shortable,
            lot=whole_quantity(instruments[self.symbol].lot),
            max_position=described.account.max_position,
            exposure=exposure,
        )
        if self._basket is None:
            self.action_space = self._mapping.space()
            self.observation_space = self._history.space
        else:
            self.action_space = self._basket.action_space
            self.observation_space = self._basket.observation_space
        self._start_equity = Decimal(described.account.cash)
        self._start_cents = cents(described.account.cash)
        cash = self._start_cents / 100
        self._account = Account(0, 0, 1, cash, self._start_cents, cash)
        self._orders: dict[int, str] = {0: "advance 1\n"}

    # --- the episode ---------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The current episode's session (``None`` before the first reset)."""
        return self._session

    @property
    def frame(self) -> SessionFrame | None:
        """The current episode's latest frame (``None`` before the first reset), made as
        an object when asked for: a step reads the frame's plain values alone."""
        latest = self._latest
        if latest is None:
            return None
        return latest.frame if isinstance(latest, Delivery) else latest.model().delivery.frame

    @property
    def episode_window(self) -> Window:
        """The current (or last) episode's window: its first bar and its last (``None``:
        the tape's end)."""
        return self._window

    def _observe(self, frame: FrameValues) -> NDArray[np.float32]:
        if self._basket is not None:
            return self._basket.observe(frame, self._start_equity)
        return self._history.observation(frame.bar, self._account, self._start_cents)

    def _info(self, frame: FrameValues, frame_root: str) -> dict[str, Any]:
        account = self._account
        info = {
            "session": frame.session,
            "frame_root": frame_root,
            "bar": frame.bar,
            "time": frame.time,
            "equity": account.equity_float,
        }
        if self._basket is None:
            info["position"] = account.position
        else:
            info["positions"] = self._basket.positions(frame)
        return info

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Open the next session (see the module docstring for its label), advanced to
        the window's start (``options`` may set ``start``/``length``: ``.windows``)."""
        super().reset(seed=seed)
        chosen = options or {}
        start = check_bound("start", chosen.get("start", self._start), 0)
        length = check_bound("length", chosen.get("length", self._length), 1)
        bars = len(self._history)
        window = (
            Window(0, None)
            if start is None and length is None
            else choose_window(start, length, bars, self.np_random)
        )
        self._require_open()
        if self._session is not None:
            self._end_episode(abandon=True)
        if seed is not None:
            self._seed, self._episode = seed, 0
        else:
            self._episode += 1
        backend = self._backend
        if seed is not None or not self._grade:
            # A fresh private store: its principal has seen nothing of the tape. Between
            # seeded resets the episodes share one, so that a grade fails no-lookahead
            # where an earlier episode showed the tape; ungraded, none needs to.
            backend.renew()
        label = (options or {}).get("label")
        if label is None and self._seed is not None:
            label = f"seed-{self._seed}" + (f".{self._episode}" if self._episode else "")
        elif label is None and backend.private:
            label = str(self._episode)  # what the runtime would choose in the env's store
        session, delivery = backend.open(self.scenario_id, label)
        self._session, self._window = session, window
        latest: Stepped | Delivery = delivery
        frame_root = delivery.frame_root
        if window.start:
            latest = backend.submit(session, f"advance {window.start}\n")
            frame = latest.values()
            frame_root = latest.frame_root
        else:
            frame = FrameValues.of(delivery.frame)
        self._frame, self._latest = frame, latest
        self._account = _account(frame, self.symbol)
        return self._observe(frame), self._info(frame, frame_root)

    def _source(self, quantity: int) -> str:
        """The source of an order of ``quantity`` (a step looks in ``_orders`` first)."""
        side = "buy" if quantity > 0 else "sell"
        source = f"{side} {abs(quantity)} {self.symbol}\nadvance 1\n"
        if len(self._orders) < 4096:
            self._orders[quantity] = source
        return source

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """Check the action, trade to its target, then advance one bar."""
        session = self._session
        if session is None:  # as after close(), which ends the episode
            self._require_open()
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        before = self._account
        basket = self._basket
        value: Any
        if basket is None:
            mapping = self._mapping
            value = mapping.check(action, self.action_space)
            quantity = mapping.order(value, before)
            source = self._orders.get(quantity) or self._source(quantity)
        else:
            assert self._frame is not None
            value = basket.check(action)
            source = basket.source(value, self._frame)
        previous = self._frame
        ending = previous is not None and previous.bar + 1 == self._window.end
        response = self._backend.submit(session, source + END_OF_WINDOW if ending else source)
        frame = response.values()
        self._frame, self._latest = frame, response
        self._account = after = _account(frame, self.symbol)
        info = self._info(frame, response.frame_root)
        info["events"] = list(frame.events)
        stand_down = response.stand_down
        if self._reward is None:
            reward = (after.equity - before.equity) / 100  # exact, rounded once (.money)
        else:
            if basket is not None:
                value = tuple(float(weight) for weight in value)
            reward = float(
                self._reward(
                    step_values(
                        frame,
                        self.symbols,
                        previous_equity=before.equity_float,
                        start_equity=float(self._start_equity),
                        action=value,
                        ended=stand_down is not None,
                    )
                )
            )
        if stand_down is None:
            return self._observe(frame), reward, False, False, info
        # the tape's end, or the window's (its stand-down statement): a time limit
        truncated = stand_down.reason == "end-of-tape" or (
            ending and stand_down.reason == "statement"
        )
        info["stand_down"] = stand_down.reason
        finished = self._end_episode(abandon=False)
        if finished is not None:
            info["grade"], info["proof"] = finished
        return self._observe(frame), reward, not truncated, truncated, info

    def _end_episode(self, *, abandon: bool) -> tuple[GradeResult, Wire[Proof]] | None:
        """Grade and prove the current session (standing it down first if ``abandon``),
        or with ``grade=False`` close it in a kept store (a private one is renewed)."""
        session, backend = self._session, self._backend
        assert session is not None
        self._session = None
        if not self._grade and backend.private:
            return None
        if abandon and self._frame is not None and self._frame.status == "open":
            backend.submit(session, ABANDON)
        if not self._grade:
            backend.close_session(session)
            return None
        grade, proof = backend.finish(session, self._embed_tape)
        self.grades.append(grade)
        self.proofs.append(proof)
        return grade, proof

    def render(self) -> str | NDArray[np.uint8] | None:
        """The current frame as text (``render_mode="ansi"``), or the latest bars as an
        RGB image (``"rgb_array"``, see :mod:`.picture`); ``None`` before a reset."""
        frame = self._frame
        if frame is None or self.render_mode is None:
            return None
        if self.render_mode == "ansi":
            shown = self.frame  # the frame as an object: its text is what is rendered
            return None if shown is None else render_frame(shown)
        # a basket draws its first symbol
        return picture(self._history.bars, frame.bar, self._account.position)

    def _require_open(self) -> None:
        if self._closed:
            raise RuntimeError("the environment is closed")

    def close(self) -> None:
        """Grade an unfinished episode (standing it down), then release the runtime."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._session is not None:
                self._end_episode(abandon=True)
        finally:
            self._finalizer()
