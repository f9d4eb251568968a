"""Forward scenarios: the agent's submits wait for bars instead of failing.

On a forward scenario (its catalog entry says ``forward: true``) the tape grows while
the agent trades: a session advances only to the last published bar, and an advance
past it is refused ``BAR_NOT_PUBLISHED`` (retryable). The harness gives the model a
submit tool that asks the face to wait for the bars (the submit tool's argument
``wait``, 30 seconds, unless the model gave one or wrote ``wait`` in its source: the
source the proof keeps is the model's own) and submits again, a bounded number of
times, when the refusal still comes back: the feed being slower than the agent is nobody's
failure. Once the retries are spent the refusal reaches the model, which may stop; the
session is graded as it stands (never scored as a failure of the agent's).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Final

from inspect_ai.tool import Tool, ToolDef, ToolError
from kestrel_protocol import RefusalCode
from mcp import Client

from .calls import call_kestrel, tool_name

__all__ = [
    "NOT_PUBLISHED",
    "RETRIES",
    "WAIT_SECONDS",
    "is_forward",
    "refusal_code",
    "waiting_submit",
]

logger = logging.getLogger(__name__)

NOT_PUBLISHED: Final = RefusalCode.BAR_NOT_PUBLISHED
"""The refusal of an advance past a forward tape's last published bar (retryable)."""
WAIT_SECONDS: Final = 30.0
"""How long a submit on a forward scenario waits for its bars by default."""
MAX_WAIT_SECONDS: Final = 300.0
"""The longest wait a source may ask (the statement form's bound)."""
RETRIES: Final = 3
"""How many times the harness submits again when ``BAR_NOT_PUBLISHED`` still comes back."""
CATALOG_TOOL = tool_name("catalog")
SUBMIT_TOOL = tool_name("submit")
_WAIT = re.compile(r"\bwait\b", re.IGNORECASE)


async def is_forward(client: Client, scenario: str) -> bool:
    """Whether ``scenario``'s catalog entry (as the agent's face lists it) is forward."""
    listed = await call_kestrel(client, CATALOG_TOOL, {})
    entries = listed.get("scenarios")
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("id") == scenario:
            return entry.get("forward") is True
    return False


def refusal_code(text: str) -> str | None:
    """The code of a Kestrel refusal as a tool's text carries it (``{"refusal": …}``)."""
    try:
        data: Any = json.loads(text)
    except ValueError:
        return None
    refusal = data.get("refusal") if isinstance(data, dict) else None
    code = refusal.get("code") if isinstance(refusal, dict) else None
    return code if isinstance(code, str) else None


def waiting_submit(tool: Tool, wait: float = WAIT_SECONDS, retries: int = RETRIES) -> Tool:
    """``tool`` (the face's submit tool) asking to wait up to ``wait`` seconds for
    unpublished bars (its ``wait`` argument, unless the model gave one or its source says
    ``wait``), submitted again up to ``retries`` times while ``BAR_NOT_PUBLISHED`` comes
    back (nothing was journaled: the same call is safe)."""
    if not 0 < wait <= MAX_WAIT_SECONDS or retries < 0:
        raise ValueError(f"a forward submit waits from 1ms to 300s, got wait={wait}")
    found = ToolDef(tool)

    async def submit(**arguments: Any) -> Any:
        source = arguments.get("source")
        if arguments.get("wait") is None and not _WAIT.search(str(source or "")):
            arguments["wait"] = wait
        for attempt in range(retries + 1):
            try:
                return await tool(**arguments)
            except ToolError as exc:
                if refusal_code(exc.message) != NOT_PUBLISHED or attempt == retries:
                    raise
                logger.info("%s: no new bar within %ss, submitting again", found.name, wait)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    return ToolDef(
        submit, name=found.name, description=found.description, parameters=found.parameters
    ).as_tool()
