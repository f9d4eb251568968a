"""The key rules, single-sourced so the CLI and the MCP face refuse identically.

A guard wired to only one face would be the wiring-evasion shape the seed forbids, so
every path that stores a secret calls :func:`check_operator_secret_key`, every path that
removes one calls :func:`check_secret_key_name`, and nothing else decides what a valid
key is. Removal checks only the grammar: Kestrel never stores a key naming ``LIVE``, but
an operator may have written one into ``.env`` by hand, and taking it out must work.
"""

from __future__ import annotations

import re

from kestrel_protocol import RefusalCode

from .errors import SecretStoreError

__all__ = [
    "KEY_GRAMMAR",
    "SECRET_KEY_INVALID_MESSAGE",
    "SECRET_KEY_LIVE_MESSAGE",
    "SECRET_VALUE_INVALID_MESSAGE",
    "check_operator_secret_key",
    "check_secret_key_name",
    "check_secret_value",
]

KEY_GRAMMAR = "[A-Z_][A-Z0-9_]*"
_KEY = re.compile(KEY_GRAMMAR, re.ASCII)

# The offending key is deliberately not echoed for SECRET_KEY_INVALID: an operator who
# types ``set TOKEN=abc123`` would otherwise see (and log) the value in the refusal.
SECRET_KEY_INVALID_MESSAGE = (
    "a secret key must be upper-case ASCII letters, digits and underscores, "
    f"not starting with a digit (the whole key must match {KEY_GRAMMAR})"
)
SECRET_KEY_LIVE_MESSAGE = (
    "Kestrel is paper-only: a secret key containing LIVE is refused, "
    "live-trading credentials are never stored"
)
SECRET_VALUE_INVALID_MESSAGE = (
    "the value cannot be stored: it is not valid Unicode text (it contains an unpaired surrogate)"
)


def check_secret_key_name(key: object) -> str:
    """Return ``key`` when it is a well-formed name; else ``SECRET_KEY_INVALID``.

    Enough to remove a key; storing one also needs :func:`check_operator_secret_key`.
    """
    if not isinstance(key, str) or _KEY.fullmatch(key) is None:
        raise SecretStoreError(
            RefusalCode.SECRET_KEY_INVALID,
            SECRET_KEY_INVALID_MESSAGE,
            {"pattern": KEY_GRAMMAR},
        )
    return key


def check_operator_secret_key(key: object) -> str:
    """Return ``key`` when Kestrel may store it; raise the one refusal that applies.

    The grammar is checked first, so ``live_key`` is ``SECRET_KEY_INVALID`` and only
    well-formed names can be ``SECRET_KEY_LIVE``.
    """
    name = check_secret_key_name(key)
    if "LIVE" in name:
        raise SecretStoreError(RefusalCode.SECRET_KEY_LIVE, SECRET_KEY_LIVE_MESSAGE, {"key": name})
    return name


def check_secret_value(value: object) -> str:
    """Return ``value`` when every store can hold it (a str encodable as UTF-8).

    JSON can carry an unpaired surrogate (``"\\ud800"``); neither the file nor an OS
    keyring can store one, so it is refused before anything is touched. The refusal
    never includes the value.
    """
    if not isinstance(value, str):
        raise SecretStoreError(
            RefusalCode.SECRET_STORE_UNAVAILABLE, "the value must be a string", {}
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise SecretStoreError(
            RefusalCode.SECRET_STORE_UNAVAILABLE, SECRET_VALUE_INVALID_MESSAGE, {}
        ) from None
    return value
