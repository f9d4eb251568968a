"""The three secret tools: the stdio face's own addition to the surface.

They are declared here, not in ``kestrel_protocol.surface``, because the door must
never serve them (docs/spec.md §10): only the stdio server adds them (``secrets=True``). The
operator's secret store is a local-process concern (the same one ``kestrel secrets``
owns), not a runtime statement, so these tools reach ``kestrel_secrets`` directly
instead of going through the SDK transport, and run the very functions the ``kestrel
secrets`` CLI runs (``secret_tool_set/unset/list``). They uphold the store's own
invariant: no value ever comes back (``list`` is names only, there is no ``get``, and
``set`` answers with the key and the path). The key rules are the single-sourced
``check_operator_secret_key`` (set) and ``check_secret_key_name`` (unset), so a key refused
by the CLI is refused here identically.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio.to_thread
from kestrel_protocol.ports import SecretStore
from kestrel_protocol.surface import Arguments, NoArgs, Text, Tool
from kestrel_secrets import (
    check_operator_secret_key,
    check_secret_key_name,
    open_secret_store,
    secret_tool_list,
    secret_tool_set,
    secret_tool_unset,
)
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "SecretKeyArgs",
    "SecretNames",
    "SecretRemoved",
    "SecretSetArgs",
    "SecretTools",
    "SecretWritten",
    "secret_tools",
]


class SecretSetArgs(Arguments):
    """Store a paper-only operator secret."""

    key: Text = Field(description="Upper-case name, [A-Z_][A-Z0-9_]*; never one naming LIVE.")
    value: Text = Field(description="The value; it is stored, never echoed back.")


class SecretKeyArgs(Arguments):
    """A secret by name."""

    key: Text = Field(description="Upper-case name, [A-Z_][A-Z0-9_]*.")


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
        # Removing needs only a well-formed name: a LIVE-named key an operator wrote by
        # hand can be removed (only set refuses it), as ``kestrel secrets unset`` does.
        check_secret_key_name(key)
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


def secret_tools(store: SecretTools) -> tuple[Tool, ...]:
    """The three tools over ``store``: the face's own, run on it (no transport is asked)."""

    async def set_(args: SecretSetArgs) -> Any:
        return await store.set(args.key, args.value)

    async def unset(args: SecretKeyArgs) -> Any:
        return await store.unset(args.key)

    async def list_(args: NoArgs) -> Any:
        return await store.list()

    return (
        Tool(
            name="kestrel_secrets_set",
            title="Set an operator secret",
            description=(
                "Store a paper-only operator secret in the local store. Answers with the key "
                "and where it is stored, never the value. Keys naming LIVE are refused."
            ),
            arguments=SecretSetArgs,
            runs=None,
            serve=set_,
            results=(SecretWritten,),
            scope="",
            read_only=False,
            destructive=True,
            idempotent=True,
            refusals=("SECRET_KEY_INVALID", "SECRET_KEY_LIVE", "SECRET_STORE_UNAVAILABLE"),
        ),
        Tool(
            name="kestrel_secrets_unset",
            title="Remove an operator secret",
            description="Remove a secret from the local store; says whether it was there.",
            arguments=SecretKeyArgs,
            runs=None,
            serve=unset,
            results=(SecretRemoved,),
            scope="",
            read_only=False,
            destructive=True,
            idempotent=True,
            refusals=("SECRET_KEY_INVALID", "SECRET_STORE_UNAVAILABLE"),
        ),
        Tool(
            name="kestrel_secrets_list",
            title="List operator secrets",
            description="The names of the stored secrets and where they live (never a value).",
            arguments=NoArgs,
            runs=None,
            serve=list_,
            results=(SecretNames,),
            scope="",
            read_only=True,
            refusals=("SECRET_STORE_UNAVAILABLE",),
        ),
    )
