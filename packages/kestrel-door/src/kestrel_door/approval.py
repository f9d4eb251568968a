"""Approval policy: which calls need a person's yes before they run.

An outside agent has no stream to put an approval card on, so its answer is in-band:
the refusal ``APPROVAL_REQUIRED`` with "resolve it in the product and retry". The
operator resolves it (``kestrel-door approval grant``), which stores a one-shot yes
that the retried call consumes. A 2026-07-28 MCP client that can elicit is asked
instead, and its ``accept`` stores that yes (:mod:`.elicit`).

An approval required of a tool is required of every tool that has its effects, as the
surface declares them (``Surface.guarded``): requiring it of the grade tool requires it
of the proof tool too, which grades (and closes) a session not graded yet, so no call
reaches a guarded effect without a yes. Each is approved by its own name, the
``detail.tool`` of its refusal.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from kestrel_protocol.ports import RunContext
from kestrel_protocol.store import DoorRecords
from kestrel_protocol.surface import SURFACE, Surface

__all__ = ["ApprovalPolicy", "Decision", "NoApproval", "RequireApproval"]

Decision = Literal["allow", "ask", "deny"]


class ApprovalPolicy(Protocol):
    """Decides a call before it runs; ``ask`` becomes ``APPROVAL_REQUIRED``."""

    def decide(self, ctx: RunContext, tool: str, arguments: Mapping[str, Any]) -> Decision: ...


class NoApproval:
    """Every call in scope runs (the default)."""

    def decide(self, ctx: RunContext, tool: str, arguments: Mapping[str, Any]) -> Decision:
        return "allow"


class RequireApproval:
    """Named tools, and every tool with their effects, need an operator's one-shot
    approval per principal. An unknown tool name is a ``ValueError`` naming it."""

    def __init__(
        self, store: DoorRecords, tools: frozenset[str], surface: Surface = SURFACE
    ) -> None:
        self._store = store
        self.tools = surface.guarded(tools)
        """Every tool that asks (the named ones by name, not by dotted alias)."""

    def grant(self, principal: str, tool: str) -> None:
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        self._store.grant_approval(principal, tool, now)

    def decide(self, ctx: RunContext, tool: str, arguments: Mapping[str, Any]) -> Decision:
        if tool not in self.tools:
            return "allow"
        return "allow" if self._store.take_approval(ctx.principal, tool) else "ask"
