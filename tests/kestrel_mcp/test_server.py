"""The dispatcher: both eras, tools, lossless projection, failure taxonomy, resources."""

from __future__ import annotations

import json
import re
from types import ModuleType
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from kestrel_mcp import KestrelMcpServer, create_kestrel_mcp_server
from kestrel_mcp.secrets import SecretTools, secret_tools
from kestrel_protocol import ORDER_FORMS, ProtocolModel, SessionResponse, canonical_json, root_of
from kestrel_protocol.surface import SURFACE, RpcError, compact_text

pytestmark = pytest.mark.anyio

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
}


def make(acme: ModuleType, **kwargs: Any) -> KestrelMcpServer:
    return make_scripted(acme, **kwargs)[0]


def make_scripted(acme: ModuleType, **kwargs: Any) -> tuple[KestrelMcpServer, Any]:
    """The server over a scripted transport, and the script it runs (to compare with)."""
    transport_args = {k: kwargs.pop(k) for k in ("newer", "grade_steps", "gate") if k in kwargs}
    transport, script = acme.scripted(**transport_args)
    server = create_kestrel_mcp_server(transport, secret_store=acme.MemorySecretStore, **kwargs)
    return server, script


async def rpc(
    server: KestrelMcpServer,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    modern: bool = False,
) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None or modern:
        message["params"] = dict(params or {})
    if modern:
        message["params"]["_meta"] = MODERN_META
    response = await server.handle(message)
    assert response is not None
    assert response["id"] == 7
    return response


async def call(
    server: KestrelMcpServer, name: str, modern: bool = False, **arguments: Any
) -> dict[str, Any]:
    response = await rpc(
        server, "tools/call", {"name": name, "arguments": arguments}, modern=modern
    )
    assert "result" in response, response
    result: dict[str, Any] = response["result"]
    return result


# ------------------------------------------------------------------ legacy era


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_initialize_echoes_a_supported_version(acme: ModuleType, version: str) -> None:
    server = make(acme)
    response = await rpc(
        server,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    )
    result = response["result"]
    assert result["protocolVersion"] == version
    assert result["serverInfo"]["name"] == "kestrel"
    assert set(result["capabilities"]) >= {"tools", "resources", "completions"}
    assert "resultType" not in result


async def test_initialize_offers_the_latest_for_an_unknown_version(acme: ModuleType) -> None:
    response = await rpc(
        make(acme), "initialize", {"protocolVersion": "1999-01-01", "capabilities": {}}
    )
    assert response["result"]["protocolVersion"] == "2025-11-25"


async def test_instructions_teach_the_four_statements_and_the_workflow(acme: ModuleType) -> None:
    result = (await rpc(make(acme), "initialize", {"protocolVersion": "2025-11-25"}))["result"]
    text = result["instructions"]
    for needle in (
        "buy|sell",
        "cancel",
        "advance",
        "stand down",
        "kestrel_session_open",
        "kestrel_grade",
    ):
        assert needle in text
    # a few lines, and one more for each order form (kestrel_protocol.ORDER_FORMS)
    assert len(text.splitlines()) <= 12 + len(ORDER_FORMS)


async def test_ping_answers_empty(acme: ModuleType) -> None:
    assert (await rpc(make(acme), "ping"))["result"] == {}


# ------------------------------------------------------------------ modern era


async def test_discover_lists_versions_capabilities_and_cache_hints(acme: ModuleType) -> None:
    result = (await rpc(make(acme), "server/discover", modern=True))["result"]
    assert result["supportedVersions"][0] == "2026-07-28"
    assert "2025-11-25" in result["supportedVersions"]
    assert result["resultType"] == "complete"
    assert result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "kestrel"
    assert "kestrel_session_submit" in result["instructions"]


async def test_discover_without_an_envelope_is_invalid_params(acme: ModuleType) -> None:
    assert (await rpc(make(acme), "server/discover"))["error"]["code"] == -32602


