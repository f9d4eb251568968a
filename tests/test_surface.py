"""One surface: every face is generated from ``kestrel_protocol.surface`` and nothing else.

* each tool name appears in exactly one non-test source file (its declaration);
* deleting a tool from the surface removes it from every face with no other edit:
  stdio ``tools/list``/``tools/call``, the door's ``/mcp`` in both eras, its ``/v1``
  route and OpenAPI path, the scope table, and the resources that project it;
* the declarations say what hosts rely on (honest hints, strict argument models);
* adding a tool (its arguments model, its ``Tool`` and its runtime method) serves it on
  every face, the SDK over both transports included, with no other edit; no source
  outside the registry spells a ``/v1`` route; the SDK's typed methods match the tools
  (those not written by hand are generated, and the generated module is current);
* every runtime method takes its tool's arguments by keyword (a field renamed or
  reordered is caught from the declaration, and a reordered one still binds right).
"""

from __future__ import annotations

import inspect
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_door import AuditLog, DoorConfig, DoorStore, IssuedTokens, create_door_app
from kestrel_mcp import create_kestrel_mcp_server
from kestrel_mcp.secrets import SecretTools, secret_tools
from kestrel_protocol import Clock, History
from kestrel_protocol.surface import (
    FEED_BARS_PATH,
    FEED_FREEZE_PATH,
    FEED_PATH,
    SURFACE,
    TRIALS_PATH,
    Arguments,
    Binding,
    Id,
    Route,
    Surface,
    Text,
    Tool,
    signature_problems,
)
from kestrel_sdk import KestrelSdk, KestrelSession, create_sdk, local_transport, remote_transport
from kestrel_sdk.generate import TOOL_METHODS, tool_methods_source
from kestrel_sdk.runtime import Runtime
from pydantic import Field

from tests.every_face import sample_call

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "packages").glob("*/src/**/*.py"))
ALL_TOOLS = [t.name for t in SURFACE.tools] + [t.name for t in secret_tools(SecretTools())]
BASE = "http://127.0.0.1:8787"
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.mark.parametrize("name", ALL_TOOLS)
def test_each_tool_name_is_in_exactly_one_source_file(name: str) -> None:
    word = re.compile(rf"\b{re.escape(name)}\b")
    holders = [p.relative_to(ROOT) for p in SOURCES if word.search(p.read_text("utf-8"))]
    assert len(holders) == 1, holders


def test_every_argument_model_refuses_unknown_arguments_and_hints_are_honest() -> None:
    for tool in SURFACE.tools:
        schema = tool.listing["inputSchema"]
        assert schema["additionalProperties"] is False, tool.name
        assert tool.arguments.model_config.get("extra") == "forbid", tool.name
    grade = SURFACE.tool("kestrel_grade")
    assert grade.listing["annotations"]["destructiveHint"] is True
    assert SURFACE.tool("kestrel.session.open") is SURFACE.tool("kestrel_session_open")


