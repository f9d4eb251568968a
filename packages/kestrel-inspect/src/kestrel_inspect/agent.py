"""The default agent of a Kestrel sample: the face's own trading brief as the user
message, then the model's tool loop over Kestrel's MCP tools.

The MCP connection is held for the whole sample (one ``kestrel-mcp`` process, or one
door MCP session, per sample), so the model's calls are one conversation with Kestrel,
made as the sample's own trial principal (:mod:`.trials`): the harness makes it, the
model's tools cannot. When the door cannot make the trial or brief the agent (an
outage), the model is not run and the reason is kept for the scorer, which leaves the
sample unscored.
"""

from __future__ import annotations

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, mcp_tools
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.surface import TOOLS

from .calls import trading_brief
from .connection import KestrelConnection
from .forward import SUBMIT_TOOL, WAIT_SECONDS, is_forward, waiting_submit
from .trials import TrialUnavailable

__all__ = ["AGENT_TOOLS", "UNAVAILABLE_KEY", "kestrel_agent"]

UNAVAILABLE_KEY = "kestrel:unavailable"
"""The sample store's key for why Kestrel could not serve the sample (not the agent's
doing): the scorer leaves such a sample unscored with that reason."""

AGENT_TOOLS: tuple[str, ...] = tuple(tool.name for tool in TOOLS if tool.listed)
"""The tools the model is given: every tool the face lists (the operator's secret tools
of ``kestrel-mcp`` are not Kestrel's surface and are never offered)."""


def _waiting(tools: list[Tool], wait: float) -> list[Tool]:
    """``tools`` with the submit tool waiting for a forward tape's bars (:mod:`.forward`)."""
    return [waiting_submit(t, wait) if ToolDef(t).name == SUBMIT_TOOL else t for t in tools]


@solver
def kestrel_agent(
    connection: KestrelConnection, style: str = "balanced", wait: float = WAIT_SECONDS
) -> Solver:
    """Brief the model on the sample's scenario and let it trade, as the sample's trial,
    until it stops calling tools (or a limit of the eval ends the sample). On a forward
    scenario its submits wait up to ``wait`` seconds for bars not yet published."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        scenario = str(state.metadata["scenario"])
        try:
            trial = await connection.trial(state, fresh=True)
            async with connection.client(trial) as client:
                brief = await trading_brief(client, scenario, style)
                forward = await is_forward(client, scenario)
        except TrialUnavailable as exc:
            state.store.set(UNAVAILABLE_KEY, str(exc))
            return state
        except KestrelError as exc:
            if exc.code != RefusalCode.BACKEND_UNAVAILABLE:
                raise
            state.store.set(UNAVAILABLE_KEY, f"the brief could not be read: {exc.code}: {exc}")
            return state
        state.user_prompt.text = brief
        server = connection.inspect_server(trial)
        async with server:
            tools = await mcp_tools(server, tools=list(AGENT_TOOLS)).tools()
            state.tools = _waiting(tools, wait) if forward else tools
            return await generate(state, tool_calls="loop")

    return solve
