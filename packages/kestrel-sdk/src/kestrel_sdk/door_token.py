"""Where a command line connecting to a door (``--remote URL``) finds the door's bearer
token: the one rule of ``kestrel --remote`` and ``kestrel-mcp --remote``.

``$KESTREL_API_TOKEN`` first, else the key ``KESTREL_API_TOKEN`` in the operator's
secret store of the same home (the OS keyring or ``$KESTREL_HOME/.env``, as
``kestrel secrets set KESTREL_API_TOKEN`` keeps it), when ``kestrel-secrets`` is
installed: the SDK does not depend on it. None found is a usage error naming both places
and the command that stores one; the token itself is never shown or logged.
"""

from __future__ import annotations

import os

import click
from kestrel_protocol import KestrelError
from kestrel_protocol.settings import KestrelSettings

__all__ = ["API_TOKEN_ENV", "door_token"]

API_TOKEN_ENV = "KESTREL_API_TOKEN"
"""The environment variable, and the secret store's key, holding a door's bearer token."""


def _from_secret_store(settings: KestrelSettings) -> tuple[str | None, str]:
    """The store's token, or ``None`` and why there is none (never a value)."""
    try:
        from kestrel_secrets import open_secret_store  # noqa: PLC0415 - an optional package
    except ImportError:
        return None, "kestrel-secrets, which reads the secret store, is not installed"
    try:
        found = open_secret_store(settings.home).reveal(API_TOKEN_ENV)
    except KestrelError as exc:  # the store's refusals name what is wrong, never a value
        return None, f"the secret store refused: {exc.code}: {exc.message}"
    except Exception as exc:
        return None, f"the secret store is unavailable ({type(exc).__name__})"
    return (found, "") if found else (None, f"the secret store holds no {API_TOKEN_ENV}")


def door_token(settings: KestrelSettings) -> str:
    """The bearer for the door at ``settings.remote``: ``$KESTREL_API_TOKEN``, else the
    secret store of ``settings.home``.

    None found is refused before anything connects (``click.UsageError``, exit 2): a
    door refuses every call without one, so a command would otherwise fail later, or
    an MCP host start a server whose every tool call is refused."""
    token = os.environ.get(API_TOKEN_ENV)
    if token:
        return token
    found, why = _from_secret_store(settings)
    if found:
        return found
    raise click.UsageError(
        f"--remote {settings.remote} needs the door's token: {API_TOKEN_ENV} is not set "
        f"and {why}. Issue one on the door (kestrel-door token issue --principal NAME) and "
        f"set {API_TOKEN_ENV}, or keep it with: kestrel secrets set {API_TOKEN_ENV}"
    )
