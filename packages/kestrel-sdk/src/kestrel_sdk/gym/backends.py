"""How ``TradingEnv`` reaches the runtime: in process and synchronously, or through a transport.

``InProcess`` calls the methods of a :class:`~kestrel_sdk.runtime.Runtime` in the env's
own thread, exactly the calls ``local_transport`` makes on its behalf, with its refusals
(``SdkLocalError``), but without an event loop: a step is one ``Runtime.submit``. By
default it keeps its sessions in a *private* memory store (``memory:``: no file, no
durability per step, nothing left on disk), which the env renews (at a seeded reset, and
at every reset when it grades nothing); an episode proved there is discarded at once
(``Runtime.discard``: its steps, record, head frame, blotter and grade, which the proof
handed to the env holds, its reach kept in its principal's horizon), so a long graded
loop keeps nothing of its finished episodes.

``OverTransport`` drives any ``Transport`` (a ``remote_transport`` to a door, say)
through the SDK on an event loop of its own: an anyio ``BlockingPortal`` served by a
daemon thread, so an env that is never closed cannot keep its process alive.

Both are closed by the env's finalizer (``weakref.finalize``), which holds the backend and
never the env: an env that is dropped, or still open at interpreter exit, releases its
store and its thread.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
from anyio.from_thread import BlockingPortal
from kestrel_protocol import (
    Delivery,
    GradeResult,
    KestrelError,
    Proof,
    Scenario,
    SealedScenario,
    SessionResponse,
    StandDown,
    Wire,
)
from kestrel_protocol.ports import Transport
from kestrel_protocol.store import MEMORY_URL

from ..client import KestrelSdk, KestrelSession, create_sdk
from ..runtime.frame_values import FrameValues
from ..transports.local import local_refusal

if TYPE_CHECKING:
    from ..runtime.service import Runtime

__all__ = ["Backend", "InProcess", "OverTransport", "Stepped"]

T = TypeVar("T")

PRINCIPAL = "local"
"""The principal of the env's in-process sessions (``local_transport``'s default)."""


class Stepped(Protocol):
    """What a submission answers the env: the new frame's plain values (all a step reads),
    its root and the stand-down; the response object only if someone asks for it."""

    @property
    def frame_root(self) -> str: ...

    @property
    def stand_down(self) -> StandDown | None: ...

    def values(self) -> FrameValues: ...

    def model(self) -> SessionResponse: ...


class _Response:
    """A response object the SDK already built, as a :class:`Stepped`."""

    __slots__ = ("_response",)

    def __init__(self, response: SessionResponse) -> None:
        self._response = response

    @property
    def frame_root(self) -> str:
        return self._response.delivery.frame_root

    @property
    def stand_down(self) -> StandDown | None:
        return self._response.stand_down

    def values(self) -> FrameValues:
        return FrameValues.of(self._response.delivery.frame)

    def model(self) -> SessionResponse:
        return self._response


class _Proved(Wire[Proof]):
    """A proof the SDK already built, as the in-process runtime hands one: its text
    written when asked for."""

    __slots__ = ("_proof",)

    def __init__(self, proof: Proof) -> None:
        super().__init__(Proof, canonical=True)
        self._proof = proof

    def make_text(self) -> str:
        return self._proof.canonical().decode("utf-8")

    def make(self) -> Proof:
        return self._proof


class Backend(Protocol):
    """What the env needs of Kestrel (see the module docstring)."""

    @property
    def private(self) -> bool:
        """Whether the env's sessions live in a store of its own, which it renews."""
        ...

    def scenario(self, scenario_id: str) -> Scenario | SealedScenario: ...

    def tape(self, scenario_id: str) -> str: ...

    def renew(self) -> None:
        """Start a fresh private store (a no-op for a kept one)."""

    def open(self, scenario_id: str, label: str | None) -> tuple[str, Delivery]: ...

    def submit(self, session_id: str, source: str) -> Stepped: ...

    def frame(self, session_id: str) -> Delivery: ...

    def finish(self, session_id: str, embed_tape: bool) -> tuple[GradeResult, Wire[Proof]]:
        """Close, grade and prove the session: its grade, and its proof as its canonical
        text (the object made when first asked for)."""

    def close_session(self, session_id: str) -> None: ...

    def close(self) -> None:
        """Release everything (idempotent; the env's finalizer calls it)."""


