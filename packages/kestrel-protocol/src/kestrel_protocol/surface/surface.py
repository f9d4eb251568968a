"""A :class:`Surface`: a set of tool, resource and prompt declarations, looked up by the faces.

Faces take a surface as a value (default: Kestrel's own, ``SURFACE``), so a test can
build every face from a surface with a tool removed and see it gone everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Any

from .declare import Tool
from .prompt import Prompt
from .resource import Resource
from .results import ArgumentError

__all__ = ["Surface"]


class Surface:
    """Tools (in listing order), resources and prompts, with their lookups built once."""

    def __init__(
        self,
        tools: Iterable[Tool],
        resources: Iterable[Resource] = (),
        prompts: Iterable[Prompt] = (),
        *,
        catalog: str | None = None,
    ) -> None:
        self.tools: tuple[Tool, ...] = tuple(tools)
        self._by_name: dict[str, Tool] = {}
        for tool in self.tools:
            if tool.name in self._by_name:
                raise ValueError(f"tool {tool.name} is declared twice")
            self._by_name[tool.name] = tool
            self._by_name[tool.alias] = tool
        # A resource whose tool is not on this surface is not served either.
        self.resources: tuple[Resource, ...] = tuple(
            r for r in resources if r.tool in self._by_name
        )
        self.catalog = catalog if catalog in self._by_name else None
        """The tool whose result lists the scenarios (``resources/list``, completion)."""
        self._by_method: dict[str, Tool] = {}
        for tool in self.tools:
            if tool.runs is not None:
                self._by_method.setdefault(tool.runs.method, tool)
        self.listed: tuple[Tool, ...] = tuple(t for t in self.tools if t.listed)
        self.prompts: tuple[Prompt, ...] = tuple(prompts)
        self._prompts = {prompt.name: prompt for prompt in self.prompts}
        if len(self._prompts) != len(self.prompts):
            raise ValueError("a prompt is declared twice")

    @cached_property
    def capabilities(self) -> dict[str, Any]:
        """The server capabilities every face announces, derived from the declarations."""
        found: dict[str, Any] = {"tools": {"listChanged": False}}
        if self.resources:
            found["resources"] = {"subscribe": False, "listChanged": False}
        if self.prompts:
            found["prompts"] = {"listChanged": False}
        found["completions"] = {}
        found["logging"] = {}
        return found

    @cached_property
    def listings(self) -> tuple[dict[str, Any], ...]:
        """The ``tools/list`` objects, built on first use (schemas cost start-up time)."""
        return tuple(t.listing for t in self.listed)

    def __repr__(self) -> str:
        return f"Surface({[t.name for t in self.tools]})"

    def find(self, name: str) -> Tool | None:
        """The tool called ``name`` (or its dotted alias), or ``None``."""
        return self._by_name.get(name)

    def tool(self, name: str, *, listed: bool = False) -> Tool:
        """The tool called ``name``; unknown (or, with ``listed``, unlisted) is an ArgumentError."""
        found = self._by_name.get(name)
        if found is None or (listed and not found.listed):
            raise ArgumentError.unknown_tool(name)
        return found

    def projecting(self, method: str) -> Tool:
        """The (first) tool whose runtime method is ``method`` (``open_session``)."""
        found = self._by_method.get(method)
        if found is None:
            raise KeyError(f"no tool runs {method}")
        return found

    def prompt(self, name: str) -> Prompt | None:
        """The prompt called ``name``, or ``None``."""
        return self._prompts.get(name)

    def resource(self, uri: str) -> tuple[Resource, dict[str, Any]] | None:
        """The resource ``uri`` names and the arguments of the call it projects."""
        for resource in self.resources:
            values = resource.match(uri)
            if values is not None:
                return resource, resource.arguments(values)
        return None

    def updated(self, name: str, arguments: Mapping[str, Any], uris: Iterable[str]) -> list[str]:
        """Which of ``uris`` a successful call of the tool ``name`` with ``arguments``
        changed: a resource it updates (``updated_by`` one of the tool's effects) whose
        projected arguments the call was made with."""
        tool = self._by_name.get(name)
        effects = set(tool.effects) if tool is not None else set()
        changed = []
        for uri in uris:
            found = self.resource(uri) if effects else None
            if found is None or not effects & set(found[0].updated_by):
                continue
            if all(arguments.get(key) == value for key, value in found[1].items()):
                changed.append(uri)
        return changed

    def guarded(self, names: Iterable[str]) -> frozenset[str]:
        """The tools an approval required of ``names`` (or their dotted aliases) guards:
        each named tool and every tool that has all of its :attr:`~.declare.Tool.effects`
        (approval of the grade tool guards the proof tool, which grades too). An unknown
        name is a ``ValueError`` naming it."""
        found: set[str] = set()
        for name in names:
            tool = self._by_name.get(name)
            if tool is None:
                known = ", ".join(t.name for t in self.tools)
                raise ValueError(f"no tool {name!r} (the tools: {known})")
            found.add(tool.name)
            if tool.effects:
                wanted = set(tool.effects)
                found.update(t.name for t in self.tools if wanted <= set(t.effects))
        return frozenset(found)

    def scopes(self) -> Mapping[str, str]:
        """Each tool's required scope, by name."""
        return {tool.name: tool.scope for tool in self.tools}

    def without(self, *names: str) -> Surface:
        """This surface with the named tools (and the resources they project) removed."""
        kept = [t for t in self.tools if t.name not in names]
        return Surface(kept, self.resources, self.prompts, catalog=self.catalog)

    def plus(self, tools: Iterable[Tool]) -> Surface:
        """This surface with ``tools`` appended (a face's own additions)."""
        return Surface([*self.tools, *tools], self.resources, self.prompts, catalog=self.catalog)
