"""Hypothesis strategies for hostile MCP frames and Kestrel sources.

Frames are a mix of well-formed requests aimed at every method and tool (with
plausible, wrong and random arguments), notifications, arbitrary JSON values, broken
JSON and raw bytes, so the fuzz reaches the runtime and not only the parser.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st
from kestrel_mcp.secrets import SecretTools, secret_tools
from kestrel_protocol.surface import SURFACE, Tool
from kestrel_sdk.runtime.lang import FORM_EXAMPLES

FORMS = sorted(FORM_EXAMPLES.values())
"""One statement of each order form the grammar has (brackets, OCO, trailing stops,
targets): the fuzz learns new forms from the language, not from this file."""

METHODS = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    "prompts/list",
    "logging/setLevel",
]
NOTIFICATIONS = ["notifications/initialized", "notifications/cancelled", "notifications/progress"]
STDIO_TOOLS: tuple[Tool, ...] = SURFACE.plus(secret_tools(SecretTools())).listed
"""The tools stdio MCP lists (the registry's and its own secret tools; the store is never
opened here): the fuzz learns a new tool from the registry, not from this file."""
TOOLS = [
    *(tool.name for tool in STDIO_TOOLS),
    "kestrel.session.open",
    "kestrel.session.submit",
]
"""Names a random call aims at: every listed tool, and two that are not tools."""
SCENARIOS = ["acme-trend", "acme-chop", "acme-crash", "pairs-kx", "nope", ""]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

_statement = st.one_of(
    st.builds(
        lambda side, qty, sym, kind: f"{side} {qty} {sym}{kind}",
        st.sampled_from(["buy", "sell", "BUY", "Sell", "short"]),
        st.sampled_from(["1", "10", "0", "-5", "1000000000", "3.5", "0.01", "0.000000001", "x"]),
        st.sampled_from(["ACME", "acme", "KX", "ZZZ", "A" * 13, ""]),
        st.sampled_from(
            [
                "",
                " market",
                " limit 50.00",
                " limit 50.001",
                " stop 60 limit 61",
                " stop",
                " limit -1",
                " tif ioc",
                " tif gtc as a1",
                " tif week",
                " as BAD",
            ]
        ),
    ),
    st.sampled_from(
        [
            "advance",
            "advance 1",
            "advance 3",
            "advance 0",
            "advance to 2010-02-01T00:00:00Z",
            "advance to 1999-01-01T00:00:00Z",
            "advance to tomorrow",
            "cancel all",
            "cancel o1",
            "cancel a1",
            "cancel all ACME",
            "stand down",
            'stand down "enough"',
            "# a comment",
            "",
        ]
    ),
    st.text(max_size=30),
    st.sampled_from(FORMS),
    # each form cut short, or a word of it replaced: every missing and bad part
    st.builds(lambda form, cut: form[:cut], st.sampled_from(FORMS), st.integers(1, 60)),
    st.builds(
        lambda form, at, word: " ".join(word if i == at else w for i, w in enumerate(form.split())),
        st.sampled_from(FORMS),
        st.integers(0, 9),
        st.sampled_from(["0", "-1", "150%", "0%", "x", "to", "take", "oco", "all", "1.001"]),
    ),
)
_valid_statement = st.one_of(
    st.sampled_from(FORMS),
    st.builds(
        lambda side, qty, kind, tif: f"{side} {qty} ACME{kind}{tif}",
        st.sampled_from(["buy", "sell", "BUY"]),
        st.integers(min_value=1, max_value=50),
        st.sampled_from(
            ["", " market", " limit 45", " limit 60.5", " stop 70", " stop 70 limit 71"]
        ),
        st.sampled_from(["", " tif day", " tif gtc", " tif ioc"]),
    ),
    st.builds(lambda n: f"advance {n}", st.integers(min_value=1, max_value=4)),
    st.sampled_from(["advance", "cancel all", "cancel all ACME", "# note", ""]),
)
valid_sources = st.lists(_valid_statement, min_size=1, max_size=6).map("\n".join)
"""Sources that are valid on acme-trend (so the fuzz drives the engine, not only the parser)."""

sources = st.lists(_statement, max_size=6).map("\n".join) | st.text(max_size=80) | valid_sources


def session_ids(known: list[str]) -> st.SearchStrategy[str]:
    return (
        st.sampled_from(known)
        | st.sampled_from(["ks_" + "a" * 26, "", "ks_"])
        | st.text(max_size=30)
    )


def tool_arguments(known_sessions: list[str]) -> st.SearchStrategy[Any]:
    plausible = st.fixed_dictionaries(
        {},
        optional={
            "sessionId": session_ids(known_sessions),
            "source": sources,
            "scenario": st.sampled_from(SCENARIOS) | st.text(max_size=10),
            "label": st.text(max_size=10),
            "token": st.text(max_size=20),
            "key": st.sampled_from(["FUZZ_KEY", "MY_LIVE_KEY", "bad key", ""])
            | st.text(max_size=10),
            "value": st.text(max_size=20),
            "payment": json_values,
            "session_id": st.text(max_size=5),
        },
    )
    return plausible | json_values


def exact_tool_calls(
    known_sessions: list[str], tools: tuple[Tool, ...] = STDIO_TOOLS
) -> st.SearchStrategy[dict[str, Any]]:
    """``tools/call`` requests of each of ``tools`` whose arguments match its model, so
    they run: a plausible value for the arguments named here, else the field's example."""
    plausible: dict[str, st.SearchStrategy[Any]] = {
        "sessionId": session_ids(known_sessions),
        "source": sources,
        "scenario": st.sampled_from(SCENARIOS),
        "label": st.sampled_from(["a", "b", "c"]) | st.text(max_size=6),
        "token": st.text(max_size=20),
        "key": st.sampled_from(["FUZZ_KEY", "MY_LIVE_KEY", "bad key", "", "LIVE_X", "x"]),
        "value": st.text(max_size=20),
    }
    by_tool: dict[str, st.SearchStrategy[dict[str, Any]]] = {}
    for tool in tools:
        required: dict[str, st.SearchStrategy[Any]] = {}
        optional: dict[str, st.SearchStrategy[Any]] = {}
        for name, field in tool.arguments.model_fields.items():
            wire = field.alias or name
            value = plausible.get(wire)
            if value is None and field.examples:
                value = st.sampled_from(field.examples)
            if field.is_required():
                required[wire] = json_values if value is None else value
            elif value is not None:
                optional[wire] = value
        by_tool[tool.name] = st.fixed_dictionaries(required, optional=optional)
    weighted = list(by_tool.items())
    if "kestrel_session_submit" in by_tool:  # weighted twice: it drives the engine
        weighted.append(("kestrel_session_submit", by_tool["kestrel_session_submit"]))
    return st.one_of(
        *[
            st.builds(
                lambda i, a, name=name: {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {"name": name, "arguments": a},
                },
                st.integers(min_value=0, max_value=2**31),
                args,
            )
            for name, args in weighted
        ]
    )


