"""The door's own ``TurnTools`` for issued and OAuth tokens: guard, approval, audit.

Turn credentials never come here: their calls go to the live turn's own tools, so the
door adds no permission of its own on that path. This is the path for bearers that
arrive from outside, where the door *is* the product: it checks the scope, asks the
approval policy, applies the session gate on open, runs the tool on the principal's
transport (which owns its sessions: another principal's id is ``UNKNOWN_SESSION``),
and appends one audit row whatever happened.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kestrel_protocol import KestrelError, Refusal, RefusalCode, SessionOpened
from kestrel_protocol.ports import RunContext, SessionGate, Transport

from .approval import ApprovalPolicy, NoApproval
from .audit import AuditLog
from .scopes import required_scope
from .tools import (
    ToolArgumentError,
    canonical_tool_name,
    is_secret_tool,
    parse_payment,
    refusal_result,
    result_refusal,
    run_transport_tool,
    tool_result,
)

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
    """``TurnTools`` for one authenticated call context."""

    def __init__(
        self,
        ctx: RunContext,
        transport: Transport,
        *,
        audit: AuditLog | None = None,
        approval: ApprovalPolicy | None = None,
        gate: SessionGate | None = None,
    ) -> None:
        self.ctx = ctx
        self._transport = transport
        self._audit = audit
        self._approval = approval or NoApproval()
        self._gate = gate

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        tool = canonical_tool_name(name) if isinstance(name, str) else "?"
        outcome = "error"
        try:
            result = await self._call(tool, arguments)
            outcome = _outcome(result)
            return result
        except ToolArgumentError:
            outcome = "invalid-arguments"
            raise
        finally:
            if self._audit is not None:
                try:
                    self._audit.append(
                        principal=self.ctx.principal,
                        venue=self.ctx.venue,
                        tool=tool,
                        arguments=arguments if isinstance(arguments, Mapping) else {},
                        outcome=outcome,
                    )
                except Exception:
                    logger.exception("audit row could not be written")

    async def _call(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        if is_secret_tool(tool):
            raise ToolArgumentError(f"unknown tool {tool!r}")
        scope = required_scope(tool)
        if scope is None:
            raise ToolArgumentError(f"unknown tool {tool!r}")
        if not isinstance(arguments, Mapping):
            raise ToolArgumentError("arguments must be an object")
        if scope not in self.ctx.scopes:
            return refusal_result(
                Refusal(
                    code=RefusalCode.FORBIDDEN,
                    message=f"this credential lacks the scope {scope}",
                    detail={"requiredScope": scope, "error": "insufficient_scope"},
                )
            )
        decision = self._approval.decide(self.ctx, tool, arguments)
        if decision == "ask":
            return refusal_result(
                Refusal(
                    code=RefusalCode.APPROVAL_REQUIRED,
                    message=APPROVAL_MESSAGE,
                    detail={"tool": tool},
                )
            )
        if decision == "deny":
            return refusal_result(
                Refusal(code=RefusalCode.FORBIDDEN, message="this call is not allowed", detail={})
            )
        if tool == "kestrel_session_open" and self._gate is not None:
            return await self._gated_open(arguments)
        return await run_transport_tool(self._transport, tool, arguments)

    async def _gated_open(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        scenario = arguments.get("scenario")
        if not isinstance(scenario, str):
            raise ToolArgumentError("argument 'scenario' must be a string")
        payment = parse_payment(arguments.get("payment"))
        assert self._gate is not None
        try:
            # An unknown scenario is refused before the gate spends a quota slot or voucher.
            await self._transport.scenario(scenario)
            offer = self._gate.check(self.ctx.principal, scenario, payment)
        except KestrelError as exc:
            return refusal_result(exc)
        if offer is not None:
            return tool_result(SessionOpened(gated=True, payment=offer).to_json())
        # The door's gate took the payment; the transport behind it is not gated again.
        rest = {k: v for k, v in arguments.items() if k != "payment"}
        return await run_transport_tool(self._transport, "kestrel_session_open", rest)
