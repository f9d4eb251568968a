"""Opening the store a ``--store`` / ``$KESTREL_STORE`` URL names: written once for both ports.

Each port (the runtime's ``RuntimeStore``, the door's ``DoorRecords``) lists its adapters
in a :class:`StoreAdapters`; :func:`open_store` resolves the URL (:func:`~.store.store_location`)
and opens the one it names. The PostgreSQL adapter is imported only when a
``postgresql://`` store is chosen (its driver is an optional extra); a malformed URL, a
missing driver or a kind the port has no adapter for is ``BACKEND_UNAVAILABLE`` naming
what was wrong.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from .errors import KestrelError, RefusalCode
from .store import StoreLocation, store_location

__all__ = ["StoreAdapters", "open_store"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StoreAdapters(Generic[T]):
    """A port's adapters: how each kind of store location is opened."""

    sqlite: Callable[[StoreLocation], T]
    postgresql: str
    """``module:Class`` of the PostgreSQL adapter (called with the DSN), imported when chosen."""
    postgres_extra: str
    """How a user installs its driver (named when it is missing)."""
    memory: Callable[[StoreLocation], T] | None = None
    """``None``: the port keeps nothing in memory (``memory:`` is refused, saying why)."""
    no_memory: str = ""
    """Why ``memory:`` is refused, when :attr:`memory` is ``None``."""


def open_store(
    adapters: StoreAdapters[T],
    url: str | StoreLocation | None = None,
    home: str | os.PathLike[str] | None = None,
) -> T:
    """The store at ``url`` (default: ``$KESTREL_STORE``, else SQLite in ``home``)."""
    try:
        location = url if isinstance(url, StoreLocation) else store_location(url, home)
    except ValueError as exc:
        raise KestrelError(RefusalCode.BACKEND_UNAVAILABLE, str(exc)) from None
    if location.kind == "sqlite":
        return adapters.sqlite(location)
    if location.kind == "memory":
        if adapters.memory is None:
            raise KestrelError(
                RefusalCode.BACKEND_UNAVAILABLE, f"store {location}: {adapters.no_memory}"
            )
        return adapters.memory(location)
    module, _, name = adapters.postgresql.partition(":")
    try:
        opener = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise KestrelError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"store {location} needs the PostgreSQL driver ({exc.name} is missing): "
            f"{adapters.postgres_extra}",
        ) from None
    assert location.dsn is not None
    return cast(T, opener(location.dsn))
