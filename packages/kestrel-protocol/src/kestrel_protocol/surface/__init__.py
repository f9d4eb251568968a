"""Kestrel's tool and resource surface, declared once (docs/spec.md §13 "One surface").

:data:`SURFACE` (in :mod:`.registry`) is the one place a tool or resource is declared;
:func:`call_tool` is the one dispatcher (every call is ``Transport.invoke``) and
:class:`McpMethods` the MCP methods every face serves from it (prompts, completion,
progress and log messages included).
The faces (``kestrel_mcp``, ``kestrel_door``) import this package
and name no tool of their own.
"""

from __future__ import annotations

from .arguments import (
    HISTORY_MAX,
    Arguments,
    ArtifactArgs,
    HistoryArgs,
    NoArgs,
    OpenArgs,
    PaymentArgs,
    ProofArgs,
    ProofOfGradeArgs,
    ResumeArgs,
    ScenarioArgs,
    SessionArgs,
    SessionListArgs,
    SubmitArgs,
    ValidateArgs,
    VerifyArgs,
)
from .briefs import STYLES, prompts
from .compact import COMPACT_TEXT, compact_text
from .declare import Binding, Route, Tool
from .dispatch import call_tool, run_tool
from .feeds import FEED_BARS_PATH, FEED_FREEZE_PATH, FEED_PATH, FEED_TAPE_PATH
from .methods import MAX_COMPLETIONS, McpMethods, Sleep, ToolCaller
from .notify import LOG_LEVEL_KEY, LOG_LEVELS, Notifier, Send, log_threshold
from .paging import next_cursor, offset_of, page
from .prompt import Fetch, Prompt, PromptArgument
from .recall import Recall
from .registry import INSTRUCTIONS, RESOURCES, SURFACE, TOOLS
from .resource import Resource
from .results import (
    ArgumentError,
    ToolResult,
    frame_bytes,
    json_text,
    refusal_result,
    result_refusal,
    tool_result,
)
from .rpc import RpcError
from .schemas import inline_refs, input_schema, output_schema, union_output_schema
from .scopes import (
    ALL_SCOPES,
    METHOD_SCOPES,
    SCOPE_FEED,
    SCOPE_GRADE,
    SCOPE_READ,
    SCOPE_TRADE,
    SCOPE_TRIALS,
    TOOL_SCOPE,
    TOOL_SCOPES,
)
from .session import Guard, McpSession
from .signature import signature_problems
from .surface import Surface
from .text import (
    ID_RULE,
    LABEL_MAX,
    LABEL_RULE,
    SHORT_RULE,
    URL_TEXT_MAX,
    Id,
    Label,
    Short,
    Text,
    id_problem,
    label_problem,
    text_problem,
)
from .trials import TRIAL_MARK, TRIALS_MINTED_PATH, TRIALS_PATH, trial_principal

__all__ = [
    "ALL_SCOPES",
    "COMPACT_TEXT",
    "FEED_BARS_PATH",
    "FEED_FREEZE_PATH",
    "FEED_PATH",
    "FEED_TAPE_PATH",
    "HISTORY_MAX",
    "ID_RULE",
    "INSTRUCTIONS",
    "LABEL_MAX",
    "LABEL_RULE",
    "LOG_LEVELS",
    "LOG_LEVEL_KEY",
    "MAX_COMPLETIONS",
    "METHOD_SCOPES",
    "RESOURCES",
    "SCOPE_FEED",
    "SCOPE_GRADE",
    "SCOPE_READ",
    "SCOPE_TRADE",
    "SCOPE_TRIALS",
    "SHORT_RULE",
    "STYLES",
    "SURFACE",
    "TOOLS",
    "TOOL_SCOPE",
    "TOOL_SCOPES",
    "TRIALS_MINTED_PATH",
    "TRIALS_PATH",
    "TRIAL_MARK",
    "URL_TEXT_MAX",
    "ArgumentError",
    "Arguments",
    "ArtifactArgs",
    "Binding",
    "Fetch",
    "Guard",
    "HistoryArgs",
    "Id",
    "Label",
    "McpMethods",
    "McpSession",
    "NoArgs",
    "Notifier",
    "OpenArgs",
    "PaymentArgs",
    "Prompt",
    "PromptArgument",
    "ProofArgs",
    "ProofOfGradeArgs",
    "Recall",
    "Resource",
    "ResumeArgs",
    "Route",
    "RpcError",
    "ScenarioArgs",
    "Send",
    "SessionArgs",
    "SessionListArgs",
    "Short",
    "Sleep",
    "SubmitArgs",
    "Surface",
    "Text",
    "Tool",
    "ToolCaller",
    "ToolResult",
    "ValidateArgs",
    "VerifyArgs",
    "call_tool",
    "compact_text",
    "frame_bytes",
    "id_problem",
    "inline_refs",
    "input_schema",
    "json_text",
    "label_problem",
    "log_threshold",
    "next_cursor",
    "offset_of",
    "output_schema",
    "page",
    "prompts",
    "refusal_result",
    "result_refusal",
    "run_tool",
    "signature_problems",
    "text_problem",
    "tool_result",
    "trial_principal",
    "union_output_schema",
]