def requests(known_sessions: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Well-formed JSON-RPC requests (id is an int or a string)."""
    rid = st.integers(min_value=-(2**53), max_value=2**53) | st.text(max_size=12)
    tool_call = st.fixed_dictionaries(
        {
            "name": st.sampled_from(TOOLS) | st.text(max_size=12),
            "arguments": tool_arguments(known_sessions),
        }
    )
    resource = st.fixed_dictionaries(
        {
            "uri": st.sampled_from(
                [
                    "kestrel://catalog",
                    "kestrel://catalog/scenarios/acme-trend",
                    "kestrel://catalog/scenarios/acme-trend/tape",
                    "kestrel://catalog/scenarios/nope",
                    "kestrel://artifacts/sha256:" + "0" * 64,
                    "kestrel://artifacts/nope",
                    "file:///etc/passwd",
                ]
            )
            | st.text(max_size=20)
        }
    )
    complete = st.fixed_dictionaries(
        {
            "ref": json_values
            | st.just({"type": "ref/resource", "uri": "kestrel://catalog/scenarios/{id}"}),
            "argument": json_values | st.just({"name": "id", "value": "ac"}),
        }
    )
    init = st.fixed_dictionaries(
        {
            "protocolVersion": st.sampled_from(["2025-06-18", "2024-11-05", "1999-01-01"])
            | json_values,
            "capabilities": json_values,
            "clientInfo": json_values,
        }
    )
    params = st.one_of(
        tool_call, resource, complete, init, st.dictionaries(st.text(max_size=8), json_values)
    )
    params_with_meta = params.map(lambda p: {**p, "_meta": MODERN_META}) | params.map(
        lambda p: {**p, "_meta": {"io.modelcontextprotocol/protocolVersion": "bogus"}}
    )
    return st.builds(
        lambda i, m, p: (
            {"jsonrpc": "2.0", "id": i, "method": m} | ({} if p is None else {"params": p})
        ),
        rid,
        st.sampled_from(METHODS) | st.text(max_size=16),
        st.none() | params | params_with_meta,
    )


def notifications() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda m, p: {"jsonrpc": "2.0", "method": m, **({} if p is None else {"params": p})},
        st.sampled_from(NOTIFICATIONS) | st.text(max_size=16),
        st.none() | st.fixed_dictionaries({"requestId": json_values}) | json_values,
    )


def frames(
    known_sessions: list[str], tools: tuple[Tool, ...] = STDIO_TOOLS
) -> st.SearchStrategy[tuple[str, Any, bytes]]:
    """``(kind, decoded message or None, raw frame bytes)``; exact calls of ``tools``."""

    def encode(kind: str) -> Any:
        return lambda m: (kind, m, json.dumps(m).encode())

    broken = st.builds(
        lambda m, cut: ("broken", None, json.dumps(m).encode()[: max(1, cut)]),
        requests(known_sessions),
        st.integers(min_value=1, max_value=40),
    )
    return st.one_of(
        requests(known_sessions).map(encode("request")),
        exact_tool_calls(known_sessions, tools).map(encode("request")),
        exact_tool_calls(known_sessions, tools).map(encode("request")),
        notifications().map(encode("notification")),
        json_values.map(encode("value")),
        broken,
        st.binary(max_size=40).map(lambda b: ("bytes", None, b)),
        st.sampled_from(
            [
                b"NaN",
                b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}',
                b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
                b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
                b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
                b'{"jsonrpc":"1.0","id":1,"method":"ping"}',
                b"[]",
                b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
                b"[" * 5000 + b"]" * 5000,
                b'{"a":' * 3000 + b"1" + b"}" * 3000,
                b"\xff\xfe\x00",
                b'"\\ud800"',
                b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":'
                b'"kestrel_validate","arguments":{"source":"buy 1 ACME\\ud800"}}}',
            ]
        ).map(lambda b: ("fixed", None, b)),
    )
