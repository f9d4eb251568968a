"""Kestrel for Inspect AI: ``inspect eval kestrel_inspect/kestrel_trading``.

A task whose samples are Kestrel scenarios, whose tools are Kestrel's MCP tools
(``kestrel-mcp`` over stdio, or a door's remote MCP with a token), and whose scorer
grades the agent's session and keeps its proof in the log.
"""

from __future__ import annotations

from .agent import AGENT_TOOLS, UNAVAILABLE_KEY, kestrel_agent
from .calls import call_kestrel, tool_name, trading_brief
from .connection import TOKEN_ENV, KestrelConnection
from .forward import NOT_PUBLISHED, WAIT_SECONDS, is_forward, waiting_submit
from .scorer import METADATA_KEY, SCORE_KEYS, UNAVAILABLE, kestrel_scorer, score_of_proof
from .scripted import STRATEGIES, ScriptedAgent, next_call
from .sessions import OpenedSession, opened_sessions
from .task import kestrel_trading
from .trials import Trial, TrialUnavailable, trial_name

__all__ = [
    "AGENT_TOOLS",
    "METADATA_KEY",
    "NOT_PUBLISHED",
    "SCORE_KEYS",
    "STRATEGIES",
    "TOKEN_ENV",
    "UNAVAILABLE",
    "UNAVAILABLE_KEY",
    "WAIT_SECONDS",
    "KestrelConnection",
    "OpenedSession",
    "ScriptedAgent",
    "Trial",
    "TrialUnavailable",
    "call_kestrel",
    "is_forward",
    "kestrel_agent",
    "kestrel_scorer",
    "kestrel_trading",
    "next_call",
    "opened_sessions",
    "score_of_proof",
    "tool_name",
    "trading_brief",
    "trial_name",
    "waiting_submit",
]