async def test_modern_unsupported_version_is_32022_naming_supported(acme: ModuleType) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/list",
        "params": {
            "_meta": {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
        },
    }
    response = await make(acme).handle(message)
    assert response is not None
    error = response["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "2099-01-01"
    assert "2026-07-28" in error["data"]["supported"]


async def test_modern_request_without_capabilities_is_invalid_params(acme: ModuleType) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    response = await make(acme).handle(
        {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": meta}}
    )
    assert response is not None
    assert response["error"]["code"] == -32602


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "logging/setLevel", "resources/subscribe"]
)
async def test_methods_removed_in_2026_are_unknown_on_modern_requests(
    acme: ModuleType, method: str
) -> None:
    assert (await rpc(make(acme), method, modern=True))["error"]["code"] == -32601


async def test_modern_results_carry_result_type_and_cache_hints(acme: ModuleType) -> None:
    server = make(acme)
    listed = (await rpc(server, "tools/list", modern=True))["result"]
    assert listed["resultType"] == "complete"
    assert listed["cacheScope"] == "public"
    assert isinstance(listed["ttlMs"], int)
    called = await call(server, "kestrel_catalog", modern=True)
    assert called["resultType"] == "complete"
    assert "ttlMs" not in called  # tools/call is not cacheable
    legacy = (await rpc(server, "tools/list"))["result"]
    assert "resultType" not in legacy
    assert "ttlMs" not in legacy


# ------------------------------------------------------------------ tools/list


async def test_tools_list_names_are_claude_safe_and_complete(acme: ModuleType) -> None:
    tools = (await rpc(make(acme), "tools/list"))["result"]["tools"]
    names = [tool["name"] for tool in tools]
    # the surface's listed tools in declaration order, then the face's own (secrets)
    declared = [t.name for t in SURFACE.plus(secret_tools(SecretTools())).listed]
    assert names == declared
    assert "kestrel_tape" not in names  # an unlisted tool serves /v1 and resources only
    assert names[-3:] == ["kestrel_secrets_set", "kestrel_secrets_unset", "kestrel_secrets_list"]
    for tool in tools:
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", tool["name"])
        assert tool["inputSchema"]["type"] == "object"
        assert tool["outputSchema"]["type"] == "object"
        assert "$ref" not in json.dumps(tool["inputSchema"]) + json.dumps(tool["outputSchema"])
        Draft202012Validator.check_schema(tool["inputSchema"])
        Draft202012Validator.check_schema(tool["outputSchema"])
        assert tool["description"]


async def test_tool_annotations_are_honest(acme: ModuleType) -> None:
    tools = {
        t["name"]: t["annotations"]
        for t in (await rpc(make(acme), "tools/list"))["result"]["tools"]
    }
    for read_only in (
        "kestrel_catalog",
        "kestrel_validate",
        "kestrel_session_frame",
        "kestrel_session_history",
        "kestrel_session_list",
        "kestrel_session_blotter",
        "kestrel_secrets_list",
    ):
        assert tools[read_only]["readOnlyHint"] is True
    for writer in (
        "kestrel_session_open",
        "kestrel_session_submit",
        "kestrel_session_close",
        "kestrel_secrets_set",
    ):
        assert tools[writer]["readOnlyHint"] is False
        assert "destructiveHint" in tools[writer]
        assert "idempotentHint" in tools[writer]
    assert tools["kestrel_session_submit"]["idempotentHint"] is False
    assert tools["kestrel_session_close"]["destructiveHint"] is True
    assert tools["kestrel_secrets_set"]["destructiveHint"] is True
    # a proof grades (so closes) a session not graded yet; asking again gives the same proof
    assert tools["kestrel_proof"]["readOnlyHint"] is False
    assert tools["kestrel_proof"]["destructiveHint"] is True
    assert tools["kestrel_proof"]["idempotentHint"] is True


