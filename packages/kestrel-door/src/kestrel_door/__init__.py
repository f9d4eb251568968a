"""Kestrel door: the HTTP face, remote MCP over Streamable HTTP, and its credentials.

Library modules here depend on ``kestrel_protocol`` ports alone; the runtime and the
MCP server are injected by the composition root (``kestrel_door.cli``).
"""

from __future__ import annotations

from .turn_credentials import (
    CREDENTIAL_IDLE_MS,
    TURN_CREDENTIAL_PREFIX,
    TurnCredentials,
    create_turn_credentials,
)

__all__ = [
    "CREDENTIAL_IDLE_MS",
    "TURN_CREDENTIAL_PREFIX",
    "TurnCredentials",
    "create_turn_credentials",
]
