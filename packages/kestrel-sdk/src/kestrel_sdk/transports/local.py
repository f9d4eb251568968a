"""``local_transport``: the runtime in-process, behind the ``Transport`` port.

``invoke(tool, arguments)`` runs the tool's :class:`~kestrel_protocol.surface.Binding`:
the runtime method it names, passed by keyword this transport's principal (or, for
reads by root, whose artifacts it may read) and the arguments its model already
checked, so a Python caller with a bad label gets the same ``INVALID_ARGUMENT`` (code,
message, detail) as an MCP or HTTP caller: the SDK checks with the same model
(``tool.bind``).

Where the call runs is this transport's decision (:mod:`.offload`). Short calls (a
submit of a few bars, a frame, the blotter of a session with few orders) run directly
on the caller's thread: a worker-thread hop would cost more than the work. Work that
can take long (a grade, a verification, a submit that advances many bars, a large
blotter) runs in a worker thread via ``anyio.to_thread`` so the event loop stays
responsive. Over a shared store (PostgreSQL) every call waits on the network and a
commit on the server's disk, so every call runs in a worker thread: the event loop
keeps serving, and concurrent commits share the server's WAL flushes. A server of many
clients on one event loop (a door) runs every call that writes the store in a worker
thread, however short: on SQLite a write waits for another process's write lock (the
``kestrel`` CLI, a second replica) up to the busy timeout, and the loop must keep serving
every other client meanwhile. A call on the caller's thread never waits there for a
session another call holds (such a write): finding its lock taken, it runs in a worker
thread instead, nothing done twice. Where a call runs never changes its result.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio.to_thread
from kestrel_protocol import KestrelError, ProtocolModel, RefusalCode, Wire
from kestrel_protocol.outage import store_unavailable
from kestrel_protocol.ports import SessionGate, Transport
from kestrel_protocol.surface import Arguments, Binding, Tool

from ..errors import SdkLocalError
from ..runtime.session_waits import SESSION_WAITS, SessionBusy
from .offload import threaded

if TYPE_CHECKING:
    from ..runtime.catalog import CatalogIndex
    from ..runtime.service import Runtime

__all__ = ["LocalTransport", "local_refusal", "local_transport"]

T = TypeVar("T")
_Plan = tuple[Binding, Callable[..., Any], Callable[[Any, str, Any], bool]]
"""How a tool runs, the runtime's method that runs it, and where a call runs."""
_IN_A_THREAD: Final = object()
"""A call not (or not wholly) made on the caller's thread: it runs in a worker thread."""


def local_refusal(
    exc: KestrelError | sqlite3.OperationalError, runtime: Runtime, *, operator: bool = True
) -> SdkLocalError:
    """What the SDK raises for ``exc`` from ``runtime``: a refusal as ``SdkLocalError``, a
    store that failed (locked past the busy timeout, disk full ...) as
    ``BACKEND_UNAVAILABLE``. The ``operator`` (on their own home) is told the store and
    SQLite's reason; anyone else (a door's client) only the outage refusal every face
    shows, ``store unavailable`` with ``retryAfter``, the store and the reason going to
    the operator's log."""
    if isinstance(exc, SdkLocalError):
        return exc
    if isinstance(exc, KestrelError):
        return SdkLocalError(exc.code, exc.message, exc.detail)
    if not operator:
        outage = store_unavailable(runtime.store.location, exc)
        return SdkLocalError(outage.code, outage.message, outage.detail)
    return SdkLocalError(
        RefusalCode.BACKEND_UNAVAILABLE,
        f"the store {runtime.store.location} is unavailable: {exc}",
    )