async def test_tools_list_paginates_deterministically(acme: ModuleType) -> None:
    server = make(acme, page_size=5)
    names: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        params = {"cursor": cursor} if cursor is not None else None
        result = (await rpc(server, "tools/list", params))["result"]
        names += [tool["name"] for tool in result["tools"]]
        pages += 1
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    listed = [tool.name for tool in server.surface.listed]
    assert pages == -(-len(listed) // 5)
    assert sorted(names) == sorted(listed)
    assert len(set(names)) == len(names)
    full = (await rpc(make(acme), "tools/list"))["result"]["tools"]
    assert names == [tool["name"] for tool in full]
    bad = await rpc(server, "tools/list", {"cursor": "garbage"})
    assert bad["error"]["code"] == -32602


async def test_secret_tools_can_be_left_out_for_remote_faces(acme: ModuleType) -> None:
    server = make(acme, secrets=False)
    names = [t["name"] for t in (await rpc(server, "tools/list"))["result"]["tools"]]
    assert not any("secrets" in name for name in names)
    assert (await rpc(server, "tools/call", {"name": "kestrel_secrets_list"}))["error"][
        "code"
    ] == -32602


# ------------------------------------------------------------------ lossless projection


def assert_lossless(result: dict[str, Any], obj: Any) -> None:
    expected = obj.to_json() if hasattr(obj, "to_json") else obj
    structured = result["structuredContent"]
    assert structured == expected
    assert canonical_json(structured) == canonical_json(expected)
    assert len(result["content"]) == 1
    assert result["content"][0]["type"] == "text"
    # the text a model reads: a session step's compact rendering, or else the JSON
    compact = compact_text(obj, expected) if isinstance(obj, ProtocolModel) else None
    if compact is not None:
        assert result["content"][0]["text"] == compact
        assert "sha256:" not in compact.replace(str(expected.get("root")), "")
    else:
        assert json.loads(result["content"][0]["text"]) == expected
        assert canonical_json(json.loads(result["content"][0]["text"])) == canonical_json(expected)
    if "root" in expected:
        assert root_of(structured) == expected["root"]


@pytest.mark.parametrize("newer", [False, True])
async def test_every_tool_returns_the_sdk_object_verbatim(acme: ModuleType, newer: bool) -> None:
    server, script = make_scripted(acme, newer=newer)
    assert_lossless(await call(server, "kestrel_catalog"), await script.catalog())
    assert_lossless(
        await call(server, "kestrel_validate", source="buy 1 ACME", scenario="acme-trend"),
        await script.validate("buy 1 ACME", "acme-trend"),
    )
    opened = await call(server, "kestrel_session_open", scenario="acme-trend")
    assert opened["structuredContent"] == {"gated": False, "sessionId": "ks_fake1"}
    submitted = await call(
        server, "kestrel_session_submit", sessionId="ks_fake1", source="buy 1 ACME"
    )
    frame = await script.frame("local", "ks_fake1")
    assert submitted["structuredContent"]["delivery"] == frame.to_json()
    response = SessionResponse.parse(submitted["structuredContent"])  # it is the protocol object
    assert response.pentad.root == root_of(submitted["structuredContent"]["pentad"])
    assert_lossless(submitted, response)
    assert_lossless(await call(server, "kestrel_session_frame", sessionId="ks_fake1"), frame)
    assert_lossless(
        await call(server, "kestrel_session_blotter", sessionId="ks_fake1"),
        await script.blotter("local", "ks_fake1"),
    )
    closed = await call(server, "kestrel_session_close", sessionId="ks_fake1")
    assert_lossless(closed, script.sessions["ks_fake1"]["record"])
    graded = await call(server, "kestrel_grade", sessionId="ks_fake1")
    assert_lossless(graded, script._grade("ks_fake1"))
    if newer:
        for result in (opened, submitted, closed, graded):
            text = result["content"][0]["text"]  # compact: what a model acts on
            assert "futureMember" not in text
            assert ("futureMember" in result["structuredContent"]) == (result is not opened)
        assert submitted["structuredContent"]["futureMember"] == acme.EXTRA["futureMember"]
        assert submitted["structuredContent"]["delivery"]["frame"]["zFlag"] == "ü✓"


async def test_dotted_seed_names_are_accepted_as_unlisted_aliases(acme: ModuleType) -> None:
    server = make(acme)
    dotted = await call(server, "kestrel.session.open", scenario="acme-trend", label="a")
    assert dotted["structuredContent"] == {"gated": False, "sessionId": "ks_fakea"}
    names = [t["name"] for t in (await rpc(server, "tools/list"))["result"]["tools"]]
    assert "kestrel.session.open" not in names


async def test_gated_open_is_continuation_data_not_an_error(acme: ModuleType) -> None:
    server = make(acme, gate=True)
    gated = await call(server, "kestrel_session_open", scenario="acme-trend")
    assert gated["isError"] is False
    offer = gated["structuredContent"]["payment"]
    assert gated["structuredContent"]["gated"] is True
    assert offer["kind"] == "kestrel.offer"
    assert root_of(offer) == offer["root"]
    paid = await call(
        server,
        "kestrel_session_open",
        scenario="acme-trend",
        payment={"offerId": offer["offerId"], "voucher": "good"},
    )
    assert paid["structuredContent"]["gated"] is False
    refused = await call(
        server,
        "kestrel_session_open",
        scenario="acme-trend",
        payment={"offerId": offer["offerId"], "voucher": "bad"},
    )
    assert refused["isError"] is True
    assert refused["structuredContent"]["refusal"]["code"] == "PAYMENT_INVALID"


async def test_long_grade_resumes_through_operation_tokens(acme: ModuleType) -> None:
    server = make(acme, grade_steps=2)
    await call(server, "kestrel_session_open", scenario="acme-trend")
    await call(server, "kestrel_session_close", sessionId="ks_fake1")
    first = (await call(server, "kestrel_grade", sessionId="ks_fake1"))["structuredContent"]
    assert first["kind"] == "kestrel.operation"
    second = (await call(server, "kestrel_operation_resume", token=first["token"]))[
        "structuredContent"
    ]
    assert second["kind"] == "kestrel.operation"
    assert second["progress"]["done"] == 1
    final = (await call(server, "kestrel_operation_resume", token=first["token"]))[
        "structuredContent"
    ]
    assert final["kind"] == "kestrel.grade"
    assert final["passed"] is True


# ------------------------------------------------------------------ failure taxonomy


async def test_malformed_frame_is_parse_error(acme: ModuleType) -> None:
    server = make(acme)
    for raw in ('{"jsonrpc": "2.0", "id": 1, "method": ', "not json", b"\xff\xfe", '{"a": NaN}'):
        response = await server.handle_frame(raw)
        assert response is not None
        assert response["error"]["code"] == -32700
        assert response["id"] is None


async def test_invalid_requests_are_32600(acme: ModuleType) -> None:
    server = make(acme)
    cases: list[Any] = [
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        {"jsonrpc": "1.0", "id": 3, "method": "ping"},
        {"jsonrpc": "2.0", "id": 4, "method": 5},
        "a string",
        {"jsonrpc": "2.0", "id": 5},
    ]
    for message in cases:
        response = await server.handle(message)
        assert response is not None, message
        assert response["error"]["code"] == -32600, message
    assert (await server.handle({"jsonrpc": "1.0", "id": 3, "method": "ping"}))["id"] == 3  # type: ignore[index]
    batch = await server.handle_frame('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
    assert batch is not None
    assert batch["error"]["code"] == -32600
    assert batch["id"] is None


async def test_unknown_method_is_32601(acme: ModuleType) -> None:
    response = await rpc(make(acme), "kestrel/teleport")
    assert response["error"]["code"] == -32601


async def test_unknown_tool_is_32602(acme: ModuleType) -> None:
    response = await rpc(make(acme), "tools/call", {"name": "kestrel_teleport", "arguments": {}})
    assert response["error"]["code"] == -32602
    assert "kestrel_teleport" in response["error"]["message"]


@pytest.mark.parametrize(
    "arguments",
    [
        {"sessionId": "ks_fake1"},
        {"sessionId": 5, "source": "advance"},
        {"session_id": "ks_fake1", "source": "advance"},
        {"sessionId": "ks_fake1", "source": "advance", "extra": 1},
        "not an object",
    ],
)
async def test_schema_invalid_arguments_are_32602(acme: ModuleType, arguments: Any) -> None:
    server = make(acme)
    response = await rpc(
        server, "tools/call", {"name": "kestrel_session_submit", "arguments": arguments}
    )
    assert response["error"]["code"] == -32602
    assert "kestrel_session_submit" in response["error"]["message"]


async def test_typed_refusal_is_an_error_result_with_its_code(acme: ModuleType) -> None:
    server = make(acme)
    await call(server, "kestrel_session_open", scenario="acme-trend")
    refused = await call(server, "kestrel_session_submit", sessionId="ks_fake1", source="bogus 1")
    assert refused["isError"] is True
    refusal = refused["structuredContent"]["refusal"]
    assert refusal["code"] == "INVALID_SOURCE"
    assert refusal["detail"]["diagnostics"][0]["code"] == "K100"
    assert json.loads(refused["content"][0]["text"]) == refused["structuredContent"]
    unknown = await call(server, "kestrel_session_frame", sessionId="ks_nope")
    assert unknown["structuredContent"]["refusal"]["code"] == "UNKNOWN_SESSION"


async def test_stand_down_is_an_ordinary_result(acme: ModuleType) -> None:
    server = make(acme)
    await call(server, "kestrel_session_open", scenario="acme-trend")
    stood = await call(server, "kestrel_session_submit", sessionId="ks_fake1", source="stand down")
    assert stood["isError"] is False
    assert stood["structuredContent"]["ok"] is True
    assert stood["structuredContent"]["disposition"] == "stood-down"
    again = await call(server, "kestrel_session_submit", sessionId="ks_fake1", source="advance")
    assert again["structuredContent"]["refusal"]["code"] == "SESSION_STOOD_DOWN"


async def test_unexpected_fault_is_32603_with_nothing_internal(
    acme: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    server = make(acme)
    await call(server, "kestrel_session_open", scenario="acme-trend")
    response = await rpc(
        server,
        "tools/call",
        {
            "name": "kestrel_session_submit",
            "arguments": {"sessionId": "ks_fake1", "source": "explode"},
        },
    )
    assert response["error"] == {"code": -32603, "message": "Internal error"}
    wire = json.dumps(response)
    assert "secret" not in wire
    assert "Traceback" not in wire
    assert "RuntimeError" not in wire
    assert "invariant broken" in caplog.text  # logged (to stderr), not sent


async def test_call_tool_api_raises_protocol_errors_and_returns_refusals(acme: ModuleType) -> None:
    server = make(acme)
    with pytest.raises(RpcError) as caught:
        await server.call_tool("nope", {})
    assert caught.value.code == -32602
    refused = await server.call_tool("kestrel_session_frame", {"sessionId": "ks_nope"})
    assert refused["isError"] is True


# ------------------------------------------------------------------ notifications


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}},
        {"jsonrpc": "2.0", "method": "notifications/unknown/thing", "params": {"x": 1}},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "kestrel_catalog"}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": "bad"},
    ],
)
async def test_notifications_never_get_a_response(
    acme: ModuleType, message: dict[str, Any]
) -> None:
    server = make(acme)
    assert await server.handle(message) is None
    assert await server.handle_frame(json.dumps(message)) is None


