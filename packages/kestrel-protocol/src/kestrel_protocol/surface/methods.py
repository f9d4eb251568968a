"""The MCP methods of the surface, shared by stdio MCP and the door's ``/mcp``.

``tools/list``, ``tools/call``, ``resources/list``, ``resources/templates/list``,
``resources/read``, ``prompts/list``, ``prompts/get`` and ``completion/complete`` are
generated from a :class:`Surface` and run every call through one ``call(name,
arguments)``: on stdio the dispatcher over the transport, on the door the caller's
``turn.tools.call``. So a resource is read, and a prompt's facts fetched, as the tool
calls they project (a turn without that tool reads nothing), and both faces answer
alike. A ``tools/call`` whose result is a ``kestrel.operation`` and whose request
carries a ``progressToken`` is resumed here until it is done, each step reported as
``notifications/progress``. The handshake, era envelopes and cancellation are the
session core's (:mod:`.session`), which both faces serve.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from ..errors import KestrelError
from ..jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, McpErrorCode
from ..quoting import clipped
from .notify import Notifier
from .paging import page
from .prompt import Prompt
from .recall import Recall
from .results import ArgumentError, json_text, result_refusal
from .rpc import RpcError
from .surface import Surface

__all__ = ["MAX_COMPLETIONS", "McpMethods", "ToolCaller"]

ToolCaller = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
"""Runs one tool by name and returns its ``CallToolResult``; raises ArgumentError."""
Sleep = Callable[[float], Awaitable[Any]]

MAX_COMPLETIONS: Final = 100
_NOT_FOUND: Final = frozenset({"UNKNOWN_SCENARIO", "UNKNOWN_ARTIFACT", "UNKNOWN_SESSION"})


class McpMethods:
    """The surface's MCP methods over one tool caller; each raises :class:`RpcError`.

    ``tools/call`` checks the arguments against the tool's model before the caller sees
    them (``validate=False`` when the caller is the dispatcher, which checks them itself),
    so a caller of any kind gets the same -32602 for the same bad arguments. ``recall``
    keeps the roots the caller's results named (for completion); ``sleep`` waits
    between the steps of an operation reported as progress.
    """

    def __init__(
        self,
        surface: Surface,
        call: ToolCaller,
        *,
        page_size: int = 100,
        recall: Recall | None = None,
        sleep: Sleep | None = None,
        validate: bool = True,
    ) -> None:
        self.surface = surface
        self._call = call
        self._validate = validate
        self._page_size = max(1, page_size)
        self.recall = Recall() if recall is None else recall
        self._sleep = sleep

    async def _run(self, name: str, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        try:
            result = await self._call(name, arguments)
        except ArgumentError as exc:
            raise RpcError.of_argument(exc) from None
        except KestrelError as exc:  # a caller that raises instead of returning a result
            raise RpcError.of_refusal(exc) from None
        if not result.get("isError"):
            self.recall.note(result.get("structuredContent"))
        return result

    async def tools_list(self, params: Mapping[str, Any]) -> dict[str, Any]:
        return page("tools", self.surface.listings, params.get("cursor"), self._page_size)

    async def tools_call(
        self, params: Mapping[str, Any], notifier: Notifier | None = None
    ) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "tools/call needs a string 'name'")
        arguments = params.get("arguments")
        arguments = {} if arguments is None else arguments
        try:
            tool = self.surface.tool(name, listed=True)
            if self._validate:
                tool.parse(arguments)
        except ArgumentError as exc:
            raise RpcError.of_argument(exc) from None
        result = await self._run(tool.name, arguments)
        if notifier is not None and notifier.wants_progress:
            result = await self._until_done(result, notifier)
        # A ToolResult stays one (a fresh object per call): its JSON is spliced, not re-encoded.
        return result if isinstance(result, dict) else dict(result)

    async def _until_done(self, result: Mapping[str, Any], notifier: Notifier) -> Mapping[str, Any]:
        """Resume a ``kestrel.operation`` result until it is done, reporting each step."""
        try:
            resume = self.surface.projecting("resume").name
        except KeyError:
            return result
        while True:
            data = result.get("structuredContent")
            if result.get("isError") or not isinstance(data, Mapping):
                return result
            if data.get("kind") != "kestrel.operation":
                return result
            progress = data.get("progress")
            done = progress.get("done", 0) if isinstance(progress, Mapping) else 0
            total = progress.get("total", 0) if isinstance(progress, Mapping) else 0
            await notifier.progress(done, total, f"{data.get('operation')}: {done} of {total} bars")
            wait = data.get("resumeAfterMs")
            if self._sleep is not None and isinstance(wait, int) and wait > 0:
                await self._sleep(wait / 1000)
            result = await self._run(resume, {"token": data.get("token")})

    async def _catalog(self) -> list[Mapping[str, Any]]:
        """The catalog's scenarios, read through the caller like any call."""
        if self.surface.catalog is None:
            return []
        result = await self._run(self.surface.catalog, {})
        refusal = result_refusal(result)
        if refusal is not None:
            raise RpcError(
                INTERNAL_ERROR,
                f"Kestrel refused the catalog: {refusal.get('code')}: {refusal.get('message')}",
                {"refusal": dict(refusal)},
            )
        data = result.get("structuredContent")
        scenarios = data.get("scenarios") if isinstance(data, Mapping) else None
        return [s for s in scenarios or () if isinstance(s, Mapping)]

    async def _fetch(self, name: str, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """A tool's structured result for a prompt; a refusal about the argument is -32602."""
        result = await self._run(name, arguments)
        refusal = result_refusal(result) if result.get("isError") else None
        if refusal is not None:
            code = INVALID_PARAMS if refusal.get("code") in _NOT_FOUND else INTERNAL_ERROR
            message = f"{refusal.get('code')}: {refusal.get('message')}"
            raise RpcError(code, message, {"refusal": dict(refusal)})
        data = result.get("structuredContent")
        return data if isinstance(data, Mapping) else {}

    async def prompts_list(self, params: Mapping[str, Any]) -> dict[str, Any]:
        prompts = [p.listing() for p in self.surface.prompts]  # listed when asked, not per request
        return page("prompts", prompts, params.get("cursor"), self._page_size)

    async def prompts_get(self, params: Mapping[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "prompts/get needs a string 'name'")
        prompt = self._prompt(name)
        try:
            arguments = prompt.check(params.get("arguments"))
            messages = await prompt.render(self._fetch, arguments)
        except ArgumentError as exc:
            raise RpcError.of_argument(exc) from None
        return {"description": prompt.description, "messages": messages}

    def _prompt(self, name: str) -> Prompt:
        prompt = self.surface.prompt(name)
        if prompt is None:
            known = ", ".join(p.name for p in self.surface.prompts) or "none"
            raise RpcError.of_argument(
                ArgumentError(
                    f"Unknown prompt: {clipped(name)} (prompts: {known})", {"prompt": clipped(name)}
                )
            )
        return prompt

    async def resources_list(self, params: Mapping[str, Any]) -> dict[str, Any]:
        fixed = [r for r in self.surface.resources if not r.is_template]
        expanded = [r for r in self.surface.resources if r.per_scenario]
        listed: list[dict[str, Any]] = [
            {
                "uri": r.uri,
                "name": r.name,
                "title": r.title,
                "description": r.description,
                "mimeType": r.mime,
            }
            for r in fixed
        ]
        for scenario in await self._catalog() if expanded else ():
            names = {"id": str(scenario.get("id")), "title": str(scenario.get("title"))}
            listed.extend(
                {
                    "uri": r.expand(id=names["id"]),
                    "name": r.item_name.format(**names),
                    "title": r.item_title.format(**names),
                    "mimeType": r.mime,
                }
                for r in expanded
            )
        return page("resources", listed, params.get("cursor"), self._page_size)

    async def templates_list(self, params: Mapping[str, Any]) -> dict[str, Any]:
        templates = [r.template() for r in self.surface.resources if r.is_template]
        return page("resourceTemplates", templates, params.get("cursor"), self._page_size)

    async def resources_read(self, params: Mapping[str, Any], *, modern: bool) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, "resources/read needs a string 'uri'")
        found = self.surface.resource(uri)
        if found is None:
            raise _not_found(uri, modern)
        resource, arguments = found
        result = await self._run(resource.tool, arguments)
        if result.get("isError"):
            refusal = dict(result_refusal(result) or {"code": "?", "message": "no refusal"})
            if refusal.get("code") in _NOT_FOUND:
                raise _not_found(uri, modern)
            raise RpcError(
                INTERNAL_ERROR,
                f"Kestrel refused the read: {refusal.get('code')}: {refusal.get('message')}",
                {"uri": uri, "refusal": refusal},
            )
        text = result["content"][0]["text"]
        structured = result.get("structuredContent")
        if resource.mime == "application/json" and structured is not None:
            # the object's JSON, not the compact text a model reads of a frame's result
            encoded = getattr(result, "json_text", None)
            text = encoded if isinstance(encoded, str) else json_text(structured)
        return {"contents": [{"uri": uri, "mimeType": resource.mime, "text": text}]}

    async def complete(self, params: Mapping[str, Any]) -> dict[str, Any]:
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, Mapping) or not isinstance(argument, Mapping):
            raise RpcError(INVALID_PARAMS, "completion/complete needs 'ref' and 'argument'")
        name, value = argument.get("name"), argument.get("value", "")
        if not isinstance(name, str) or not isinstance(value, str):
            raise RpcError(INVALID_PARAMS, "argument needs a string 'name' and 'value'")
        # An unknown prompt, template or argument completes to nothing (as the
        # conformance suite expects), never to an error.
        kind: str | tuple[str, ...] | None = None
        if ref.get("type") == "ref/prompt":
            prompt = self.surface.prompt(str(ref.get("name")))
            found = prompt.argument(name) if prompt is not None else None
            kind = found.complete if found is not None else None
        else:
            kind = next(
                (r.complete.get(name) for r in self.surface.resources if r.uri == ref.get("uri")),
                None,
            )
        candidates: list[str] = []
        if isinstance(kind, tuple):
            candidates = [v for v in kind if v.startswith(value)]
        elif kind == "scenario":
            ids = [str(s.get("id")) for s in await self._catalog()]
            candidates = [i for i in ids if i.startswith(value)]
        elif kind in ("root", "grade"):
            wanted = value if value.startswith("sha256:") or not value else "sha256:" + value
            seen = self.recall.roots() if kind == "root" else self.recall.grades()
            candidates = [root for root in seen if root.startswith(wanted)]
        values = candidates[:MAX_COMPLETIONS]
        return {
            "completion": {
                "values": values,
                "total": len(candidates),
                "hasMore": len(candidates) > len(values),
            }
        }


def _not_found(uri: str, modern: bool) -> RpcError:
    # 2025-11-25 and older: -32002; 2026-07-28 (SEP-2164): -32602 with data.uri.
    code = INVALID_PARAMS if modern else McpErrorCode.RESOURCE_NOT_FOUND
    return RpcError(code, f"Resource not found: {clipped(uri)}", {"uri": clipped(uri)})
