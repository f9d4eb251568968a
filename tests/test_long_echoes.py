"""A refusal or diagnostic quotes a long input clipped, alike on every face: the SDK
(local), the ``kestrel`` CLI, ``kestrel-mcp`` on a pipe, and a served door's ``/mcp``
and ``/v1``. The first ``QUOTE_MAX`` characters are quoted, then how long it was; a
short input is quoted whole, as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
from click.testing import CliRunner
from kestrel_protocol import QUOTE_MAX
from kestrel_sdk import KestrelSdk, local_transport
from kestrel_sdk.cli import cli

from tests.doors import MCP_HEADERS, Door
from tests.stdio_pipe import Stdio

LONG = "x" * 60_000
CLIPPED = f"{'x' * QUOTE_MAX!r}… (60000 characters)"
SMALL = 2_000  # no answer below repeats the 60,000 characters it was sent


def _call(name: str, arguments: dict[str, Any], rid: int = 1) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def _door(door: Door) -> httpx.Client:
    auth = {"Authorization": f"Bearer {door.token}"}
    return httpx.Client(base_url=door.url, headers=auth, timeout=60)


def _mcp(http: httpx.Client, message: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = http.post("/mcp", json=message, headers=MCP_HEADERS)
    return len(response.content), response.json()


async def _validate_locally(source: str, home: Path) -> dict[str, Any]:
    local: Any = local_transport(home=home)
    try:
        return (await KestrelSdk(local).validate(source)).to_json()
    finally:
        await local.aclose()


def test_a_long_token_is_quoted_clipped_on_every_face(
    stdio_and_door: tuple[Stdio, Door], tmp_path: Path
) -> None:
    stdio, door = stdio_and_door
    source = f"buy 1 {LONG}\n"
    expected = f"unexpected {CLIPPED}; expected a symbol such as ACME"

    report = anyio.run(_validate_locally, source, tmp_path / "local")
    program = tmp_path / "long.kestrel"
    program.write_text(source)
    printed = CliRunner().invoke(
        cli, ["--home", str(tmp_path / "cli"), "validate", str(program), "--json"]
    )
    on_stdio = stdio.line(_call("kestrel_validate", {"source": source}))
    with _door(door) as http:
        over_v1 = http.post("/v1/validate", json={"source": source})
        size, over_mcp = _mcp(http, _call("kestrel_validate", {"source": source}))

    assert [d["message"] for d in report["diagnostics"]] == [expected]
    assert json.loads(printed.stdout) == report
    assert len(on_stdio) < SMALL
    assert json.loads(on_stdio)["result"]["structuredContent"] == report
    assert len(over_v1.content) < SMALL
    assert over_v1.json() == report
    assert size < SMALL
    assert over_mcp["result"]["structuredContent"] == report


def test_a_short_token_is_quoted_whole(stdio_and_door: tuple[Stdio, Door]) -> None:
    stdio, _ = stdio_and_door
    token = "y" * QUOTE_MAX
    answer = stdio.call(_call("kestrel_validate", {"source": f"buy 1 {token}\n"}))
    [found] = answer["result"]["structuredContent"]["diagnostics"]
    assert found["message"] == f"unexpected {token!r}; expected a symbol such as ACME"


def test_long_names_sent_to_the_mcp_faces_are_quoted_clipped(
    stdio_and_door: tuple[Stdio, Door],
) -> None:
    stdio, door = stdio_and_door
    messages = {
        "tool": _call(LONG, {}),
        "argument": _call("kestrel_validate", {"source": "advance 1\n", LONG: 1}),
        "method": {"jsonrpc": "2.0", "id": 1, "method": LONG},
        "resource": {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "resources/read",
            "params": {"uri": "kestrel://" + LONG},
        },
        "prompt": {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": LONG}},
    }
    with _door(door) as http:
        for what, message in messages.items():
            line = stdio.line(message)
            size, over_mcp = _mcp(http, message)
            assert len(line) < SMALL, what
            assert size < SMALL, what
            error = json.loads(line)["error"]
            assert error == over_mcp["error"], what
            assert "x… (600" in error["message"], what
            assert len(error["message"]) < 400, what


def test_a_long_argument_name_on_v1_is_quoted_clipped(stdio_and_door: tuple[Stdio, Door]) -> None:
    stdio, door = stdio_and_door
    arguments = {"source": "advance 1\n", LONG: 1}
    on_stdio = stdio.call(_call("kestrel_validate", arguments))
    with _door(door) as http:
        over_v1 = http.post("/v1/validate", json=arguments)
    assert over_v1.status_code == 400
    assert len(over_v1.content) < SMALL
    assert over_v1.json()["refusal"] == on_stdio["error"]["data"]["refusal"]


def test_a_long_value_in_a_posted_object_is_quoted_clipped(
    stdio_and_door: tuple[Stdio, Door],
) -> None:
    _, door = stdio_and_door
    with _door(door) as http:
        over_v1 = http.post("/v1/verify", json={"grade": {"root": LONG}})
    assert over_v1.status_code == 400
    assert len(over_v1.content) < SMALL
    refusal = over_v1.json()["refusal"]
    assert refusal["code"] == "INVALID_ARGUMENT"
    assert f"grade.root: Value error, {CLIPPED} is not a root" in refusal["message"]
