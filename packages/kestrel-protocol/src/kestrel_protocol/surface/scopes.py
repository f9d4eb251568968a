"""The door's scopes, and the scope every non-tool MCP method needs.

Coarse on purpose: reading never changes anything, trading drives a session, grading
runs the (possibly long) grader. The fourth, :data:`SCOPE_TRIALS`, runs no tool: it lets
an evaluator's harness mint a trial principal per run of an agent (the door's
``/v1/trials``), and is never given to the trial's own token. The fifth,
:data:`SCOPE_FEED`, runs no tool either: it lets the operator's feed append bars to a
forward scenario's tape (the door's feed routes); no agent's token carries it. A tool's scope is
declared with the tool; the methods here are the rest of the MCP surface. ``None``
means the method needs no scope (the handshake); :data:`TOOL_SCOPE` means the scope of
the tool it runs (``tools/call``); a method absent from :data:`METHOD_SCOPES` is not
served.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

__all__ = [
    "ALL_SCOPES",
    "METHOD_SCOPES",
    "SCOPE_FEED",
    "SCOPE_GRADE",
    "SCOPE_READ",
    "SCOPE_TRADE",
    "SCOPE_TRIALS",
    "TOOL_SCOPE",
    "TOOL_SCOPES",
]

SCOPE_READ: Final = "kestrel:read"
SCOPE_TRADE: Final = "kestrel:trade"
SCOPE_GRADE: Final = "kestrel:grade"
SCOPE_TRIALS: Final = "kestrel:trials"
SCOPE_FEED: Final = "kestrel:feed"
TOOL_SCOPES: Final = (SCOPE_READ, SCOPE_TRADE, SCOPE_GRADE)
"""The scopes a tool may declare (what a trial's token may inherit from its parent)."""
ALL_SCOPES: Final = (*TOOL_SCOPES, SCOPE_TRIALS, SCOPE_FEED)
TOOL_SCOPE: Final = "tool"
"""Stands for "the scope of the tool this call runs" in :data:`METHOD_SCOPES`."""

METHOD_SCOPES: Final[Mapping[str, str | None]] = MappingProxyType(
    {
        "initialize": None,
        "ping": None,
        "server/discover": None,
        "tools/list": SCOPE_READ,
        "tools/call": TOOL_SCOPE,
        "resources/list": SCOPE_READ,
        "resources/templates/list": SCOPE_READ,
        "resources/read": SCOPE_READ,  # and the scope of the tool the resource projects
        "completion/complete": SCOPE_READ,
        "prompts/list": SCOPE_READ,
        "prompts/get": SCOPE_READ,  # and the scopes of the tools its facts are read with
        "logging/setLevel": SCOPE_READ,
    }
)
