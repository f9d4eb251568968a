"""The harness's own MCP requests: a tool's structured result, or its refusal raised."""

from __future__ import annotations

from typing import Any

from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.surface import TOOLS
from mcp import Client

__all__ = ["call_kestrel", "tool_name", "trading_brief"]

BRIEF_PROMPT = "kestrel_trade_scenario"


def tool_name(method: str) -> str:
    """The name of the tool the runtime's ``method`` runs (tool names live in the
    surface's one registry)."""
    return next(tool.name for tool in TOOLS if tool.runs is not None and tool.runs.method == method)


async def call_kestrel(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``tool``'s ``structuredContent``; a Kestrel refusal is raised as the
    :class:`KestrelError` it carries (code, message, detail)."""
    result = await client.call_tool(tool, arguments)
    data = result.structured_content
    if result.is_error:
        refusal = data.get("refusal") if isinstance(data, dict) else None
        if isinstance(refusal, dict):
            raise KestrelError(
                str(refusal.get("code")), str(refusal.get("message")), refusal.get("detail")
            )
        text = " ".join(getattr(c, "text", "") for c in result.content)
        raise KestrelError(RefusalCode.BACKEND_UNAVAILABLE, f"{tool} failed: {text or 'no detail'}")
    if not isinstance(data, dict):
        raise KestrelError(RefusalCode.BACKEND_UNAVAILABLE, f"{tool} returned no structured result")
    return data


async def trading_brief(client: Client, scenario: str, style: str) -> str:
    """The face's own ``kestrel_trade_scenario`` prompt for ``scenario``: its catalog
    facts and terms (never a bar), the statement kinds and the tool workflow."""
    prompt = await client.get_prompt(BRIEF_PROMPT, {"scenario": scenario, "style": style})
    texts = [getattr(m.content, "text", None) for m in prompt.messages]
    return "\n\n".join(t for t in texts if isinstance(t, str))