async def test_initialized_notification_is_recorded(acme: ModuleType) -> None:
    server = make(acme)
    await server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert server.session.initialized is True


async def test_responses_from_the_client_are_ignored(acme: ModuleType) -> None:
    assert await make(acme).handle({"jsonrpc": "2.0", "id": 4, "result": {}}) is None


# ------------------------------------------------------------------ resources and completion


async def test_resources_list_and_templates(acme: ModuleType) -> None:
    server = make(acme)
    uris = [r["uri"] for r in (await rpc(server, "resources/list"))["result"]["resources"]]
    assert uris[0] == "kestrel://catalog"
    assert "kestrel://catalog/scenarios/acme-trend" in uris
    assert "kestrel://catalog/scenarios/acme-trend/tape" in uris
    templates = (await rpc(server, "resources/templates/list"))["result"]["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == [
        "kestrel://catalog/scenarios/{id}",
        "kestrel://catalog/scenarios/{id}/tape",
        "kestrel://sessions/{id}/frame",
        "kestrel://sessions/{id}/news",
        "kestrel://artifacts/{root}",
        "kestrel://proofs/{gradeRoot}",
    ]


async def test_resource_reads_return_objects_verbatim(acme: ModuleType) -> None:
    server, script = make_scripted(acme, newer=True)

    async def read(uri: str) -> dict[str, Any]:
        contents = (await rpc(server, "resources/read", {"uri": uri}))["result"]["contents"]
        assert len(contents) == 1
        assert contents[0]["uri"] == uri
        content: dict[str, Any] = contents[0]
        return content

    catalog = await read("kestrel://catalog")
    assert catalog["mimeType"] == "application/json"
    assert canonical_json(json.loads(catalog["text"])) == canonical_json(await script.catalog())
    scenario = await read("kestrel://catalog/scenarios/acme-trend")
    assert json.loads(scenario["text"]) == script.scenario_obj.to_json()
    tape = await read("kestrel://catalog/scenarios/acme-trend/tape")
    assert tape["mimeType"] == "text/csv"
    assert tape["text"] == await script.tape("local", "acme-trend")
    await call(server, "kestrel_session_open", scenario="acme-trend")
    record = (await call(server, "kestrel_session_close", sessionId="ks_fake1"))[
        "structuredContent"
    ]
    artifact = await read("kestrel://artifacts/" + record["root"])
    assert canonical_json(json.loads(artifact["text"])) == canonical_json(record)


