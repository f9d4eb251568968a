"""``local_transport``: the runtime in-process, behind the ``Transport`` port.

Every method first checks its arguments with the model of the tool that projects it
(``kestrel_protocol.surface``), so a Python caller with a bad label gets the same
``INVALID_ARGUMENT`` (code, message, detail) as an MCP or HTTP caller.

Short calls (a submit of a few bars, a frame, the blotter of a session with few orders)
run directly on the caller's thread: a worker-thread hop would cost more than the work.
Over a shared store (PostgreSQL) every call waits on the network and a commit on the
server's disk, so every call runs in a worker thread: the event loop keeps serving, and
concurrent commits share the server's WAL flushes.
Work that can take long (a grade, a verification, a submit that advances many bars, a
large blotter) runs in a worker thread via ``anyio.to_thread`` so the event loop stays
responsive. Where a call runs never changes its result.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread
from kestrel_protocol import (
    Blotter,
    Catalog,
    Delivery,
    GradeResult,
    History,
    KestrelError,
    OperationResumption,
    Payment,
    Proof,
    RefusalCode,
    Scenario,
    SealedScenario,
    SessionOpened,
    SessionRecord,
    SessionResponse,
    ValidationReport,
    VerificationReport,
)
from kestrel_protocol.ports import SessionGate, Transport

from ..errors import SdkLocalError
from .checks import CHECK

if TYPE_CHECKING:
    from ..runtime.service import Runtime

__all__ = ["LocalTransport", "local_transport"]

T = TypeVar("T")

_HEAVY_ADVANCE = re.compile(r"(?im)^\s*advance\s+(?:to\b|(\d{4,}))")
_HEAVY_LINES = 200


_DIRECT_BLOTTER = 256
"""Orders plus fills up to which a blotter is built on the caller's thread: a rebuild
costs ~10 us per entry (a few ms at this size), a worker-thread hop ~100-200 us."""

_HEAVY_SEEN: dict[str, bool] = {}
_HEAVY_SEEN_MAX = 512


def _heavy(source: str) -> bool:
    """Whether a submit may take long enough to be worth a worker thread.

    An agent repeats a handful of sources, so short ones are answered from memory.
    """
    if len(source) < 12:
        return False
    seen = _HEAVY_SEEN.get(source)
    if seen is not None:
        return seen
    heavy = source.count("\n") >= _HEAVY_LINES or any(
        m.group(1) is None or int(m.group(1)) >= 2000 for m in _HEAVY_ADVANCE.finditer(source)
    )
    if len(source) <= 256:
        if len(_HEAVY_SEEN) >= _HEAVY_SEEN_MAX:
            _HEAVY_SEEN.clear()
        _HEAVY_SEEN[source] = heavy
    return heavy


class LocalTransport:
    """The ``Transport`` port over a :class:`Runtime`, acting as one principal.

    ``own_artifacts``: reads by root (``artifact``, ``verify``, ``proof_of_grade``) see
    only the artifacts of this principal's sessions, another's being ``UNKNOWN_ARTIFACT``
    exactly as a missing root; otherwise every artifact of the home.
    """

    def __init__(
        self, runtime: Runtime, principal: str, *, owns_runtime: bool, own_artifacts: bool
    ) -> None:
        self.runtime = runtime
        self.principal = principal
        self._owns_runtime = owns_runtime
        self._reader: str | None = principal if own_artifacts else None
        self._remote = runtime.store.shared  # every call waits on a database server

    def __repr__(self) -> str:
        return (
            f"LocalTransport(home={str(self.runtime.home)!r}, principal={self.principal!r}, "
            f"own_artifacts={self._reader is not None})"
        )

    def _translate(self, exc: KestrelError | sqlite3.OperationalError) -> SdkLocalError:
        if isinstance(exc, SdkLocalError):
            return exc
        if isinstance(exc, KestrelError):
            return SdkLocalError(exc.code, exc.message, exc.detail)
        # locked past the busy timeout, disk full ...
        return SdkLocalError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"the store {self.runtime.store.location} is unavailable: {exc}",
        )

    def _direct(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return fn(*args)
        except (KestrelError, sqlite3.OperationalError) as exc:
            raise self._translate(exc) from None

    async def _offload(self, fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(partial(self._direct, fn, *args))

    async def catalog(self) -> Catalog:
        return await self._offload(self.runtime.catalog)

    async def scenario(self, scenario_id: str) -> Scenario | SealedScenario:
        CHECK["scenario"](scenario=scenario_id)
        return await self._offload(self.runtime.scenario, self.principal, scenario_id)

    async def tape(self, scenario_id: str) -> str:
        CHECK["tape"](scenario=scenario_id)
        return await self._offload(self.runtime.tape, self.principal, scenario_id)

    async def validate(self, source: str, scenario: str | None = None) -> ValidationReport:
        CHECK["validate"](source=source, scenario=scenario)
        return await self._offload(self.runtime.validate, source, scenario)

    async def open_session(
        self, scenario: str, label: str | None = None, payment: Payment | None = None
    ) -> SessionOpened:
        CHECK["open_session"](
            scenario=scenario,
            label=label,
            payment=None if payment is None else payment.to_json(),
        )
        return await self._offload(
            self.runtime.open_session, self.principal, scenario, label, payment
        )

    async def submit(self, session_id: str, source: str) -> SessionResponse:
        CHECK["submit"](session_id=session_id, source=source)
        if self._remote or (len(source) >= 12 and _heavy(source)):
            return await self._offload(self.runtime.submit, self.principal, session_id, source)
        try:  # _direct, inlined: this is every step of an agent loop
            return self.runtime.submit(self.principal, session_id, source)
        except (KestrelError, sqlite3.OperationalError) as exc:
            raise self._translate(exc) from None

    async def frame(self, session_id: str) -> Delivery:
        CHECK["frame"](session_id=session_id)
        if self._remote:
            return await self._offload(self.runtime.frame, self.principal, session_id)
        return self._direct(self.runtime.frame, self.principal, session_id)

    async def history(self, session_id: str, bars: int, symbol: str | None = None) -> History:
        CHECK["history"](session_id=session_id, bars=bars, symbol=symbol)
        return self._direct(self.runtime.history, self.principal, session_id, bars, symbol)

    async def blotter(self, session_id: str) -> Blotter:
        CHECK["blotter"](session_id=session_id)
        if self._remote:
            return await self._offload(self.runtime.blotter, self.principal, session_id)
        size = self._direct(self.runtime.blotter_size, self.principal, session_id)
        if size is not None and size <= _DIRECT_BLOTTER:
            return self._direct(self.runtime.blotter, self.principal, session_id)
        return await self._offload(self.runtime.blotter, self.principal, session_id)

    async def close(self, session_id: str) -> SessionRecord:
        CHECK["close"](session_id=session_id)
        return await self._offload(self.runtime.close, self.principal, session_id)

    async def grade(self, session_id: str) -> GradeResult | OperationResumption:
        CHECK["grade"](session_id=session_id)
        return await self._offload(self.runtime.grade, self.principal, session_id)

    async def resume(self, token: str) -> GradeResult | OperationResumption:
        CHECK["resume"](token=token)
        return await self._offload(self.runtime.resume, self.principal, token)

    async def artifact(self, root: str) -> dict[str, Any]:
        CHECK["artifact"](root=root)
        return await self._offload(self.runtime.artifact, root, self._reader)

    async def verify(self, grade: GradeResult) -> VerificationReport:
        return await self._offload(self.runtime.verify, grade, self._reader)

    async def proof(self, session_id: str, embed_tape: bool = False) -> Proof:
        CHECK["proof"](session_id=session_id, embed_tape=embed_tape)
        # None is the argument left out, as the check took it (a compiled Runtime takes a
        # bool and nothing else)
        embed = embed_tape is True
        return await self._offload(self.runtime.proof, self.principal, session_id, embed)

    async def proof_of_grade(self, grade_root: str) -> Proof:
        CHECK["proof_of_grade"](grade_root=grade_root)
        return await self._offload(self.runtime.proof_of_grade, grade_root, self._reader)

    async def aclose(self) -> None:
        if self._owns_runtime:
            self.runtime.shutdown()


def local_transport(
    home: str | Path | None = None,
    catalog_paths: Sequence[str | Path] | None = None,
    principal: str = "local",
    gate: SessionGate | None = None,
    *,
    runtime: Runtime | None = None,
    own_artifacts: bool | None = None,
    sealed: Sequence[str] = (),
    store: str | None = None,
    max_live_sessions: int | None = None,
    max_open_orders: int | None = None,
) -> Transport:
    """The runtime in-process; state persists in the store ``store`` names
    (``sqlite:///PATH`` or ``postgresql://…``; default ``$KESTREL_STORE``, else
    ``$KESTREL_HOME/kestrel.db``), with at most ``max_live_sessions`` engines in memory
    and at most ``max_open_orders`` open orders a session (default 1,000; a scenario's
    ``max_open_orders`` lowers it).

    Pass ``runtime=`` to let several principals (transports) share one runtime, as the
    door does; ``home``/``catalog_paths``/``gate``/``sealed``/``store`` are then the
    runtime's own.
    ``own_artifacts`` limits reads by root to this principal's artifacts; by default it
    does when the runtime is shared (``runtime=``), and a transport that owns its
    runtime (the operator on their own home) reads every artifact. ``sealed`` names
    catalog scenarios to seal besides those whose ``scenario.toml`` says ``sealed = true``.
    """
    if runtime is not None:
        own = True if own_artifacts is None else own_artifacts
        return LocalTransport(runtime, principal, owns_runtime=False, own_artifacts=own)
    from ..runtime.service import Runtime  # noqa: PLC0415 - loads the engine only when used
    from ..runtime.stores import open_runtime_store  # noqa: PLC0415

    built = Runtime(
        home,
        catalog_paths,
        gate,
        sealed=sealed,
        store=open_runtime_store(store, home),
        max_live_sessions=max_live_sessions,
        max_open_orders=max_open_orders,
    )
    return LocalTransport(built, principal, owns_runtime=True, own_artifacts=bool(own_artifacts))
