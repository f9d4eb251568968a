"""A scripted model for Inspect's ``mockllm``: open a session, a few submits, grade, stop.

Its next tool call is read from the conversation so far (the session id from the open's
result), as a model would; token usage is given so that ``mockllm`` counts nothing.
"""

from __future__ import annotations

import json
from typing import Any, cast

from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    execute_tools,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolChoice, ToolInfo
from kestrel_inspect import KestrelConnection, kestrel_agent

__all__ = ["HONEST", "OPEN", "SUBMITS", "scripted_model", "scripted_trader"]

SUBMITS = ("buy 10 ACME", "advance 5", "sell 10 ACME\nadvance 3", "advance 3000")
"""Traded to the end of the tape (a session that stops early fails the board)."""
OPEN = "<open>"
"""A step of a script: open a (new) session on the sample's scenario."""
HONEST = (OPEN, *SUBMITS)
"""The default script: open, trade to the end of the tape (then grade)."""
MODEL = "mockllm/model"


def _next(messages: list[ChatMessage], scenario: str, script: tuple[str, ...]) -> ModelOutput:
    """The tool call after the results so far: ``script``'s next step (an open or a
    submit to the session opened last), then the grade of that session, then words."""
    results = [m for m in messages if isinstance(m, ChatMessageTool)]
    done = len(results)
    if done < len(script) and script[done] == OPEN:
        return ModelOutput.for_tool_call(MODEL, "kestrel_session_open", {"scenario": scenario})
    last_open = max(i for i, step in enumerate(script[:done]) if step == OPEN)
    opened: dict[str, Any] = json.loads(results[last_open].text)
    session = opened["sessionId"]
    if done < len(script):
        return ModelOutput.for_tool_call(
            MODEL, "kestrel_session_submit", {"sessionId": session, "source": script[done]}
        )
    if done == len(script):
        return ModelOutput.for_tool_call(MODEL, "kestrel_grade", {"sessionId": session})
    return ModelOutput.from_content(MODEL, "I traded and graded the session.")


def scripted_model(script: tuple[str, ...] = HONEST) -> Model:
    """The mock model trading each sample's scenario (read from the brief's first line)
    by ``script``."""

    def generate(
        messages: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        brief = messages[0].text
        scenario = brief.split("Kestrel scenario ", 1)[1].split(" ", 1)[0]
        output = _next(messages, scenario, script)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return get_model(MODEL, custom_outputs=generate)


@solver
def scripted_trader(home: str) -> Solver:
    """For ``inspect eval … --solver``: the task's agent with the scripted model in place
    of the eval's (``--model`` names a provider before any task file loads, so a model of
    a test cannot be named there)."""
    connection = KestrelConnection(home=home)
    model = scripted_model()

    async def with_script(state: TaskState, **_options: Any) -> TaskState:
        while True:
            output = await model.generate(state.messages, state.tools)
            state.messages.append(output.message)
            if not output.message.tool_calls:
                return state
            results, _ = await execute_tools(state.messages, state.tools)
            state.messages.extend(results)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        agent = kestrel_agent(connection, "balanced")
        return await agent(state, cast(Generate, with_script))

    return solve
