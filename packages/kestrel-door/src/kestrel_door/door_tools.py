"""The door's own ``TurnTools`` for issued and OAuth tokens: guard, approval, audit.

Turn credentials never come here: their calls go to the live turn's own tools, so the
door adds no permission of its own on that path. This is the path for bearers that
arrive from outside, where the door *is* the product: it checks the tool's scope (from
the surface), asks the approval policy, runs the tool through the one dispatcher on the
principal's transport (which owns its sessions: another principal's id is
``UNKNOWN_SESSION``; a gated runtime answers an Offer after resuming an open label),
and appends one audit row whatever happened.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kestrel_protocol import KestrelError, Refusal, RefusalCode
from kestrel_protocol.outage import RETRY_AFTER_S, STORE_UNAVAILABLE
from kestrel_protocol.ports import RunContext, Transport
from kestrel_protocol.surface import (
    SURFACE,
    ArgumentError,
    Surface,
    Tool,
    refusal_result,
    result_refusal,
    run_tool,
)

from .approval import ApprovalPolicy, NoApproval
from .audit import AuditLog

__all__ = ["APPROVAL_MESSAGE", "DoorTurnTools"]

logger = logging.getLogger(__name__)

APPROVAL_MESSAGE = "this call needs approval: resolve it in the product and retry"


def _outcome(result: Mapping[str, Any]) -> str:
    if not result.get("isError"):
        data = result.get("structuredContent")
        if isinstance(data, Mapping) and data.get("gated") is True:
            return "gated"
        return "ok"
    refusal = result_refusal(result)
    if refusal is not None and isinstance(refusal.get("code"), str):
        return str(refusal["code"])
    return "error"


class DoorTurnTools:
    """``TurnTools`` for one authenticated call context, over one surface."""

    def __init__(
        self,
        ctx: RunContext,
        transport: Transport,
        *,
        audit: AuditLog | None = None,
        approval: ApprovalPolicy | None = None,
        surface: Surface = SURFACE,
    ) -> None:
        self.ctx = ctx
        self._transport = transport
        self._audit = audit
        self._approval = approval or NoApproval()
        self._surface = surface

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Run ``name``; a refusal is an ``isError`` result, bad input an ArgumentError."""
        tool = self._surface.find(name) if isinstance(name, str) else None
        audited = tool.name if tool is not None else str(name)[:64]
        outcome = "error"
        try:
            result = await self._call(tool, name, arguments)
            outcome = _outcome(result)
            return result
        except ArgumentError:
            outcome = "invalid-arguments"
            raise
        finally:
            if self._audit is not None:
                try:
                    await self._audit.record(
                        principal=self.ctx.principal,
                        venue=self.ctx.venue,
                        tool=audited,
                        arguments=arguments if isinstance(arguments, Mapping) else {},
                        outcome=outcome,
                    )
                except Exception:
                    logger.exception("audit row could not be written")

    async def _call(
        self, tool: Tool | None, name: str, arguments: Mapping[str, Any]
    ) -> dict[str, Any]:
        if tool is None:  # no such tool: refused as every face refuses it, naming it
            tool = self._surface.tool(name)
        args = tool.parse(arguments)  # bad input is refused before the scope is looked at
        if tool.scope not in self.ctx.scopes:
            return refusal_result(
                Refusal(
                    code=RefusalCode.FORBIDDEN,
                    message=f"this credential lacks the scope {tool.scope}",
                    detail={"requiredScope": tool.scope, "error": "insufficient_scope"},
                )
            )
        try:
            decision = self._approval.decide(self.ctx, tool.name, arguments)
        except KestrelError as exc:  # the store that keeps the approvals did not answer
            return refusal_result(exc)
        except Exception as exc:  # e.g. SQLite still locked after its busy timeout
            logger.warning("the approval of %s could not be read: %r", tool.name, exc)
            return refusal_result(
                KestrelError(
                    RefusalCode.BACKEND_UNAVAILABLE,
                    STORE_UNAVAILABLE,
                    {"retryAfter": RETRY_AFTER_S},
                )
            )
        if decision == "ask":
            return refusal_result(
                Refusal(
                    code=RefusalCode.APPROVAL_REQUIRED,
                    message=APPROVAL_MESSAGE,
                    detail={"tool": tool.name},
                )
            )
        if decision == "deny":
            return refusal_result(
                Refusal(code=RefusalCode.FORBIDDEN, message="this call is not allowed", detail={})
            )
        return await run_tool(tool, self._transport, args)