class InProcess:
    """The runtime in this process, called synchronously (see the module docstring).

    ``store`` names the store as ``local_transport`` takes it; ``home=None`` and
    ``store=None`` make the store private: a new memory store each time, dropped when it
    is renewed and at close.
    """

    def __init__(
        self,
        home: str | Path | None,
        catalog_paths: Sequence[str | Path] | None,
        store: str | None,
    ) -> None:
        self._private = home is None and store is None
        self._home = home
        self._store = store
        self._catalog_paths = catalog_paths
        self._runtime: Runtime | None = None
        self._runtime = self._build(None)

    @property
    def private(self) -> bool:
        return self._private

    def _build(self, previous: Runtime | None) -> Runtime:
        from ..runtime.service import Runtime  # noqa: PLC0415 - the engine, only when used
        from ..runtime.stores import open_runtime_store  # noqa: PLC0415

        # private: the env's own memory store, whatever $KESTREL_STORE says
        where = MEMORY_URL if self._private else self._store
        return Runtime(
            self._home,
            self._catalog_paths,
            store=open_runtime_store(where, self._home),
            catalog=None if previous is None else previous.index,
        )

    def _call(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return fn(*args)
        except (KestrelError, sqlite3.OperationalError) as exc:
            raise local_refusal(exc, self.runtime) from None

    @property
    def runtime(self) -> Runtime:
        if self._runtime is None:
            raise RuntimeError("the environment is closed")
        return self._runtime

    def scenario(self, scenario_id: str) -> Scenario | SealedScenario:
        return self._call(self.runtime.scenario, PRINCIPAL, scenario_id)

    def tape(self, scenario_id: str) -> str:
        return self._call(self.runtime.tape, PRINCIPAL, scenario_id)

    def renew(self) -> None:
        if not self._private:
            return
        old = self.runtime
        old.shutdown()
        self._runtime = self._build(old)

    def open(self, scenario_id: str, label: str | None) -> tuple[str, Delivery]:
        runtime = self.runtime
        opened = self._call(runtime.open_session, PRINCIPAL, scenario_id, label)
        if opened.session_id is None:
            raise RuntimeError(f"opening {scenario_id} is gated by a payment offer")
        return opened.session_id, self._call(runtime.frame, PRINCIPAL, opened.session_id).model()

    def submit(self, session_id: str, source: str) -> Stepped:
        runtime = self._runtime or self.runtime  # (the property only when closed: it raises)
        try:
            return runtime.submit(PRINCIPAL, session_id, source)
        except (KestrelError, sqlite3.OperationalError) as exc:
            raise local_refusal(exc, runtime) from None

    def frame(self, session_id: str) -> Delivery:
        return self._call(self.runtime.frame, PRINCIPAL, session_id).model()

    def finish(self, session_id: str, embed_tape: bool) -> tuple[GradeResult, Wire[Proof]]:
        runtime = self.runtime
        proof = self._call(runtime.proof, PRINCIPAL, session_id, embed_tape)
        graded = self._call(runtime.grade, PRINCIPAL, session_id)  # proved: stored, read back
        assert isinstance(graded, GradeResult)
        if self._private:  # proved, and nobody else reaches this store: the proof is all
            runtime.discard(PRINCIPAL, session_id)
        return graded, proof

    def close_session(self, session_id: str) -> None:
        self._call(self.runtime.close, PRINCIPAL, session_id)

    def close(self) -> None:
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            runtime.shutdown()


class _EventLoop:
    """An anyio event loop on a daemon thread, reached through a ``BlockingPortal``."""

    def __init__(self) -> None:
        started: Future[BlockingPortal] = Future()

        async def serve() -> None:
            async with BlockingPortal() as portal:
                started.set_result(portal)
                await portal.sleep_until_stopped()

        def run() -> None:
            try:
                anyio.run(serve)
            except BaseException as exc:  # reported to __init__ if the loop never started
                if not started.done():
                    started.set_exception(exc)
                raise

        self._thread = threading.Thread(target=run, name="kestrel-gym-loop", daemon=True)
        self._thread.start()
        self.portal = started.result()

    def stop(self) -> None:
        if self._thread.is_alive():
            self.portal.call(self.portal.stop, True)
            self._thread.join()


class OverTransport:
    """Any ``Transport`` through the SDK, on an event loop of its own (module docstring).

    ``make`` is called on that loop (a remote transport's HTTP client belongs to it).
    """

    private = False

    def __init__(self, make: Callable[[], Transport]) -> None:
        self._loop: _EventLoop | None = _EventLoop()
        self._sdk: KestrelSdk | None = None
        self._sessions: dict[str, KestrelSession] = {}
        try:
            self._sdk = self._loop.portal.call(lambda: create_sdk(make()))
        except BaseException:
            self.close()
            raise

    def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self._loop is None or self._sdk is None:
            raise RuntimeError("the environment is closed")
        return self._loop.portal.call(fn, *args)

    @property
    def sdk(self) -> KestrelSdk:
        if self._sdk is None:
            raise RuntimeError("the environment is closed")
        return self._sdk

    def scenario(self, scenario_id: str) -> Scenario | SealedScenario:
        found: Scenario | SealedScenario = self._run(self.sdk.scenario, scenario_id)
        return found

    def tape(self, scenario_id: str) -> str:
        tape: str = self._run(self.sdk.tape, scenario_id)
        return tape

    def renew(self) -> None:
        return None

    def open(self, scenario_id: str, label: str | None) -> tuple[str, Delivery]:
        sdk = self.sdk

        async def opening() -> tuple[KestrelSession, Delivery]:
            opened = await sdk.open_session(scenario_id, label=label)
            if opened.session is None:
                raise RuntimeError(f"opening {scenario_id} is gated by a payment offer")
            return opened.session, await opened.session.frame()

        session, delivery = self._run(opening)
        self._sessions[session.id] = session
        return session.id, delivery

    def submit(self, session_id: str, source: str) -> Stepped:
        response: SessionResponse = self._run(self._sessions[session_id].submit, source)
        return _Response(response)

    def frame(self, session_id: str) -> Delivery:
        delivery: Delivery = self._run(self._sessions[session_id].frame)
        return delivery

    def finish(self, session_id: str, embed_tape: bool) -> tuple[GradeResult, Wire[Proof]]:
        sdk = self.sdk
        session = self._sessions.pop(session_id)

        async def finishing() -> tuple[GradeResult, Proof]:
            await session.close()
            graded = await sdk.grade_until_done(session_id)
            return graded, await sdk.proof(session_id, embed_tape)

        graded, proof = self._run(finishing)
        return graded, _Proved(proof)

    def close_session(self, session_id: str) -> None:
        self._run(self._sessions.pop(session_id).close)

    def close(self) -> None:
        loop, self._loop = self._loop, None
        sdk, self._sdk = self._sdk, None
        if loop is None:
            return
        try:
            if sdk is not None:
                loop.portal.call(sdk.aclose)
        finally:
            loop.stop()
