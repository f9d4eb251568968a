"""Kestrel's operator secret store: paper-only keys, names-only faces.

Values live in the OS keyring or in ``$KESTREL_HOME/.env``; no face ever returns one.
``check_operator_secret_key`` (storing) and ``check_secret_key_name`` (removing) are the
single source of the key refusals, and the
``secret_tool_*`` functions are the one code path the CLI and the MCP face share.
"""

from __future__ import annotations

from .cli import secrets_group
from .dotenv_format import encode_value, parse_dotenv
from .errors import SecretStoreError
from .file_store import DotenvSecretStore
from .keyring_store import INDEX_ENTRY, KeyringSecretStore, keyring_backend_status
from .keys import (
    KEY_GRAMMAR,
    SECRET_KEY_INVALID_MESSAGE,
    SECRET_KEY_LIVE_MESSAGE,
    check_operator_secret_key,
    check_secret_key_name,
    check_secret_value,
)
from .selection import SECRET_STORE_ENV, SecretStoreChoice, open_secret_store, select_secret_store
from .tools import secret_tool_list, secret_tool_set, secret_tool_unset

__all__ = [
    "INDEX_ENTRY",
    "KEY_GRAMMAR",
    "SECRET_KEY_INVALID_MESSAGE",
    "SECRET_KEY_LIVE_MESSAGE",
    "SECRET_STORE_ENV",
    "DotenvSecretStore",
    "KeyringSecretStore",
    "SecretStoreChoice",
    "SecretStoreError",
    "check_operator_secret_key",
    "check_secret_key_name",
    "check_secret_value",
    "encode_value",
    "keyring_backend_status",
    "open_secret_store",
    "parse_dotenv",
    "secret_tool_list",
    "secret_tool_set",
    "secret_tool_unset",
    "secrets_group",
    "select_secret_store",
]