async def test_resource_not_found_follows_each_era(acme: ModuleType) -> None:
    server = make(acme)
    for uri in (
        "kestrel://catalog/scenarios/nope",
        "kestrel://artifacts/sha256:" + "a" * 64,
        "file:///etc/passwd",
    ):
        legacy = await rpc(server, "resources/read", {"uri": uri})
        assert legacy["error"]["code"] == -32002
        assert legacy["error"]["data"] == {"uri": uri}
        modern = await rpc(server, "resources/read", {"uri": uri}, modern=True)
        assert modern["error"]["code"] == -32602
        assert modern["error"]["data"] == {"uri": uri}


async def test_modern_resource_read_is_cacheable_private(acme: ModuleType) -> None:
    result = (await rpc(make(acme), "resources/read", {"uri": "kestrel://catalog"}, modern=True))[
        "result"
    ]
    assert result["cacheScope"] == "private"
    assert result["resultType"] == "complete"


async def test_completion_of_scenario_ids_and_artifact_roots(acme: ModuleType) -> None:
    server = make(acme)
    ref = {"type": "ref/resource", "uri": "kestrel://catalog/scenarios/{id}"}
    result = (
        await rpc(
            server,
            "completion/complete",
            {"ref": ref, "argument": {"name": "id", "value": "acme-c"}},
        )
    )["result"]
    assert result["completion"]["values"] == ["acme-chop", "acme-crash"]
    await call(server, "kestrel_session_open", scenario="acme-trend")
    record = (await call(server, "kestrel_session_close", sessionId="ks_fake1"))[
        "structuredContent"
    ]
    art = {"type": "ref/resource", "uri": "kestrel://artifacts/{root}"}
    prefix = record["root"].removeprefix("sha256:")[:6]
    found = (
        await rpc(
            server,
            "completion/complete",
            {"ref": art, "argument": {"name": "root", "value": prefix}},
        )
    )["result"]
    assert record["root"] in found["completion"]["values"]
    brief = {"type": "ref/prompt", "name": "kestrel_trade_scenario"}
    ids = await rpc(
        server,
        "completion/complete",
        {"ref": brief, "argument": {"name": "scenario", "value": "acme-c"}},
    )
    assert ids["result"]["completion"]["values"] == ["acme-chop", "acme-crash"]
    # an unknown prompt (the conformance suite asks about its own) completes to nothing
    unknown = await rpc(
        server,
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}},
    )
    assert unknown["result"]["completion"] == {"values": [], "total": 0, "hasMore": False}


