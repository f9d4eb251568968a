"""Parity, generated from the surface: every face answers every call byte-identically.

For every tool of ``SURFACE`` the same table of calls (valid, unknown argument, wrong
type, missing argument, bad label, lone surrogate, an id no ``/v1`` path carries, a
string too long for a URL's query, unknown session, another principal's session,
missing scope) goes through every face that can express it: stdio MCP, the door's
``/mcp`` in both eras, the door's ``/v1``, and the SDK's ``local_transport`` and
``remote_transport``. Each face runs on its own fresh
runtime (Kestrel is deterministic, so the same calls give the same sessions and roots);
once each face's envelope is removed, results and refusals (code, message, detail) must
be identical. Every resource is read the same way through the three MCP faces and
compared with the call it projects.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_door import AuditLog, DoorConfig, DoorStore, IssuedTokens, create_door_app
from kestrel_mcp import create_kestrel_mcp_server
from kestrel_protocol import GradeResult, KestrelError
from kestrel_protocol.surface import ALL_SCOPES, SURFACE, Tool
from kestrel_sdk import create_sdk, local_transport, remote_transport
from kestrel_sdk.runtime.lang import FORM_EXAMPLES

from tests.every_face import sample_call

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8787"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
SURROGATE = "a\ud800b"
OVERLONG = "x" * 70_000
"""A string past a URL's length (httpx's limit is 65,536)."""
PATHLESS = ("", ".", "..", "a/b", OVERLONG)
"""Ids no ``/v1`` path segment carries: none, a URL's dot segments, a ``/``, one too long."""
Outcome = tuple[Any, ...]


@dataclass(frozen=True)
class Row:
    tool: Tool
    variant: str
    arguments: dict[str, Any]
    scopes: tuple[str, ...] = ALL_SCOPES


@dataclass
class Fixture:
    """What the setup made, identical on every fresh runtime."""

    sid: str
    other: str
    root: str
    grade: dict[str, Any]


async def _setup(runtime: Any) -> Fixture:
    alice = create_sdk(local_transport(principal="alice", runtime=runtime))
    bob = create_sdk(local_transport(principal="bob", runtime=runtime))
    opened = (await alice.open_session("acme-trend", "parity")).session
    assert opened is not None
    # every order form of the grammar, so each face serves its frame, blotter and proof
    forms = "\n".join(FORM_EXAMPLES.values()) + "\n"
    await opened.submit(forms)
    submitted = await opened.submit("buy 1 ACME\nadvance 1\n")
    graded = (await alice.open_session("acme-trend", "graded")).session
    assert graded is not None
    await graded.submit(forms + "advance 3\n")
    await graded.close()
    grade = await alice.grade(graded.id)
    assert isinstance(grade, GradeResult)
    other = (await bob.open_session("acme-trend", "bob")).session
    assert other is not None
    return Fixture(opened.id, other.id, submitted.pentad.root, grade.to_json())


def _samples(fx: Fixture) -> dict[str, Any]:
    """What only the setup knows (its session, a root, a grade) and what this table
    chooses over a field's example (a label of its own); any other argument is called
    with its field's example (``sample_call``)."""
    return {
        "label": "parity",
        "sessionId": fx.sid,
        "source": "advance 1\n",
        "token": "op_nope",
        "root": fx.root,
        "grade": fx.grade,
        "gradeRoot": fx.grade["root"],
    }


def _fields(tool: Tool) -> list[tuple[str, Any]]:
    return [(f.alias or n, f) for n, f in tool.arguments.model_fields.items()]


