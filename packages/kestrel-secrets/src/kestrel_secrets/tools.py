"""The three secret operations as the faces report them, shared by the CLI and MCP.

The three MCP secret tools (docs/spec.md §8, ``kestrel_mcp.secrets``) and ``kestrel
secrets set/unset/list`` run these same functions, so the key refusals and the result
shapes cannot drift apart between faces. No result ever carries a value.
"""

from __future__ import annotations

from typing import Any

from kestrel_protocol.ports import SecretStore

from .keys import check_operator_secret_key, check_secret_key_name, check_secret_value

__all__ = ["secret_tool_list", "secret_tool_set", "secret_tool_unset"]


def secret_tool_set(store: SecretStore, key: object, value: object) -> dict[str, Any]:
    """Set ``key``; returns exactly ``{key, path}``."""
    checked = check_operator_secret_key(key)
    write = store.set(checked, check_secret_value(value))
    return {"key": write.key, "path": write.path}


def secret_tool_unset(store: SecretStore, key: object) -> dict[str, Any]:
    """Unset ``key`` (a ``LIVE`` name included); returns exactly ``{key, path, removed}``."""
    checked = check_secret_key_name(key)
    write = store.unset(checked)
    return {"key": write.key, "path": write.path, "removed": bool(write.removed)}


def secret_tool_list(store: SecretStore) -> dict[str, Any]:
    """The stored key names; returns exactly ``{keys, path}``."""
    return {"keys": sorted(store.names()), "path": store.location}