# ------------------------------------------------------------------ secrets


async def test_secret_tools_never_return_a_value(acme: ModuleType) -> None:
    server = make(acme)
    stored = await call(server, "kestrel_secrets_set", key="BROKER_TOKEN", value="hunter2-canary")
    assert stored["structuredContent"] == {"key": "BROKER_TOKEN", "path": "/acme/.kestrel/.env"}
    listed = await call(server, "kestrel_secrets_list")
    assert listed["structuredContent"] == {"keys": ["BROKER_TOKEN"], "path": "/acme/.kestrel/.env"}
    removed = await call(server, "kestrel_secrets_unset", key="BROKER_TOKEN")
    assert removed["structuredContent"] == {
        "key": "BROKER_TOKEN",
        "path": "/acme/.kestrel/.env",
        "removed": True,
    }
    for result in (stored, listed, removed):
        assert "hunter2-canary" not in json.dumps(result)


@pytest.mark.parametrize(
    ("key", "code"), [("LIVE_TOKEN", "SECRET_KEY_LIVE"), ("lower", "SECRET_KEY_INVALID")]
)
async def test_secret_key_rules_are_the_single_sourced_ones(
    acme: ModuleType, key: str, code: str
) -> None:
    from kestrel_secrets import SecretStoreError, check_operator_secret_key

    with pytest.raises(SecretStoreError) as cli_side:
        check_operator_secret_key(key)
    refused = await call(make(acme), "kestrel_secrets_set", key=key, value="x")
    assert refused["isError"] is True
    assert refused["structuredContent"]["refusal"]["code"] == code == cli_side.value.code
    assert refused["structuredContent"]["refusal"]["message"] == cli_side.value.message


