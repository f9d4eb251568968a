"""The three secret tools: the one documented exception to projection-only.

The operator's secret store is a local-process concern (the same one ``kestrel
secrets`` owns), not a runtime statement, so these tools reach ``kestrel_secrets``
directly instead of going through the SDK transport, and run the very functions
the ``kestrel secrets`` CLI runs (``secret_tool_set/unset/list``). They uphold the store's own
invariant: no value ever comes back (``list`` is names only, there is no ``get``, and
``set`` answers with the key and the path). The key rules are the single-sourced
``check_operator_secret_key``, so a key refused by the CLI is refused here identically.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio.to_thread
from kestrel_protocol.ports import SecretStore
from kestrel_secrets import (
    check_operator_secret_key,
    open_secret_store,
    secret_tool_list,
    secret_tool_set,
    secret_tool_unset,
)
from pydantic import BaseModel, ConfigDict

__all__ = ["SecretNames", "SecretRemoved", "SecretTools", "SecretWritten"]


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class SecretWritten(_Out):
    """A stored secret: which key, and where it lives. Never the value."""

    key: str
    path: str


class SecretRemoved(_Out):
    """An unset: which key, where, and whether anything was there."""

    key: str
    path: str
    removed: bool


class SecretNames(_Out):
    """The names of the stored secrets, and where they live."""

    keys: list[str]
    path: str


def _default_store() -> SecretStore:
    store: SecretStore = open_secret_store()
    return store


class SecretTools:
    """The secret store as the three tools see it; the store opens on first use.

    Opening lazily keeps a host that never touches secrets from touching the OS
    keyring at start-up (which can prompt, or be slow, on some desktops).
    """

    def __init__(self, factory: Callable[[], SecretStore] | None = None) -> None:
        self._factory = factory or _default_store
        self._store: SecretStore | None = None

    def _open(self) -> SecretStore:
        if self._store is None:
            self._store = self._factory()
        return self._store

    def _set(self, key: str, value: str) -> dict[str, Any]:
        # The key is checked before the store opens: a refused key touches nothing.
        check_operator_secret_key(key)
        return secret_tool_set(self._open(), key, value)

    def _unset(self, key: str) -> dict[str, Any]:
        check_operator_secret_key(key)
        return secret_tool_unset(self._open(), key)

    def _list(self) -> dict[str, Any]:
        return secret_tool_list(self._open())

    async def set(self, key: str, value: str) -> dict[str, Any]:
        """Store ``value`` under ``key``; answers ``{key, path}``."""
        return await anyio.to_thread.run_sync(self._set, key, value)

    async def unset(self, key: str) -> dict[str, Any]:
        """Remove ``key``; answers ``{key, path, removed}``."""
        return await anyio.to_thread.run_sync(self._unset, key)

    async def list(self) -> dict[str, Any]:
        """The stored names; answers ``{keys, path}``."""
        return await anyio.to_thread.run_sync(self._list)
