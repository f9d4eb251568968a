"""One tool call on every face a leak search reads: ``/mcp`` (when listed), its ``/v1``
route (when it has one) and each SDK transport given, every answer or refusal kept as
text. Shared by the sealed and the disguised leak searches."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx
from kestrel_protocol import GradeResult, KestrelError
from kestrel_protocol.surface import SURFACE

__all__ = ["call_everywhere", "route_request", "wire_fields"]


def wire_fields(tool: Any) -> list[tuple[str, Any]]:
    """Each argument by its wire name, with its field."""
    return [(f.alias or n, f) for n, f in tool.arguments.model_fields.items()]


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
