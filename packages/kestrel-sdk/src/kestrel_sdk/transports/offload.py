"""Where :class:`~.local.LocalTransport` runs each runtime method: the execution policy,
said here once (the surface declares what a tool is, not how a process runs it).

A call runs in a worker thread (``anyio.to_thread``) unless :data:`OFFLOAD` says
otherwise for its runtime method: ``"caller"`` runs it on the caller's thread (short
work: a frame, a history), a predicate ``(runtime, principal, arguments) -> bool`` decides
per call. A worker-thread hop costs ~100-200 us; a short submit, a small blotter or the
catalog once loaded costs less than that, so they run directly, and only the calls that
may take long (a submit that advances thousands of bars or holds hundreds of lines, a
large blotter, the catalog's first read from disk) take a thread. Over a shared store
every call takes one (the transport decides that), and a server of many clients (a door)
runs every call that steps a session (its tool's ``Binding.steps``: a write) in one
whatever its size. A call
made on the caller's thread never waits there for a session another call is using: it
finds the session's lock held, does nothing, and runs in a worker thread instead
(:mod:`kestrel_sdk.runtime.session_waits`). Where a call runs never changes its result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, Literal

from kestrel_protocol.surface import Binding

__all__ = [
    "DIRECT_BLOTTER",
    "OFFLOAD",
    "Offload",
    "large_blotter",
    "long_submit",
    "threaded",
    "unloaded_catalog",
]

Offload = Literal["thread", "caller"] | Callable[[Any, str, Any], bool]
"""Where a local runtime runs a method: a worker thread, the caller's thread, or a
predicate ``(runtime, principal, arguments)`` saying whether this call is worth a thread."""

_HEAVY_ADVANCE: Final = re.compile(r"(?im)^\s*advance\s+(?:to\b|(\d{4,}))")
_HEAVY_LINES: Final = 200
_WAITS: Final = re.compile(r"(?i)\bwait\b")
_SEEN: dict[str, bool] = {}
_SEEN_MAX: Final = 512

DIRECT_BLOTTER: Final = 256
"""Orders plus fills up to which a blotter is built on the caller's thread: a rebuild
costs ~10 us per entry (a few ms at this size), a worker-thread hop ~100-200 us."""


def _heavy(source: str) -> bool:
    """Whether a submit of ``source`` may take long enough to be worth a worker thread:
    it advances many bars, holds many lines or may wait for a forward tape's bar.

    An agent repeats a handful of sources, so short ones are remembered in
    :data:`_SEEN` (:func:`long_submit` reads it before asking here).
    """
    heavy = (
        _WAITS.search(source) is not None
        or source.count("\n") >= _HEAVY_LINES
        or any(
            m.group(1) is None or int(m.group(1)) >= 2000 for m in _HEAVY_ADVANCE.finditer(source)
        )
    )
    if len(source) <= 256:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.clear()
        _SEEN[source] = heavy
    return heavy


def long_submit(runtime: Any, principal: str, arguments: Any) -> bool:
    """A submit that advances many bars, holds many lines or may wait for a forward
    tape's bar (a ``wait`` argument or statement: never on the caller's event loop)."""
    if arguments.wait is not None:
        return True
    seen = _SEEN.get(arguments.source)  # a source seen before: every agent's step
    return _heavy(arguments.source) if seen is None else seen


def large_blotter(runtime: Any, principal: str, arguments: Any) -> bool:
    """A blotter of more than :data:`DIRECT_BLOTTER` orders and fills (or of unknown size)."""
    size = runtime.blotter_size(principal, arguments.session_id)
    return size is None or size > DIRECT_BLOTTER


def unloaded_catalog(runtime: Any, principal: str, arguments: Any) -> bool:
    """A catalog not loaded yet (its first read walks the catalog's files on disk); once
    loaded, a read is of memory, cheaper than the hop."""
    return not runtime.catalog_loaded


OFFLOAD: Final[Mapping[str, Offload]] = MappingProxyType(
    {
        "catalog": unloaded_catalog,
        "submit": long_submit,
        "frame": "caller",
        "history": "caller",
        "news": "caller",
        "blotter": large_blotter,
    }
)
"""By runtime method (a tool's ``Binding.method``), where a call that is not always
worth a worker thread runs; any other method runs in one."""


def _thread(runtime: Any, principal: str, arguments: Any) -> bool:
    return True


def _caller(runtime: Any, principal: str, arguments: Any) -> bool:
    return False


def threaded(binding: Binding, *, many_clients: bool = False) -> Callable[[Any, str, Any], bool]:
    """Whether a call of the runtime method ``binding`` names runs in a worker thread, as a
    predicate ``(runtime, principal, arguments) -> bool`` (a transport looks it up once per
    tool). ``many_clients`` (an event loop that serves others besides this caller): a call
    that steps a session (``binding.steps``) always does: it writes the store, and a write
    waits for the store's write lock while another process holds it (the ``kestrel`` CLI,
    a second door replica, a checkpoint on the same SQLite file), up to the store's busy
    timeout, which on a server's event loop would stall every client."""
    offload = "thread" if many_clients and binding.steps else OFFLOAD.get(binding.method, "thread")
    return offload if callable(offload) else _thread if offload == "thread" else _caller
