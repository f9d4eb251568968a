"""One tool call on every face a leak search reads: ``/mcp`` (when listed), its ``/v1``
route (when it has one) and each SDK transport given, every answer or refusal kept as
text; and every resource, prompt and completion an MCP host may read. ``Faces`` is alice
on all of them over one runtime. Shared by the sealed, disguised, news and forward leak
searches."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from kestrel_door import (
    Attestor,
    AuditLog,
    DoorConfig,
    DoorKeys,
    DoorStore,
    IssuedTokens,
    Pseudonyms,
    create_door_app,
)
from kestrel_mcp import create_kestrel_mcp_server
from kestrel_protocol import GradeResult, KestrelError
from kestrel_protocol.surface import ALL_SCOPES, SURFACE
from kestrel_sdk import create_sdk, local_transport, remote_transport
from kestrel_sdk.runtime.service import Runtime

__all__ = [
    "BASE",
    "Faces",
    "Traded",
    "call_everywhere",
    "decoded",
    "numbers",
    "read_everything",
    "route_request",
    "sample_call",
    "surface_calls",
    "wire_fields",
]

BASE = "http://127.0.0.1:8787"
CLOSING = ("kestrel_session_close", "kestrel_grade")


def wire_fields(tool: Any) -> list[tuple[str, Any]]:
    """Each argument by its wire name, with its field."""
    return [(f.alias or n, f) for n, f in tool.arguments.model_fields.items()]


def sample_call(tool: Any, known: Mapping[str, Any]) -> dict[str, Any]:
    """``tool``'s required arguments (wire names): the ``known`` value of each (what the
    test made: its session, a root, a grade), else its field's first example, so a tool
    added to the surface is called with no test edit."""
    values: dict[str, Any] = {}
    for name, field in wire_fields(tool):
        if not field.is_required():
            continue
        if name in known:
            values[name] = known[name]
        elif field.examples:
            values[name] = field.examples[0]
        else:
            raise AssertionError(f"{tool.name}: give argument {name!r} an example (examples=)")
    return values


def route_request(tool: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """The ``/v1`` request of ``tool``'s route for ``arguments`` (wire names): keyword
    arguments for ``httpx``'s ``request`` (method, url, params, json)."""
    path, args = tool.route.path, dict(arguments)
    for argument, param in tool.route.params.items():
        path = path.replace("{" + param + "}", str(args.pop(argument)))
    query = {p: args.pop(a) for a, p in tool.route.query.items() if a in args}
    body = args if tool.route.body != "none" else None
    return {"method": tool.route.method, "url": path, "params": query, "json": body}


async def call_everywhere(
    name: str,
    arguments: dict[str, Any],
    *,
    mcp: Callable[[str, dict[str, Any]], Awaitable[Any]],
    http: httpx.AsyncClient,
    auth: dict[str, str],
    transports: Sequence[tuple[Any, str]],
    bodies: list[tuple[str, str]],
) -> None:
    """Call ``name`` with ``arguments`` (wire names) on ``/mcp`` through ``mcp`` (which
    keeps its own bodies), on ``/v1`` and on each ``(transport, face)``, appending
    ``(where, text)`` to ``bodies``."""
    tool = SURFACE.tool(name)
    if tool.listed:
        await mcp("tools/call", {"name": name, "arguments": arguments})
    if tool.route is not None:
        response = await http.request(**route_request(tool, arguments), headers=auth)
        bodies.append((f"/v1 {name} {arguments}", response.text))
    for transport, face in transports:
        values = {
            field: GradeResult.parse(arguments[a]) if a == "grade" else arguments.get(a)
            for (a, _), field in zip(wire_fields(tool), tool.arguments.model_fields, strict=True)
        }
        try:
            result = (await transport.call(tool.name, **values)).to_json()
            text = json.dumps(tool.text(result) if tool.text is not None else result)
        except KestrelError as exc:
            text = json.dumps(exc.refusal.to_json())
        bodies.append((f"{face} {name} {arguments}", text))


async def read_everything(
    mcp: Callable[[str, dict[str, Any]], Awaitable[Any]],
    known: dict[str, str],
    *,
    scenario: str | None = None,
) -> None:
    """Through ``mcp`` (which keeps its own bodies): both resource listings, every
    resource read with the ``known`` values of its variables (a per-scenario resource's
    ``id`` is ``scenario`` when given), every completion, the prompt listing and every
    prompt with the ``known`` values of its required arguments."""
    await mcp("resources/list", {})
    await mcp("resources/templates/list", {})
    for resource in SURFACE.resources:
        values = {v: known[v] for v in resource.variables}
        if scenario is not None and resource.per_scenario:
            values["id"] = scenario
        await mcp("resources/read", {"uri": resource.expand(**values)})
        for variable in resource.complete:
            ref = {"type": "ref/resource", "uri": resource.uri}
            await mcp(
                "completion/complete", {"ref": ref, "argument": {"name": variable, "value": ""}}
            )
    await mcp("prompts/list", {})
    for prompt in SURFACE.prompts:
        given = {a.name: known.get(a.name, "") for a in prompt.arguments if a.required}
        await mcp("prompts/get", {"name": prompt.name, "arguments": given})
        for prompt_argument in prompt.arguments:
            if prompt_argument.complete is not None:
                ref = {"type": "ref/prompt", "name": prompt.name}
                completing = {"name": prompt_argument.name, "value": ""}
                await mcp("completion/complete", {"ref": ref, "argument": completing})