def _rows(fx: Fixture) -> list[Row]:
    """The table, generated from the surface."""
    samples = _samples(fx)
    rows: list[Row] = []
    for tool in SURFACE.tools:
        fields = _fields(tool)
        required = [name for name, f in fields if f.is_required()]
        valid = sample_call(tool, samples)
        if "label" in dict(fields):
            valid["label"] = samples["label"]
        rows.append(Row(tool, "valid", valid))
        rows.append(Row(tool, "unknown argument", {**valid, "bogus": 1}))
        if required:
            first = required[0]
            rows.append(Row(tool, "wrong type", {**valid, first: 5}))
            rows.append(
                Row(tool, "missing argument", {k: v for k, v in valid.items() if k != first})
            )
            if isinstance(valid[first], str):
                rows.append(Row(tool, "lone surrogate", {**valid, first: SURROGATE}))
        for argument in tool.route.params if tool.route is not None else ():
            for bad in PATHLESS:
                rows.append(Row(tool, f"pathless {argument} {bad[:3]!r}", {**valid, argument: bad}))
        for argument in tool.route.query if tool.route is not None else ():
            rows.append(Row(tool, f"overlong {argument}", {**valid, argument: OVERLONG}))
        if "label" in valid:
            for bad in ("", "a\x00b", "x" * 65, SURROGATE):
                rows.append(Row(tool, f"bad label {bad[:3]!r}", {**valid, "label": bad}))
        if "sessionId" in valid:
            rows.append(Row(tool, "unknown session", {**valid, "sessionId": "ks_nope"}))
            rows.append(Row(tool, "another principal's session", {**valid, "sessionId": fx.other}))
        lacking = tuple(s for s in ALL_SCOPES if s != tool.scope)
        rows.append(Row(tool, "missing scope", valid, lacking))
    return rows


def _body(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=True).encode()  # a lone surrogate travels as \ud800


def _mcp_outcome(response: dict[str, Any]) -> Outcome:
    if "error" in response:
        error = response["error"]
        refusal = (error.get("data") or {}).get("refusal")
        return ("refusal", refusal) if refusal else ("error", error["code"], error["message"])
    result = response["result"]
    if result["isError"]:
        return ("refusal", result["structuredContent"]["refusal"])
    return ("ok", result["structuredContent"])


def _sdk_args(row: Row) -> dict[str, Any]:
    values = {}
    for (name, _), field in zip(_fields(row.tool), row.tool.arguments.model_fields, strict=True):
        value = row.arguments.get(name)
        values[field] = GradeResult.parse(value) if name == "grade" else value
    return values


def _runs(tool: Tool) -> str:
    assert tool.runs is not None
    return tool.runs.method


