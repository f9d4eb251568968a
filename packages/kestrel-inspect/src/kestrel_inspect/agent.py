"""The default agent of a Kestrel sample: the face's own trading brief as the user
message, then the model's tool loop over Kestrel's MCP tools.

The MCP connection is held for the whole sample (one ``kestrel-mcp`` process, or one
door MCP session, per sample), so the model's calls are one conversation with Kestrel.
"""

from __future__ import annotations

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import MCPServer, mcp_tools
from kestrel_protocol.surface import TOOLS

from .calls import trading_brief
from .connection import KestrelConnection

__all__ = ["AGENT_TOOLS", "kestrel_agent"]

AGENT_TOOLS: tuple[str, ...] = tuple(tool.name for tool in TOOLS if tool.listed)
"""The tools the model is given: every tool the face lists (the operator's secret tools
of ``kestrel-mcp`` are not Kestrel's surface and are never offered)."""


@solver
def kestrel_agent(connection: KestrelConnection, server: MCPServer, style: str) -> Solver:
    """Brief the model on the sample's scenario and let it trade until it stops calling
    tools (or a limit of the eval ends the sample)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        scenario = str(state.metadata["scenario"])
        async with connection.client() as client:
            brief = await trading_brief(client, scenario, style)
        state.user_prompt.text = brief
        async with server:
            state.tools = await mcp_tools(server, tools=list(AGENT_TOOLS)).tools()
            return await generate(state, tool_calls="loop")

    return solve
