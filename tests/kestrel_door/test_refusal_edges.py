"""The door's refusals at its edges, on a real ``kestrel-door serve`` on loopback: a body
over the door's limit names that limit and the body's size on ``/v1`` (JSON and a
``text/x-kestrel`` source) and ``/mcp``, and a source under it but over 64 KiB is
refused as the local runtime refuses it; a path naming no route, a trailing ``/`` and a
method a route does not take are JSON refusals, and an id segment no route matches
(empty, an encoded ``/``) is refused as that id is on ``/mcp``. The official MCP client
shows each refusal the door sends before a call (Host, Origin, no or a bad bearer) in
the door's words, and ``/v1/validate`` takes a raw ``text/x-kestrel`` source as submit
does."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_protocol import KestrelError
from kestrel_sdk import KestrelSdk, local_transport
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.doors import MCP_HEADERS, serve_door

pytestmark = pytest.mark.anyio

MAX_BODY = 200_000


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    home = tmp_path_factory.mktemp("door")
    with serve_door(home, "--max-body", str(MAX_BODY)) as served:
        auth = {"Authorization": f"Bearer {served.token}"}
        with httpx.Client(base_url=served.url, headers=auth, timeout=60) as client:
            yield client


def _source(size: int) -> str:
    return "advance 1\n" * (size // 10)


def _refusal(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    refusal: dict[str, Any] = response.json()["refusal"]
    return refusal


def _names_the_door_limit(refusal: dict[str, Any], found: int | None) -> None:
    assert refusal["code"] == "LIMIT_EXCEEDED"
    assert refusal["detail"]["limit"] == "requestBytes"
    assert refusal["detail"]["max"] == MAX_BODY
    assert f"limit on a request body is {MAX_BODY} bytes" in refusal["message"]
    assert "--max-body" in refusal["message"]
    if found is None:
        assert "found" not in refusal["detail"]
        assert f"is over {MAX_BODY} bytes" in refusal["message"]
    else:
        assert refusal["detail"]["found"] == found
        assert f"the request body is {found} bytes" in refusal["message"]


def test_a_body_over_the_door_limit_names_the_limit_and_its_size(door: httpx.Client) -> None:
    body = ('{"source": "' + _source(MAX_BODY + 10_000).replace("\n", "\\n") + '"}').encode()
    json_type = {"content-type": "application/json"}
    validated = door.post("/v1/validate", content=body, headers=json_type)
    _names_the_door_limit(_refusal(validated, 413), len(body))

    raw = _source(MAX_BODY + 10_000).encode()
    submitted = door.post(
        "/v1/sessions/ks_any/submit", content=raw, headers={"content-type": "text/x-kestrel"}
    )
    _names_the_door_limit(_refusal(submitted, 413), len(raw))

    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "kestrel_validate", "arguments": {"source": raw.decode()}},
    }
    over_mcp = door.post("/mcp", json=call, headers=MCP_HEADERS)
    assert over_mcp.status_code == 413
    error = over_mcp.json()["error"]  # a JSON-RPC error, as an MCP client reads one
    assert (over_mcp.json()["id"], error["code"]) == (None, -32600)
    assert error["message"] == error["data"]["refusal"]["message"]
    _names_the_door_limit(error["data"]["refusal"], int(over_mcp.request.headers["content-length"]))


def test_a_streamed_body_over_the_limit_says_it_ran_past_it(door: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: the size is only known to pass it
        for _ in range(30):
            yield b"advance 1\n" * 1_000

    streamed = door.post(
        "/v1/sessions/ks_any/submit", content=chunks(), headers={"content-type": "text/x-kestrel"}
    )
    _names_the_door_limit(_refusal(streamed, 413), None)


async def test_a_source_under_the_door_limit_is_refused_as_locally(
    door: httpx.Client, tmp_path: Path
) -> None:
    source = _source(100_000)
    local: Any = local_transport(home=tmp_path)
    try:
        with pytest.raises(KestrelError) as refused:
            await KestrelSdk(local).validate(source)
    finally:
        await local.aclose()
    over_v1 = _refusal(door.post("/v1/validate", json={"source": source}), 422)
    assert over_v1 == refused.value.refusal.to_json()
    assert over_v1["message"] == "source is 100000 bytes; the limit is 65536"


def test_the_openapi_document_lists_the_413_on_every_operation(door: httpx.Client) -> None:
    document = door.get("/v1/openapi.json").json()
    operations = [op for path in document["paths"].values() for op in path.values()]
    assert len(operations) > 10
    assert [op["operationId"] for op in operations if "413" not in op["responses"]] == []


def _over_mcp(door: httpx.Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}
    call["params"] = {"name": tool, "arguments": arguments}
    answer = door.post("/mcp", json=call, headers=MCP_HEADERS).json()
    refusal: dict[str, Any] = answer["error"]["data"]["refusal"]
    return refusal


@pytest.mark.parametrize(("segment", "session_id"), [("a%2Fb", "a/b"), ("", ""), ("%2F", "/")])
def test_a_path_id_no_route_matches_is_refused_as_that_id(
    door: httpx.Client, segment: str, session_id: str
) -> None:
    on_mcp = _over_mcp(door, "kestrel_session_frame", {"sessionId": session_id})
    assert on_mcp["code"] == "INVALID_ARGUMENT"
    assert "an id is 1 to 128 characters" in on_mcp["message"]
    framed = door.get(f"/v1/sessions/{segment}/frame")
    assert _refusal(framed, 400) == on_mcp
    submitted = door.post(
        f"/v1/sessions/{segment}/submit",
        content=b"advance 1\n",
        headers={"content-type": "text/x-kestrel"},
    )
    on_mcp = _over_mcp(
        door, "kestrel_session_submit", {"sessionId": session_id, "source": "advance 1\n"}
    )
    assert _refusal(submitted, 400) == on_mcp


def test_a_path_naming_no_route_is_a_refusal(door: httpx.Client) -> None:
    for path in ("/v1/nothing", "/v1", "/nothing", "/mcp/x", "/v1/sessions/ks_x/frame/x"):
        refusal = _refusal(door.get(path), 404)
        assert refusal["code"] == "INVALID_ARGUMENT"
        assert refusal["message"].startswith(f"the door has no route GET {path} (")
        assert refusal["detail"] == {"where": "path", "path": path}
    long = _refusal(door.get("/v1/" + "x" * 5_000), 404)
    assert len(long["message"]) < 400
    assert "… (5004 characters)" in long["message"]


def test_a_trailing_slash_is_refused_saying_so_not_redirected(door: httpx.Client) -> None:
    for path in ("/v1/catalog/", "/v1/sessions/ks_x/frame/"):
        refusal = _refusal(door.get(path), 404)
        assert refusal["message"].startswith(f"the door has no route GET {path}; drop its ")
    assert "trailing" not in _refusal(door.get("/v1/"), 404)["message"]


def test_a_method_a_route_does_not_take_is_a_refusal(door: httpx.Client) -> None:
    answer = door.delete("/v1/catalog")
    refusal = _refusal(answer, 405)
    assert answer.headers["allow"] == "GET, HEAD"
    assert refusal["code"] == "INVALID_ARGUMENT"
    assert refusal["message"] == "DELETE is not allowed on /v1/catalog; it takes GET, HEAD"
    assert _refusal(door.put("/mcp"), 405)["message"].endswith("it takes POST")


async def test_the_official_mcp_client_shows_the_door_limit(door: httpx.Client) -> None:
    token = door.headers["Authorization"].removeprefix("Bearer ")
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(str(door.base_url.join("/mcp")), http_client=http)
    async with http, Client(transport, mode="legacy") as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("kestrel_validate", {"source": _source(MAX_BODY + 10_000)})
    assert f"limit on a request body is {MAX_BODY} bytes" in str(refused.value)


_NO_BEARER = "a bearer credential is required and none was sent"
_BAD_BEARER = "the bearer credential sent is not valid here"


@pytest.mark.parametrize(
    ("sent", "status", "words"),
    [
        ({"Host": "rebound.example:80"}, 421, "this Host is not served (DNS-rebinding defence)"),
        ({"Origin": "http://evil.example"}, 403, "this Origin is not allowed"),
        ({"Authorization": ""}, 401, _NO_BEARER),
        ({"Authorization": "Bearer not-a-token"}, 401, _BAD_BEARER),
    ],
    ids=["host", "origin", "no-bearer", "bad-bearer"],
)
async def test_the_official_mcp_client_shows_each_refusal_before_a_call(
    door: httpx.Client, sent: dict[str, str], status: int, words: str
) -> None:
    headers = {"Authorization": door.headers["Authorization"], **sent}
    if not headers["Authorization"]:
        del headers["Authorization"]
    http = create_mcp_http_client(headers=headers)
    transport = streamable_http_client(str(door.base_url.join("/mcp")), http_client=http)
    with pytest.raises(BaseExceptionGroup) as refused:  # refused at initialize
        async with http, Client(transport, mode="legacy") as client:
            await client.call_tool("kestrel_validate", {"source": "advance 1\n"})
    # in the door's words (was "Server returned an error response")
    assert refused.group_contains(MCPError, match=re.escape(words))

    # The same refusal on both faces: /v1's {refusal}, /mcp's JSON-RPC error's data.
    call = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with httpx.Client(base_url=door.base_url, headers=headers) as bare:
        over_mcp = bare.post("/mcp", json=call, headers=MCP_HEADERS)
        over_v1 = bare.post("/v1/validate", json={"source": "advance 1\n"})
    assert over_mcp.status_code == status
    answer = over_mcp.json()
    assert (answer["id"], answer["error"]["code"]) == (None, -32600)
    assert answer["error"]["message"] == answer["error"]["data"]["refusal"]["message"]
    assert answer["error"]["data"]["refusal"] == _refusal(over_v1, status)
    assert words in answer["error"]["message"]
    if status == 401:  # still the OAuth challenge an MCP client authorizes from
        assert over_mcp.headers["www-authenticate"] == over_v1.headers["www-authenticate"]
        assert "resource_metadata=" in over_mcp.headers["www-authenticate"]


def test_validate_takes_a_raw_source_as_submit_does(door: httpx.Client) -> None:
    raw = {"content-type": "text/x-kestrel"}
    for source, scenario in (("advance 1\n", None), ("buy 10 NOPE\n", "acme-trend")):
        query = f"?scenario={scenario}" if scenario else ""
        as_text = door.post(f"/v1/validate{query}", content=source.encode(), headers=raw)
        arguments = {"source": source} | ({"scenario": scenario} if scenario else {})
        as_json = door.post("/v1/validate", json=arguments)
        assert as_text.status_code == as_json.status_code == 200, as_text.text
        assert as_text.json() == as_json.json()
    assert as_json.json()["ok"] is False  # the scenario's symbol check ran on the raw source