class LocalTransport:
    """The ``Transport`` port over a :class:`Runtime`, acting as one principal.

    ``own_artifacts``: reads by root (``artifact``, ``verify``, ``proof_of_grade``) see
    only the artifacts of this principal's sessions, another's being ``UNKNOWN_ARTIFACT``
    exactly as a missing root; otherwise every artifact of the home. ``store_detail``:
    a store that fails is refused naming the store and SQLite's reason (the operator's
    view); without it, only ``store unavailable`` (a door's clients), the detail logged.
    ``many_clients``: the caller's event loop serves other clients too (a door), so a call
    that writes the store, or reads a session another call is using, never runs on it
    (:func:`~.offload.threaded`).
    """

    def __init__(
        self,
        runtime: Runtime,
        principal: str,
        *,
        owns_runtime: bool,
        own_artifacts: bool,
        store_detail: bool = True,
        many_clients: bool = False,
    ) -> None:
        self.runtime = runtime
        self._many_clients = many_clients
        self._store_detail = store_detail
        self.principal = principal
        self._owns_runtime = owns_runtime
        self._reader: str | None = principal if own_artifacts else None
        self._remote = runtime.store.shared  # every call waits on a database server
        self._plans: dict[Tool, _Plan] = {}
        """Per tool, how it runs, the runtime's method that runs it and whether a call
        runs in a worker thread (:func:`threaded`), looked up on its first call."""

    def __repr__(self) -> str:
        return (
            f"LocalTransport(home={str(self.runtime.home)!r}, principal={self.principal!r}, "
            f"own_artifacts={self._reader is not None})"
        )

    def _translate(self, exc: KestrelError | sqlite3.OperationalError) -> SdkLocalError:
        return local_refusal(exc, self.runtime, operator=self._store_detail)

    def _direct(self, fn: Callable[..., T], keywords: dict[str, Any]) -> T:
        try:
            return fn(**keywords)
        except (KestrelError, sqlite3.OperationalError) as exc:
            raise self._translate(exc) from None

    def _plan(self, tool: Tool) -> _Plan:
        """How ``tool`` runs, the runtime's method that runs it and where a call runs
        (kept: a transport's runtime and a tool's binding never change)."""
        binding = tool.runs
        if binding is None:
            raise SdkLocalError(
                RefusalCode.INVALID_ARGUMENT,
                f"{tool.name} is a face's own tool, not one the runtime runs",
                {"tool": tool.name},
            )
        method = getattr(self.runtime, binding.method)
        plan = self._plans[tool] = (
            binding,
            method,
            threaded(binding, many_clients=self._many_clients),
        )
        return plan

    async def invoke(self, tool: Tool, arguments: Arguments) -> ProtocolModel | Wire[Any]:
        plan = self._plans.get(tool)
        binding, method, decide = self._plan(tool) if plan is None else plan
        keywords = binding.keywords(self.principal, self._reader, arguments)
        try:
            found: Any = _IN_A_THREAD
            if not self._remote:  # on the caller's thread, never waiting there for a session
                waits = SESSION_WAITS.set(False)
                try:
                    if not decide(self.runtime, self.principal, arguments):
                        found = method(**keywords)  # _direct, inlined: every step of an agent
                except SessionBusy:  # another call holds the session: wait for it off the loop
                    pass
                finally:
                    SESSION_WAITS.reset(waits)
            if found is _IN_A_THREAD:
                found = await anyio.to_thread.run_sync(self._direct, method, keywords)
        except (KestrelError, sqlite3.OperationalError) as exc:
            raise self._translate(exc) from None
        return binding.answer(found, arguments)

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
    store_detail: bool = True,
    longest_wait_s: float | None = None,
    many_clients: bool = False,
    catalog: CatalogIndex | None = None,
) -> Transport:
    """The runtime in-process; state persists in the store ``store`` names
    (``sqlite:///PATH``, ``postgresql://…``, or ``memory:`` for training loops, sweeps
    and tests, where nothing survives the process; default ``$KESTREL_STORE``, else
    ``$KESTREL_HOME/kestrel.db``), with at most ``max_live_sessions`` engines in memory
    and at most ``max_open_orders`` open orders a session (default 1,000; a scenario's
    ``max_open_orders`` lowers it).

    Pass ``runtime=`` to let several principals (transports) share one runtime, as the
    door does; ``home``/``catalog_paths``/``gate``/``sealed``/``store`` are then the
    runtime's own.
    ``own_artifacts`` limits reads by root to this principal's artifacts; by default it
    does when the runtime is shared (``runtime=``), and a transport that owns its
    runtime (the operator on their own home) reads every artifact. ``store_detail=False``
    (a door's clients) refuses a store that fails as ``store unavailable`` only, the store
    and SQLite's reason going to the log; by default the refusal names them.
    ``many_clients=True`` (a server's event loop, serving others besides this principal)
    runs every call that writes the store in a worker thread, so one waiting on the
    store's write lock stalls no other client; by default a short one runs directly
    (one client: nothing else to serve). ``sealed`` names
    catalog scenarios to seal besides those whose ``scenario.toml`` says ``sealed = true``;
    ``"ID=SERVED_ID"`` serves one only as a renamed copy under the neutral ``SERVED_ID``
    (``kestrel_sdk.runtime.catalog.renamed``). ``longest_wait_s`` bounds every wait for a
    forward tape's bar, whatever a submission asks (a door: within its per-call timeout).
    ``catalog``: the catalog already loaded from ``catalog_paths`` (not loaded again).
    """
    if runtime is not None:
        own = True if own_artifacts is None else own_artifacts
        return LocalTransport(
            runtime,
            principal,
            owns_runtime=False,
            own_artifacts=own,
            store_detail=store_detail,
            many_clients=many_clients,
        )
    from ..runtime.service import Runtime  # noqa: PLC0415 - loads the engine only when used
    from ..runtime.stores import open_runtime_store  # noqa: PLC0415
    from .feed_waiter import StoreFeedWaiter  # noqa: PLC0415

    opened = open_runtime_store(store, home)
    built = Runtime(
        home,
        catalog_paths,
        gate,
        catalog=catalog,
        sealed=sealed,
        store=opened,
        max_live_sessions=max_live_sessions,
        max_open_orders=max_open_orders,
        waiter=StoreFeedWaiter(opened, longest_s=longest_wait_s),
    )
    return LocalTransport(
        built,
        principal,
        owns_runtime=True,
        own_artifacts=bool(own_artifacts),
        store_detail=store_detail,
        many_clients=many_clients,
    )