async def test_a_refusal_outside_tools_call_is_a_named_json_rpc_error(acme: ModuleType) -> None:
    server, script = make_scripted(acme)

    async def down() -> Any:
        raise acme.SdkLocalError("BACKEND_UNAVAILABLE", "the door is down", {"url": "http://x"})

    script.catalog = down
    response = await rpc(server, "resources/list")
    assert response["error"]["code"] == -32603
    assert response["error"]["data"]["refusal"]["code"] == "BACKEND_UNAVAILABLE"
    tool = await call(server, "kestrel_catalog")
    assert tool["isError"] is True
    assert tool["structuredContent"]["refusal"]["code"] == "BACKEND_UNAVAILABLE"


async def test_a_secret_value_never_appears_in_a_schema_error(
    acme: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    server = make(acme)
    for arguments in (
        {"key": 5, "value": "canary-secret-77"},
        {"key": "OK_KEY", "value": "canary-secret-77", "extra": "canary-secret-77x"},
        {"key": "bad key", "value": "canary-secret-77"},
    ):
        response = await rpc(
            server, "tools/call", {"name": "kestrel_secrets_set", "arguments": arguments}
        )
        assert "canary-secret-77" not in json.dumps(response)
    assert "canary-secret-77" not in caplog.text


async def test_handle_accepts_protocol_dataclasses(acme: ModuleType) -> None:
    from kestrel_protocol.jsonrpc import JsonRpcNotification, JsonRpcRequest

    server = make(acme)
    response = await server.handle(JsonRpcRequest(id=3, method="ping"))
    assert response == {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert await server.handle(JsonRpcNotification(method="notifications/initialized")) is None


async def test_remembered_roots_for_completion_are_bounded_newest_first(acme: ModuleType) -> None:
    server = make(acme)
    recall = server.session.methods.recall
    limit = recall.limit
    roots = [f"sha256:{index:064x}" for index in range(limit + 5)]
    recall.note({"pentads": roots})
    art = {"type": "ref/resource", "uri": "kestrel://artifacts/{root}"}
    found = (
        await rpc(
            server, "completion/complete", {"ref": art, "argument": {"name": "root", "value": ""}}
        )
    )["result"]
    completion = found["completion"]
    assert completion["total"] == limit
    assert completion["hasMore"] is True
    assert completion["values"][0] == roots[-1]
    assert roots[0] not in completion["values"]
    assert len(completion["values"]) == 100


async def test_a_plain_tool_call_is_answered_as_one_with_an_empty_meta(
    acme: ModuleType,
) -> None:
    """A plain ``tools/call`` (four members, no ``_meta``) and the same call with an empty
    ``_meta`` take the one path: results, refusals, protocol errors and the state they
    leave are the same."""
    calls = [
        ("kestrel_session_open", {"scenario": "acme-trend"}),
        ("kestrel_session_submit", {"sessionId": "ks_fake1", "source": "advance"}),
        ("kestrel.session.submit", {"sessionId": "ks_fake1", "source": "advance 2"}),  # alias
        ("kestrel_session_submit", {"sessionId": "ks_nobody", "source": "advance"}),
        ("kestrel_session_submit", {"sessionId": "ks_fake1"}),  # no source: -32602
        ("kestrel_no_such_tool", {}),  # -32602 too, by the general path on both
        ("kestrel_session_frame", {"sessionId": "ks_fake1"}),  # read-only: general on both
        ("kestrel_session_close", {"sessionId": "ks_fake1"}),
    ]
    answers: dict[str, list[Any]] = {}
    for how in ("plain", "general"):
        server = make(acme)
        answers[how] = []
        for number, (name, arguments) in enumerate(calls):
            params: dict[str, Any] = {"name": name, "arguments": arguments}
            if how == "general":
                params["_meta"] = {}
            message = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}
            answers[how].append(await server.handle(message))
        assert server.session._inflight == {}
    assert answers["plain"] == answers["general"]
    kinds = [
        "error" if "error" in a else ("refusal" if a["result"]["isError"] else "result")
        for a in answers["plain"]
    ]
    assert kinds == ["result", "result", "result", "refusal", "error", "error", "result", "result"]


async def test_cancelled_requests_are_marked_whatever_their_outcome(acme: ModuleType) -> None:
    server, script = make_scripted(acme)
    await call(server, "kestrel_session_open", scenario="acme-trend")

    async def submit(source: str, request_id: int) -> dict[str, Any] | None:
        params = {
            "name": "kestrel_session_submit",
            "arguments": {"sessionId": "ks_fake1", "source": source},
        }
        return await server.handle(
            {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        )

    async def cancel(request_id: int) -> None:
        await script.held()  # the submit is running
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id},
        }
        assert await server.handle(note) is None
        script.release()

    results: dict[str, Any] = {}

    async def run(name: str, source: str, request_id: int) -> None:
        results[name] = await submit(source, request_id)

    async with anyio.create_task_group() as group:
        group.start_soon(run, "slow", "slow", 11)
        group.start_soon(cancel, 11)
    assert results["slow"]["error"]["code"] == -32800  # the stdio loop drops it
    assert server.session._cancelled == set()
    assert server.session._inflight == {}
    # The submit was not torn: it ran to completion (mutating calls are not interrupted).
    frame = await call(server, "kestrel_session_frame", sessionId="ks_fake1")
    assert frame["structuredContent"]["frame"]["seq"] == 1


