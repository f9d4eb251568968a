"""Approval policy: which calls need a person's yes before they run.

An outside agent has no stream to put an approval card on, so its answer is in-band:
the refusal ``APPROVAL_REQUIRED`` with "resolve it in the product and retry". The
operator resolves it (``kestrel-door approval grant``), which stores a one-shot yes
that the retried call consumes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from kestrel_protocol.ports import RunContext
from kestrel_protocol.store import DoorRecords

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
    """Named tools need an operator's one-shot approval per principal."""

    def __init__(self, store: DoorRecords, tools: frozenset[str]) -> None:
        self._store = store
        self.tools = tools

    def grant(self, principal: str, tool: str) -> None:
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        self._store.grant_approval(principal, tool, now)

    def decide(self, ctx: RunContext, tool: str, arguments: Mapping[str, Any]) -> Decision:
        if tool not in self.tools:
            return "allow"
        return "allow" if self._store.take_approval(ctx.principal, tool) else "ask"