def surface_calls(
    samples: Mapping[str, Any],
    *,
    refused: Iterable[tuple[str, dict[str, Any]]] = (),
    extra: Iterable[tuple[str, dict[str, Any]]] = (),
) -> list[tuple[str, dict[str, Any]]]:
    """Every tool of the surface with the ``samples`` values of its required arguments:
    ``refused`` first (while the session is open), then each tool but the closing ones,
    then ``extra``, then ``kestrel_session_close`` and ``kestrel_grade`` of the sample's
    session."""
    session = {"sessionId": samples["sessionId"]}
    return [
        *refused,
        *(
            (tool.name, sample_call(tool, samples))
            for tool in SURFACE.tools
            if tool.name not in CLOSING
        ),
        *extra,
        *((name, dict(session)) for name in CLOSING),
    ]


def decoded(body: str) -> str:
    """``body`` with every signed statement it carries decoded beside it."""
    payloads = re.findall(r'"payload":\s*"([A-Za-z0-9+/=]+)"', body)
    return "\n".join([body, *(base64.b64decode(p).decode("utf-8") for p in payloads)])


def numbers(text: str) -> set[str]:
    """The whole and decimal numbers standing alone in ``text``."""
    return set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", text))


@dataclass(frozen=True)
class Traded:
    """A session traded to a clock, and another graded: their sample values."""

    session_id: str
    root: str
    grade: GradeResult

    def samples(self, scenario: str) -> dict[str, Any]:
        """The values ``sample_call`` gives the surface's required arguments."""
        return {
            "scenario": scenario,
            "sessionId": self.session_id,
            "source": "cancel all",
            "token": "op_nope",
            "root": self.root,
            "grade": self.grade.to_json(),
            "gradeRoot": self.grade.root,
            "bars": 1000,
        }


class Faces:
    """Alice on every face of one runtime: stdio MCP, the door (``/mcp``, ``/v1``;
    attesting unless ``attested`` is false) and both SDK transports; every body kept. The
    runtime's home is ``tmp_path / "home"``, its catalogs ``catalogs`` (``sealed`` naming
    scenarios to seal), the door's store ``tmp_path / "door.db"``: alice is known there
    by her pseudonym, so her sessions opened in process are hers on the door."""

    def __init__(
        self,
        tmp_path: Path,
        catalogs: Sequence[Path],
        *,
        sealed: Sequence[str] = (),
        attested: bool = True,
    ) -> None:
        owner: Any = local_transport(home=tmp_path / "home", catalog_paths=catalogs, sealed=sealed)
        self.owner = owner
        self.runtime: Runtime = owner.runtime
        runtime = self.runtime
        store = DoorStore(tmp_path / "door.db")
        principal = Pseudonyms(store).of("alice")
        self.alice = create_sdk(local_transport(principal=principal, runtime=runtime))
        tokens = IssuedTokens(store)
        app = create_door_app(
            DoorConfig(base_url=BASE),
            transport_for=lambda p: local_transport(principal=p, runtime=runtime),
            grant_verifiers=[tokens],
            audit=AuditLog(store),
            attestor=Attestor(DoorKeys(store), BASE) if attested else None,
        )
        token = tokens.issue("alice", list(ALL_SCOPES))[1]
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)
        self.auth = {"Authorization": f"Bearer {token}"}
        self.stdio = create_kestrel_mcp_server(self.alice.transport, secrets=False)
        self.remote = create_sdk(remote_transport(BASE, token, client=self.http))
        self.bodies: list[tuple[str, str]] = []
        self._id = 0

    async def mcp(
        self, method: str, params: dict[str, Any], *, stdio_too: bool = True
    ) -> httpx.Response:
        """``method`` through stdio MCP (unless ``stdio_too`` is false) and the door's
        ``/mcp``; the door's answer."""
        self._id += 1
        message = {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}
        if stdio_too:
            response = await self.stdio.handle(message)
            self.bodies.append((f"stdio {method} {params}", json.dumps(response)))
        door = await self.http.post("/mcp", json=message, headers=self.auth)
        self.bodies.append((f"door /mcp {method} {params}", door.text))
        return door

    async def call(self, name: str, arguments: dict[str, Any]) -> None:
        """``name`` with ``arguments`` on every face (``call_everywhere``)."""
        await call_everywhere(
            name,
            arguments,
            mcp=self.mcp,
            http=self.http,
            auth=self.auth,
            transports=((self.alice, "sdk local"), (self.remote, "sdk remote")),
            bodies=self.bodies,
        )

    async def trade_and_grade(self, scenario: str, label: str, clock: int) -> Traded:
        """A session (``label``) that bought one ACME and advanced to ``clock``, and
        another graded at its start."""
        opened = (await self.alice.open_session(scenario, label)).session
        assert opened is not None
        submitted = await opened.submit(f"buy 1 ACME tif gtc\nadvance {clock}")
        assert submitted.delivery.frame.clock.bar == clock
        other = (await self.alice.open_session(scenario, "graded")).session
        assert other is not None
        grade = await self.alice.grade(other.id)
        assert isinstance(grade, GradeResult)
        return Traded(opened.id, submitted.pentad.root, grade)

    async def aclose(self) -> None:
        await self.http.aclose()
        await self.owner.aclose()