@pytest.mark.parametrize(
    "malformed",
    [
        {"jsonrpc": "1.0"},  # another version
        {},  # no version at all
        {"jsonrpc": "2.0", "extra": "ignored, not a reason to refuse"},  # control: taken
    ],
)
async def test_a_cancellation_is_acted_on_only_when_well_formed(
    acme: ModuleType, malformed: dict[str, Any]
) -> None:
    server, script = make_scripted(acme)
    await call(server, "kestrel_session_open", scenario="acme-trend")
    script.slow_reads = True
    taken = malformed.get("jsonrpc") == "2.0"
    results: dict[str, Any] = {}

    async def read() -> None:
        params = {"name": "kestrel_session_frame", "arguments": {"sessionId": "ks_fake1"}}
        results["frame"] = await server.handle(
            {"jsonrpc": "2.0", "id": "f", "method": "tools/call", "params": params}
        )

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(read)
            await script.held()
            note = {**malformed, "method": "notifications/cancelled", "params": {"requestId": "f"}}
            assert await server.handle(note) is None  # a notification: never answered
            if not taken:
                script.release()  # not cancelled: the read runs on once released
    if taken:
        assert results["frame"]["error"]["code"] == -32800
    else:
        assert results["frame"]["result"]["structuredContent"]["frame"]["seq"] == 0


async def test_a_cancelled_read_only_request_stops_at_once(acme: ModuleType) -> None:
    server, script = make_scripted(acme)
    await call(server, "kestrel_session_open", scenario="acme-trend")
    script.slow_reads = True
    results: dict[str, Any] = {}

    async def read() -> None:
        params = {"name": "kestrel_session_frame", "arguments": {"sessionId": "ks_fake1"}}
        results["frame"] = await server.handle(
            {"jsonrpc": "2.0", "id": "f", "method": "tools/call", "params": params}
        )

    with anyio.fail_after(10):  # the read is held until released: only the cancel ends it
        async with anyio.create_task_group() as group:
            group.start_soon(read)
            await script.held()
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": "f"},
            }
            await server.handle(note)
    assert results["frame"]["error"]["code"] == -32800
