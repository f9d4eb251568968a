"""``TradingEnv``: a Gymnasium environment over any catalog scenario and either transport.

One episode is one Kestrel session; ``step`` submits the action's order and
``advance 1``. ``terminated`` means the session stood down (its drawdown limit, or a
``stand down``), ``truncated`` that the tape ended; either way the env closes and grades
the session, and the grade is in that step's ``info["grade"]`` and on ``env.grades``,
its proof (``kestrel.proof``: the grade with everything needed to re-verify it) in
``info["proof"]`` and on ``env.proofs``. A proof outlives the env's private home:
``kestrel verify`` checks its file on any machine with an empty home, from the shipped
catalog, or from the tape the proof embeds with ``embed_tape=True`` (needed for a user
scenario the verifier does not have).

Sessions are deterministic: their id, every frame root and the grade follow from the
scenario, the session label and the actions. So ``reset(seed=S)`` opens the session
labelled ``seed-S`` and each later ``reset()`` ``seed-S.1``, ``seed-S.2``, ...; the same
seed and actions give the same roots and grades on any machine. (Never seeded: the
runtime's next unused label; ``options={"label": ...}`` names one.) A label can be
played once per store, so by default the env keeps its sessions in a private temporary
home, a fresh one at every seeded reset and all removed by ``close()``; pass ``home=``
(or a ``transport``) to keep them, where replaying a finished seed is refused.

The SDK is async; the env owns a private event loop (an anyio blocking portal on its
own thread) for its SDK, started in ``__init__`` and stopped in ``close()``.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import gymnasium
import numpy as np
from anyio.from_thread import start_blocking_portal
from kestrel_protocol import GradeResult, Proof, SessionFrame
from kestrel_protocol.ports import Transport
from numpy.typing import NDArray

from ..client import KestrelSdk, KestrelSession, create_sdk
from ..render import render_frame
from ..transports import local_transport
from .spaces import Account, ActionKind, ActionMapping, BarHistory, observation, observation_space

__all__ = ["TradingEnv"]


def _account(frame: SessionFrame, symbol: str) -> Account:
    position = next((item.qty for item in frame.positions if item.symbol == symbol), 0)
    return Account(
        position=position,
        mark=Decimal(frame.marks[symbol]),
        cash=Decimal(frame.account.cash),
        equity=Decimal(frame.account.equity),
    )


class TradingEnv(gymnasium.Env[NDArray[np.float32], Any]):
    """Trade one symbol of a Kestrel scenario, one bar per step (spaces: ``.spaces``).

    ``transport`` is a zero-argument factory of the transport (called on the env's own
    event loop), e.g. ``lambda: remote_transport(base_url=url)``; by default the local
    runtime in ``home`` with ``catalog_paths`` (``KESTREL_HOME``/``KESTREL_CATALOG_PATH``
    when ``None``). ``symbol`` defaults to the scenario's first instrument.
    ``embed_tape`` carries the scenario and its tape in every episode's proof.
    """

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012 - gymnasium's declared shape

    def __init__(
        self,
        scenario: str = "acme-trend",
        *,
        symbol: str | None = None,
        action: ActionKind = "discrete",
        window: int = 16,
        exposure: float = 0.95,
        transport: Callable[[], Transport] | None = None,
        home: str | Path | None = None,
        catalog_paths: Sequence[str | Path] | None = None,
        render_mode: str | None = None,
        embed_tape: bool = False,
    ) -> None:
        if action not in ("discrete", "continuous"):
            raise ValueError(f"action must be 'discrete' or 'continuous', not {action!r}")
        if window < 1:
            raise ValueError(f"window must be at least 1, not {window}")
        if not 0 < exposure <= 1:
            raise ValueError(f"exposure must be in (0, 1], not {exposure}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.render_mode = render_mode
        self.scenario_id = scenario
        self.window = window
        self.grades: list[GradeResult] = []
        self.proofs: list[Proof] = []
        self._embed_tape = embed_tape
        self._stack = ExitStack()
        self._portal = self._stack.enter_context(start_blocking_portal())
        self._private = transport is None and home is None
        self._homes: list[Path] = []
        self._stack.callback(self._remove_homes)
        self._make = transport or (
            lambda: local_transport(
                home=self._homes[-1] if self._private else home, catalog_paths=catalog_paths
            )
        )
        self._sdk: KestrelSdk | None = None
        self._stack.callback(self._disconnect)
        try:
            sdk = self._connect()
            described = self._portal.call(sdk.scenario, scenario)
            tape = self._portal.call(sdk.tape, scenario)
        except BaseException:
            self._stack.close()
            raise
        instruments = {item.symbol: item for item in described.instruments}
        self.symbol = symbol or described.instruments[0].symbol
        if self.symbol not in instruments:
            self._stack.close()
            raise ValueError(f"{scenario} has no symbol {self.symbol} ({', '.join(instruments)})")
        self._history = BarHistory(tape, self.symbol)
        self._mapping = ActionMapping(
            kind=action,
            shortable=described.account.shortable,
            lot=instruments[self.symbol].lot,
            max_position=described.account.max_position,
            exposure=exposure,
        )
        self.action_space = self._mapping.space()
        self.observation_space = observation_space(window)
        self._start_equity = Decimal(described.account.cash)
        self._session: KestrelSession | None = None
        self._frame: SessionFrame | None = None
        self._closed = False
        self._seed: int | None = None
        self._episode = 0  # episodes since the last seeded reset

    # --- the store ----------------------------------------------------------------

    def _connect(self) -> KestrelSdk:
        if self._private:
            self._homes.append(Path(tempfile.mkdtemp(prefix="kestrel-gym-")))
        sdk: KestrelSdk = self._portal.call(lambda: create_sdk(self._make()))
        self._sdk = sdk
        return sdk

    def _disconnect(self) -> None:
        if self._sdk is not None:
            sdk, self._sdk = self._sdk, None
            self._portal.call(sdk.aclose)

    def _remove_homes(self) -> None:
        for home in self._homes:
            shutil.rmtree(home, ignore_errors=True)

    # --- the episode ---------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The current episode's session (``None`` before the first reset)."""
        return self._session.id if self._session is not None else None

    def _observe(self, frame: SessionFrame) -> NDArray[np.float32]:
        account = _account(frame, self.symbol)
        return observation(self._history, frame.clock.bar, self.window, account, self._start_equity)

    def _info(self, frame: SessionFrame, frame_root: str) -> dict[str, Any]:
        return {
            "session": frame.session,
            "frame_root": frame_root,
            "bar": frame.clock.bar,
            "time": frame.clock.time,
            "equity": float(frame.account.equity),
            "position": _account(frame, self.symbol).position,
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Open the next session (see the module docstring for its label)."""
        super().reset(seed=seed)
        self._require_open()
        if self._session is not None:
            self._portal.call(self._finish, True)
        if seed is not None:
            self._seed, self._episode = seed, 0
            if self._private:  # a fresh store: the seed's labels are unplayed there
                self._disconnect()
                self._connect()
        else:
            self._episode += 1
        label = (options or {}).get("label")
        if label is None and self._seed is not None:
            label = f"seed-{self._seed}" + (f".{self._episode}" if self._episode else "")
        session, delivery = self._portal.call(self._open, label)
        self._session, self._frame = session, delivery.frame
        return self._observe(delivery.frame), self._info(delivery.frame, delivery.frame_root)

    def _client(self) -> KestrelSdk:
        if self._sdk is None:
            raise RuntimeError("the environment is closed")
        return self._sdk

    async def _open(self, label: str | None) -> tuple[KestrelSession, Any]:
        opened = await self._client().open_session(self.scenario_id, label=label)
        if opened.session is None:
            raise RuntimeError(f"opening {self.scenario_id} is gated by a payment offer")
        return opened.session, await opened.session.frame()

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """Trade to the action's target, then advance one bar."""
        self._require_open()
        if self._session is None or self._frame is None:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        before = Decimal(self._frame.account.equity)
        quantity = self._mapping.order(action, _account(self._frame, self.symbol))
        side = "buy" if quantity > 0 else "sell"
        order = f"{side} {abs(quantity)} {self.symbol}\n" if quantity else ""
        response = self._portal.call(self._session.submit, order + "advance 1\n")
        frame = response.delivery.frame
        self._frame = frame
        reward = float(Decimal(frame.account.equity) - before)
        info = self._info(frame, response.delivery.frame_root)
        info["events"] = [event.type for event in frame.events]
        stand_down = response.stand_down
        truncated = stand_down is not None and stand_down.reason == "end-of-tape"
        terminated = stand_down is not None and not truncated
        if stand_down is not None:
            info["stand_down"] = stand_down.reason
            info["grade"], info["proof"] = self._portal.call(self._finish, False)
        return self._observe(frame), reward, terminated, truncated, info

    async def _finish(self, stand_down: bool) -> tuple[GradeResult, Proof]:
        """Close, grade and prove the current session (standing it down first if asked)."""
        session = self._session
        assert session is not None
        self._session = None
        if stand_down and self._frame is not None and self._frame.status == "open":
            await session.submit('stand down "episode abandoned"\n')
        await session.close()
        sdk = self._client()
        result = await sdk.grade(session.id)
        while not isinstance(result, GradeResult):
            await anyio.sleep(result.resume_after_ms / 1000)
            result = await sdk.resume(result)
        proof = await sdk.proof(session.id, self._embed_tape)
        self.grades.append(result)
        self.proofs.append(proof)
        return result, proof

    def render(self) -> str | None:
        """The current frame as text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi" or self._frame is None:
            return None
        return render_frame(self._frame)

    def _require_open(self) -> None:
        if self._closed:
            raise RuntimeError("the environment is closed")

    def close(self) -> None:
        """Grade an unfinished episode (standing it down), then stop the event loop."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._session is not None:
                self._portal.call(self._finish, True)
        finally:
            self._stack.close()