class Faces:
    """One fresh runtime per face, each with the fixture made by the same setup."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.fixtures: list[Fixture] = []

    async def _runtime(self, name: str) -> Any:
        owner: Any = local_transport(home=self.tmp / name)
        self.fixtures.append(await _setup(owner.runtime))
        return owner

    def _door(self, owner: Any, name: str) -> tuple[Any, Callable[[tuple[str, ...]], str]]:
        store = DoorStore(self.tmp / f"{name}-door.db")
        tokens = IssuedTokens(store)
        app = create_door_app(
            DoorConfig(base_url=BASE),
            transport_for=lambda p: local_transport(principal=p, runtime=owner.runtime),
            grant_verifiers=[tokens],
            audit=AuditLog(store),
        )
        issued: dict[tuple[str, ...], str] = {}

        def token(scopes: tuple[str, ...]) -> str:
            if scopes not in issued:
                issued[scopes] = tokens.issue("alice", list(scopes))[1]
            return issued[scopes]

        return app, token

    async def stdio(self) -> Callable[[Row], Awaitable[Outcome | None]]:
        owner = await self._runtime("stdio")
        server = create_kestrel_mcp_server(
            local_transport(principal="alice", runtime=owner.runtime), secrets=False
        )

        async def run(row: Row) -> Outcome | None:
            if not row.tool.listed or row.variant == "missing scope":
                return None
            params = {"name": row.tool.name, "arguments": row.arguments}
            response = await server.handle(
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            )
            assert response is not None
            return _mcp_outcome(response)

        return run

    async def door_mcp(self, modern: bool) -> Callable[[Row], Awaitable[Outcome | None]]:
        owner = await self._runtime(f"mcp-{modern}")
        app, token = self._door(owner, f"mcp-{modern}")
        transport = httpx.ASGITransport(app=app)

        async def run(row: Row) -> Outcome | None:
            if not row.tool.listed:
                return None
            params: dict[str, Any] = {"name": row.tool.name, "arguments": row.arguments}
            headers = {
                "Authorization": f"Bearer {token(row.scopes)}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            }
            if modern:
                params["_meta"] = META
                headers |= {
                    "MCP-Protocol-Version": "2026-07-28",
                    "Mcp-Method": "tools/call",
                    "Mcp-Name": row.tool.name,
                }
            message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
                response = await client.post("/mcp", content=_body(message), headers=headers)
            return _mcp_outcome(response.json())

        return run

    async def v1(self) -> Callable[[Row], Awaitable[Outcome | None]]:
        owner = await self._runtime("v1")
        app, token = self._door(owner, "v1")
        transport = httpx.ASGITransport(app=app)

        async def run(row: Row) -> Outcome | None:
            route = row.tool.route
            if route is None:
                return None
            args = dict(row.arguments)
            path = route.path
            for argument, param in route.params.items():
                value = args.pop(argument, None)
                if not isinstance(value, str) or not value.isascii() or value in PATHLESS:
                    return None  # a path segment cannot carry it
                path = path.replace("{" + param + "}", value)
            query = {param: args.pop(a) for a, param in route.query.items() if a in args}
            if any(not isinstance(v, int | str) or v == OVERLONG for v in query.values()):
                return None  # a query string cannot carry it
            if route.body == "none" and args:
                return None  # nothing left to carry an unknown or mistyped argument
            if route.body == "none" and row.variant == "missing argument":
                return None
            async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
                response = await client.request(
                    route.method,
                    path,
                    params=query,
                    content=_body(args) if route.body != "none" else None,
                    headers={
                        "Authorization": f"Bearer {token(row.scopes)}",
                        "Content-Type": "application/json",
                    },
                )
            if response.status_code >= 400 and "refusal" in response.text[:20]:
                return ("refusal", response.json()["refusal"])
            if response.status_code == 402:
                return ("ok", {"gated": True, "payment": response.json()})
            if route.media != "application/json":
                return ("ok", response.text)
            return ("ok", response.json())

        return run

    async def sdk(self, remote: bool) -> Callable[[Row], Awaitable[Outcome | None]]:
        owner = await self._runtime(f"sdk-{remote}")
        if remote:
            app, token = self._door(owner, "sdk")
            http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)
        local = local_transport(principal="alice", runtime=owner.runtime)

        async def run(row: Row) -> Outcome | None:
            if row.variant in ("unknown argument", "missing argument"):
                return None  # not expressible in a Python call
            if row.variant == "missing scope" and not remote:
                return None
            if row.variant == "wrong type" and "grade" in row.arguments:
                return None  # verify takes a GradeResult object
            transport = remote_transport(BASE, token(row.scopes), client=http) if remote else local
            try:
                result = await create_sdk(transport).call(row.tool.name, **_sdk_args(row))
            except KestrelError as exc:
                return ("refusal", exc.refusal.to_json())
            data = result.to_json()
            return ("ok", row.tool.text(data) if row.tool.text is not None else data)

        return run


def _canonical(outcome: Outcome) -> str:
    return json.dumps(outcome, sort_keys=True, ensure_ascii=True)


async def test_every_face_answers_every_call_identically(tmp_path: Path) -> None:
    faces = Faces(tmp_path)
    runners = {
        "stdio": await faces.stdio(),
        "door /mcp 2025-11-25": await faces.door_mcp(modern=False),
        "door /mcp 2026-07-28": await faces.door_mcp(modern=True),
        "door /v1": await faces.v1(),
        "sdk local": await faces.sdk(remote=False),
        "sdk remote": await faces.sdk(remote=True),
    }
    fixture = faces.fixtures[0]
    assert all(fx == fixture for fx in faces.fixtures)  # deterministic runtimes
    compared = 0
    tools_compared: set[str] = set()
    # The tape is read last: a tape read while the fixture's session is open is recorded
    # in its record (no-lookahead), and only /v1 and the SDK can express a tape call.
    rows = sorted(_rows(fixture), key=lambda row: _runs(row.tool) == "tape")
    for row in rows:
        seen: dict[str, str] = {}
        for name, run in runners.items():
            outcome = await run(row)
            if outcome is not None:
                seen[name] = _canonical(outcome)
        if len(seen) < 2:
            continue  # no two faces can express this call (e.g. an extra argument on a GET)
        tools_compared.add(row.tool.name)
        assert len(set(seen.values())) == 1, (row.tool.name, row.variant, seen)
        first = json.loads(next(iter(seen.values())))
        if row.variant == "valid" and _runs(row.tool) == "resume":
            # no grade runs long enough here to leave a token: a well-formed unknown one
            assert first[1]["code"] == "UNKNOWN_OPERATION", first
        elif row.variant == "valid":
            assert first[0] == "ok", (row.tool.name, first)
        elif row.variant == "missing scope":
            assert first[1]["code"] == "FORBIDDEN", (row.tool.name, first)
        elif row.variant in ("unknown session", "another principal's session"):
            assert first[1]["code"] == "UNKNOWN_SESSION", (row.tool.name, first)
        else:
            assert first[1]["code"] == "INVALID_ARGUMENT", (row.tool.name, row.variant, first)
        compared += len(seen) - 1
    assert tools_compared == {t.name for t in SURFACE.tools}
    assert compared > 250


async def _read(
    send: Callable[[dict[str, Any], dict[str, str]], Awaitable[dict[str, Any]]],
    uri: str,
    modern: bool,
) -> Outcome:
    params: dict[str, Any] = {"uri": uri}
    headers: dict[str, str] = {}
    if modern:
        params["_meta"] = META
        headers = {
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "resources/read",
            "Mcp-Name": uri,
        }
    response = await send(
        {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": params}, headers
    )
    if "error" in response:
        return ("error", response["error"]["code"], response["error"].get("data"))
    content = response["result"]["contents"][0]
    return ("ok", content["uri"], content["mimeType"], content["text"])


async def test_every_resource_reads_alike_on_every_mcp_face(tmp_path: Path) -> None:
    faces = Faces(tmp_path)
    stdio_owner = await faces._runtime("stdio")
    server = create_kestrel_mcp_server(
        local_transport(principal="alice", runtime=stdio_owner.runtime), secrets=False
    )
    door_owner = await faces._runtime("door")
    app, token = faces._door(door_owner, "door")
    fx = faces.fixtures[0]
    assert faces.fixtures[1] == fx
    sdk = create_sdk(local_transport(principal="alice", runtime=door_owner.runtime))

    async def stdio(message: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        response = await server.handle(message)
        assert response is not None
        return response

    def door(scopes: tuple[str, ...]) -> Any:
        async def send(message: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
            async with httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url=BASE
            ) as client:
                response = await client.post(
                    "/mcp",
                    json=message,
                    headers={"Authorization": f"Bearer {token(scopes)}", **headers},
                )
            body: dict[str, Any] = response.json()
            return body

        return send

    projected = {
        "kestrel://catalog": json.dumps((await sdk.catalog()).to_json()),
        "kestrel://catalog/scenarios/acme-trend": json.dumps(
            (await sdk.scenario("acme-trend")).to_json()
        ),
        "kestrel://catalog/scenarios/acme-trend/tape": await sdk.tape("acme-trend"),
        "kestrel://artifacts/" + fx.root: json.dumps(await sdk.artifact(fx.root)),
        "kestrel://proofs/" + fx.grade["root"]: json.dumps(
            (await sdk.proof_of_grade(fx.grade["root"])).to_json()
        ),
    }
    unknown = [
        "kestrel://catalog/scenarios/nope",
        "kestrel://artifacts/sha256:" + "a" * 64,
        "kestrel://proofs/sha256:" + "a" * 64,
    ]
    for uri in [*projected, *unknown]:
        for modern in (False, True):
            outcomes = {
                "stdio": await _read(stdio, uri, modern),
                "door": await _read(door(ALL_SCOPES), uri, modern),
            }
            assert outcomes["stdio"] == outcomes["door"], (uri, modern, outcomes)
            outcome = outcomes["door"]
            if uri in projected:
                text = outcome[3]
                expected = projected[uri]
                if outcome[2] == "application/json":
                    assert json.loads(text) == json.loads(expected), uri
                else:
                    assert text == expected, uri
            else:
                assert outcome == ("error", -32602 if modern else -32002, {"uri": uri})
        trade_only = [await _read(door(("kestrel:trade",)), uri, m) for m in (False, True)]
        assert trade_only[0] == trade_only[1]
        assert trade_only[0][2]["refusal"]["code"] == "FORBIDDEN", trade_only