def _rpc(method: str, params: dict[str, Any], rid: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


async def _stdio(surface: Surface, home: Path) -> dict[str, Any]:
    transport = local_transport(home=home / "stdio", principal="alice")
    server = create_kestrel_mcp_server(transport, secrets=False, surface=surface)
    try:
        listed = await server.handle(_rpc("tools/list", {}))
        called = await server.handle(
            _rpc("tools/call", {"name": "kestrel_session_blotter", "arguments": {"sessionId": "x"}})
        )
        templates = await server.handle(_rpc("resources/templates/list", {}))
        read = await server.handle(
            _rpc("resources/read", {"uri": "kestrel://catalog/scenarios/acme-trend"})
        )
    finally:
        await transport.aclose()
    assert listed is not None
    assert called is not None
    assert templates is not None
    assert read is not None
    return {
        "tools": [t["name"] for t in listed["result"]["tools"]],
        "call": called.get("error", {}).get("code"),
        "templates": [t["uriTemplate"] for t in templates["result"]["resourceTemplates"]],
        "read": read.get("error", {}).get("code", 0),
    }


async def _door(surface: Surface, home: Path) -> dict[str, Any]:
    owner: Any = local_transport(home=home / "door")
    store = DoorStore(home / "door.db")
    _, token = IssuedTokens(store).issue(
        "alice", ["kestrel:read", "kestrel:trade", "kestrel:grade"]
    )
    app = create_door_app(
        DoorConfig(base_url=BASE),
        transport_for=lambda p: local_transport(principal=p, runtime=owner.runtime),
        grant_verifiers=[IssuedTokens(store)],
        audit=AuditLog(store),
        surface=surface,
    )
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    modern = {**headers, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url=BASE, headers=headers
        ) as client:
            legacy = (await client.post("/mcp", json=_rpc("tools/list", {}))).json()
            new = (
                await client.post(
                    "/mcp", json=_rpc("tools/list", {"_meta": MODERN}), headers=modern
                )
            ).json()
            called = (
                await client.post(
                    "/mcp",
                    json=_rpc(
                        "tools/call",
                        {"name": "kestrel_session_blotter", "arguments": {"sessionId": "x"}},
                    ),
                )
            ).json()
            route = await client.get("/v1/sessions/x/blotter")
            document = (await client.get("/v1/openapi.json")).json()
            templates = (
                await client.post("/mcp", json=_rpc("resources/templates/list", {}))
            ).json()
    finally:
        await owner.aclose()
        store.close()
    return {
        "tools": [t["name"] for t in legacy["result"]["tools"]],
        "modern": [t["name"] for t in new["result"]["tools"]],
        "call": called.get("error", {}).get("code"),
        "route": (route.status_code, _refusal_code(route)),
        "paths": set(document["paths"]),
        "templates": [t["uriTemplate"] for t in templates["result"]["resourceTemplates"]],
    }


def _refusal_code(response: httpx.Response) -> str | None:
    try:
        return str(response.json()["refusal"]["code"])
    except ValueError:
        return None


@pytest.mark.anyio
async def test_deleting_a_tool_from_the_surface_removes_it_from_every_face(tmp_path: Path) -> None:
    full_stdio = await _stdio(SURFACE, tmp_path / "a")
    full_door = await _door(SURFACE, tmp_path / "a")
    assert "kestrel_session_blotter" in full_stdio["tools"]
    assert full_stdio["call"] is None  # served (a refusal result, not an error)
    assert "kestrel_session_blotter" in full_door["tools"]
    assert "kestrel_session_blotter" in full_door["modern"]
    assert full_door["route"] == (404, "UNKNOWN_SESSION")  # served: the session is unknown
    assert "/v1/sessions/{id}/blotter" in full_door["paths"]
    assert "kestrel://catalog/scenarios/{id}" in full_door["templates"]

    smaller = SURFACE.without("kestrel_session_blotter", "kestrel_scenario")
    assert "kestrel_session_blotter" not in smaller.scopes()
    stdio = await _stdio(smaller, tmp_path / "b")
    door = await _door(smaller, tmp_path / "b")
    for listed in (stdio["tools"], door["tools"], door["modern"]):
        assert "kestrel_session_blotter" not in listed
        assert "kestrel_session_frame" in listed
    assert stdio["call"] == door["call"] == -32602
    assert door["route"] == (404, "INVALID_ARGUMENT")  # no such route any more (refused)
    assert "/v1/sessions/{id}/blotter" not in door["paths"]
    assert "/v1/catalog/scenarios/{sid}" not in door["paths"]
    assert "/v1/sessions/{id}/frame" in door["paths"]
    # the resource that projects the deleted tool went with it
    for templates in (stdio["templates"], door["templates"]):
        assert "kestrel://catalog/scenarios/{id}" not in templates
        assert "kestrel://catalog/scenarios/{id}/tape" in templates
    assert full_stdio["read"] == 0
    assert stdio["read"] == -32002


def test_no_source_outside_the_registry_names_a_v1_route() -> None:
    """Every ``/v1/...`` path a package's source spells is the registry's, but the door's
    own OpenAPI document (``/v1/openapi.json``), the evaluator's trials route (no tool:
    ``TRIALS_PATH``, said once in ``surface/trials.py``) and the operator's feed routes
    (no tool: said once in ``surface/feeds.py``): the transports build theirs from a
    Route."""
    registry = ROOT / "packages/kestrel-protocol/src/kestrel_protocol/surface/registry.py"
    spelled = re.compile(r"/v1/[A-Za-z{][^\s\"'`]*")
    not_tools = {"/v1/openapi.json", TRIALS_PATH, TRIALS_PATH + "/{tokenId}"}
    not_tools |= {FEED_PATH, FEED_BARS_PATH, FEED_FREEZE_PATH}
    found = {
        (str(p.relative_to(ROOT)), m.group())
        for p in SOURCES
        if p != registry
        for m in spelled.finditer(p.read_text("utf-8"))
        if m.group() not in not_tools
    }
    assert found == set()
    served = {t.route.path for t in SURFACE.tools if t.route is not None}
    assert served <= set(spelled.findall(registry.read_text("utf-8")))


# The SDK's typed methods name some arguments as a Python caller knows them.
_SDK_SPELLING = {"scenario_id": "scenario", "resumption": "token"}


def test_the_sdk_has_a_typed_method_for_every_tool_taking_its_arguments() -> None:
    """``KestrelSdk`` (or, for a session's tools, ``KestrelSession``) has a method named
    after each tool's runtime method whose parameters are that tool's arguments."""
    for tool in SURFACE.tools:
        assert tool.runs is not None, tool.name
        fields = set(tool.arguments.model_fields)
        method = getattr(KestrelSdk, tool.runs.method, None)
        given: set[str] = set()
        if method is None:
            method = getattr(KestrelSession, tool.runs.method, None)
            given = {"session_id"}  # the session is the handle's own
        assert method is not None, f"no typed SDK method for {tool.name}"
        parameters = list(inspect.signature(method).parameters)[1:]
        assert {_SDK_SPELLING.get(p, p) for p in parameters} | given == fields, tool.name


def test_every_tool_is_called_from_its_fields_examples() -> None:
    """Each required argument that a string or a number carries has an example, and the
    examples make valid arguments: tests that call every tool take their calls from them
    (``sample_call``), so a tool added to the surface needs no test edit."""
    for tool in SURFACE.tools:
        if any(f.annotation not in (str, int, float, bool) for _, f in _required(tool)):
            continue  # an object argument (a grade to verify): the tests that call it have one
        call = sample_call(tool, {})
        keywords = tool.parse(call).keywords()  # an invalid example: ArgumentError
        assert list(keywords) == list(tool.arguments.model_fields), tool.name
    assert sample_call(SURFACE.tool("kestrel_session_history"), {"sessionId": "ks_x"}) == {
        "sessionId": "ks_x",
        "bars": 20,
    }


def _required(tool: Tool) -> list[tuple[str, Any]]:
    return [(n, f) for n, f in tool.arguments.model_fields.items() if f.is_required()]


def test_the_generated_typed_methods_are_current() -> None:
    """``python -m kestrel_sdk.generate`` was run since the surface last changed."""
    assert TOOL_METHODS.read_text("utf-8") == tool_methods_source(), (
        "stale: run `uv run python -m kestrel_sdk.generate`"
    )


def test_every_runtime_method_takes_its_tools_arguments_by_keyword(tmp_path: Path) -> None:
    """Each tool's runtime method has a keyword parameter for every argument (its Python
    name), ``principal`` or ``reader`` as its binding names the caller, no required
    parameter nothing fills, and the tool's order."""
    runtime = Runtime(tmp_path / "home")
    try:
        problems = [
            problem
            for tool in SURFACE.tools
            if tool.runs is not None
            for problem in signature_problems(tool, getattr(runtime, tool.runs.method))
        ]
    finally:
        runtime.shutdown()
    assert problems == []


class ReorderedHistoryArgs(Arguments):
    """``HistoryArgs`` with ``symbol`` planted before ``bars``."""

    session_id: Text = Field(description="The sessionId the session open returned.")
    symbol: Text | None = Field(default=None, description="One symbol, or every one.")
    bars: int = Field(ge=1, le=1000, description="How many bars.")


class RenamedHistoryArgs(Arguments):
    """``HistoryArgs`` with ``session_id`` planted as ``session``."""

    session: Text = Field(description="The sessionId the session open returned.")
    bars: int = Field(ge=1, le=1000, description="How many bars.")
    symbol: Text | None = Field(default=None, description="One symbol, or every one.")


def _planted(arguments: type[Arguments]) -> Tool:
    history = SURFACE.tool("kestrel_session_history")
    return replace(history, name="kestrel_planted_history", arguments=arguments, route=None)


@pytest.mark.anyio
async def test_a_planted_field_fails_the_signature_check_and_a_reordered_one_binds_right(
    tmp_path: Path,
) -> None:
    """A field reordered or renamed against ``Runtime.history`` is named by the check;
    called anyway, the reordered tool still passes each value to its own parameter (by
    position it would pass the symbol as the bar count)."""
    runtime = Runtime(tmp_path / "home")
    reordered, renamed = _planted(ReorderedHistoryArgs), _planted(RenamedHistoryArgs)
    try:
        moved = signature_problems(reordered, runtime.history)
        assert len(moved) == 1, moved
        assert "kestrel_planted_history" in moved[0]
        assert "'symbol' is out of order" in moved[0]
        lost = signature_problems(renamed, runtime.history)
        assert len(lost) == 2, lost
        assert all("kestrel_planted_history" in p for p in lost)
        assert "takes no keyword 'session' for argument 'session'" in lost[0]
        assert "parameter 'session_id' is required but no argument fills it" in lost[1]
        sdk = create_sdk(local_transport(runtime=runtime), SURFACE.plus([reordered]))
        opened = (await sdk.open_session("acme-trend")).session
        assert opened is not None
        await opened.submit("advance 4\n")
        found = await sdk.call(reordered.name, session_id=opened.id, symbol="ACME", bars=2)
        assert isinstance(found, History)
        assert found == await opened.history(2, "ACME")
        assert [bar.symbol for bar in found.bars] == ["ACME", "ACME"]
    finally:
        runtime.shutdown()


def _worked_example() -> tuple[list[str], str]:
    """CONTRIBUTING.md's worked example: its Python blocks and its ``git status`` block."""
    text = (ROOT / "CONTRIBUTING.md").read_text("utf-8")
    section = text[text.index("### A worked example") : text.index("## Adding an order form")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    console = re.findall(r"```console\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 3, blocks
    assert len(console) == 1, console
    return blocks, console[0]


def _compiled(source: str, mode: str) -> Any:
    """``source`` compiled as the reader's own module would be (annotations evaluated)."""
    return compile(source, "CONTRIBUTING.md", mode, dont_inherit=True)


def _example_tool() -> tuple[Tool, type[Runtime]]:
    """The worked example's arguments model, ``Tool`` and runtime method, taken from
    CONTRIBUTING.md verbatim (its method on a subclass of the runtime)."""
    arguments_block, tool_block, method_block = _worked_example()[0]
    names: dict[str, Any] = {"Arguments": Arguments, "Id": Id, "Text": Text, "Field": Field}
    exec(_compiled(arguments_block, "exec"), names)
    names |= {"Tool": Tool, "Binding": Binding, "Route": Route, "Clock": Clock}
    names["SCOPE_READ"] = "kestrel:read"
    (tool,) = eval(_compiled(tool_block, "eval"), names)
    body = "".join(f"    {line}\n" if line.strip() else "\n" for line in method_block.splitlines())
    names["Runtime"] = Runtime
    exec(_compiled(f"class ExampleRuntime(Runtime):\n{body}", "exec"), names)
    return tool, names["ExampleRuntime"]


CLOCK_TOOL, ClockRuntime = _example_tool()


def test_the_contributing_example_is_three_files_and_the_regenerated_one(tmp_path: Path) -> None:
    """Followed literally, the example touches the three files its blocks name and the
    generated typed methods; its method takes its tool's arguments; regenerating gives
    the session handle a typed ``clock``."""
    blocks, console = _worked_example()
    named = [block.splitlines()[0].removeprefix("# ") for block in blocks]
    status = [line.split()[-1] for line in console.splitlines() if line.startswith(" M ")]
    generated = str(TOOL_METHODS.relative_to(ROOT))
    assert status == [*named, generated]
    assert all((ROOT / path).is_file() for path in status)
    assert CLOCK_TOOL.runs is not None
    runtime = ClockRuntime(tmp_path / "home")
    try:
        assert signature_problems(CLOCK_TOOL, getattr(runtime, CLOCK_TOOL.runs.method)) == []
    finally:
        runtime.shutdown()
    source = tool_methods_source(SURFACE.without(CLOCK_TOOL.name).plus([CLOCK_TOOL]))
    assert "    async def clock(self) -> Clock:" in source


@pytest.mark.anyio
async def test_a_tool_added_in_a_test_is_served_by_every_face_with_no_other_edit(
    tmp_path: Path,
) -> None:
    """CONTRIBUTING.md's example: an arguments model, a ``Tool`` and a runtime method,
    nothing else (the typed SDK method aside). The tool is then
    listed and called on stdio MCP, the door's ``/mcp`` in both eras, ``/v1`` and its
    OpenAPI document, and the SDK over a local and a remote transport, each answering
    the same clock for the same session."""
    surface = SURFACE.without(CLOCK_TOOL.name).plus([CLOCK_TOOL])  # once added, as itself
    runtime = ClockRuntime(tmp_path / "home")
    alice = create_sdk(local_transport(principal="alice", runtime=runtime), surface)
    opened = (await alice.open_session("acme-trend", "clocked")).session
    assert opened is not None
    expected = (await opened.submit("advance 3\n")).delivery.frame.clock.to_json()
    assert expected["bar"] == 3
    answers: dict[str, Any] = {}

    server = create_kestrel_mcp_server(alice.transport, secrets=False, surface=surface)
    listed = await server.handle(_rpc("tools/list", {}))
    assert listed is not None
    assert CLOCK_TOOL.name in [t["name"] for t in listed["result"]["tools"]]
    called = await server.handle(
        _rpc("tools/call", {"name": CLOCK_TOOL.name, "arguments": {"sessionId": opened.id}})
    )
    assert called is not None
    answers["stdio"] = called["result"]["structuredContent"]

    store = DoorStore(tmp_path / "door.db")
    _, token = IssuedTokens(store).issue("alice", ["kestrel:read", "kestrel:trade"])
    app = create_door_app(
        DoorConfig(base_url=BASE),
        transport_for=lambda p: local_transport(principal=p, runtime=runtime),
        grant_verifiers=[IssuedTokens(store)],
        audit=AuditLog(store),
        surface=surface,
    )
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    arguments = {"name": CLOCK_TOOL.name, "arguments": {"sessionId": opened.id}}
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url=BASE, headers=headers
        ) as client:
            for era, meta, extra in (
                ("door /mcp 2025-11-25", {}, {}),
                ("door /mcp 2026-07-28", {"_meta": MODERN}, {"MCP-Protocol-Version": "2026-07-28"}),
            ):
                tools = await client.post(
                    "/mcp",
                    json=_rpc("tools/list", dict(meta)),
                    headers={**extra, "Mcp-Method": "tools/list"} if extra else {},
                )
                assert CLOCK_TOOL.name in [t["name"] for t in tools.json()["result"]["tools"]]
                result = await client.post(
                    "/mcp",
                    json=_rpc("tools/call", {**arguments, **meta}),
                    headers={**extra, "Mcp-Method": "tools/call", "Mcp-Name": CLOCK_TOOL.name}
                    if extra
                    else {},
                )
                answers[era] = result.json()["result"]["structuredContent"]
            route = await client.get(f"/v1/sessions/{opened.id}/clock")
            assert route.status_code == 200
            answers["door /v1"] = route.json()
            document = (await client.get("/v1/openapi.json")).json()
            assert "get" in document["paths"]["/v1/sessions/{id}/clock"]
            remote = create_sdk(remote_transport(BASE, token, client=client), surface)
            answers["sdk remote"] = (
                await remote.call(CLOCK_TOOL.name, session_id=opened.id)
            ).to_json()
        answers["sdk local"] = (await alice.call(CLOCK_TOOL.name, session_id=opened.id)).to_json()
    finally:
        await alice.aclose()
        store.close()
    assert answers == dict.fromkeys(answers, expected)
    assert len(answers) == 6
