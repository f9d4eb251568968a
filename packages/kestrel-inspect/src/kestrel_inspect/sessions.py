"""The sessions a sample's agent opened, read from its conversation."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool

from .calls import tool_name

__all__ = ["OpenedSession", "opened_sessions"]

OPEN_TOOL = tool_name("open_session")


@dataclass(frozen=True, slots=True)
class OpenedSession:
    """A session the agent opened: its id and the scenario it asked for."""

    session: str
    scenario: str


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def opened_sessions(messages: list[ChatMessage]) -> list[OpenedSession]:
    """Every session a successful open (the tool projecting ``open_session``) returned,
    in order."""
    asked: dict[str, str] = {}
    opened: list[OpenedSession] = []
    for message in messages:
        if isinstance(message, ChatMessageAssistant):
            for call in message.tool_calls or ():
                if call.function == OPEN_TOOL:
                    asked[call.id] = str(call.arguments.get("scenario", ""))
        elif (
            isinstance(message, ChatMessageTool)
            and message.function == OPEN_TOOL
            and message.error is None
        ):
            result = _json(message.text)
            session = result.get("sessionId") if isinstance(result, dict) else None
            if isinstance(session, str):
                opened.append(OpenedSession(session, asked.get(message.tool_call_id or "", "")))
    return opened
