"""One tool call on every face a leak search reads: ``/mcp`` (when listed), its ``/v1``
route (when it has one) and each SDK transport given, every answer or refusal kept as
text; and every resource, prompt and completion an MCP host may read. Shared by the
sealed, disguised, news and forward leak searches."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import httpx
from kestrel_protocol import GradeResult, KestrelError
from kestrel_protocol.surface import SURFACE

__all__ = ["call_everywhere", "read_everything", "route_request", "sample_call", "wire_fields"]


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
