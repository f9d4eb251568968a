"""The names of a surface's tools by the runtime method each runs: how a text declared
apart from the tools (a prompt, a resource, the instructions) names a tool, so that it
names each one as its surface does and only the registry spells a tool's name."""

from __future__ import annotations

from collections.abc import Iterable

from .declare import Tool

__all__ = ["ToolNames"]


class ToolNames:
    """The name of the tool that runs each runtime method, on the surface being served."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._names: dict[str, str] = {}
        for tool in tools:
            if tool.runs is not None:
                self._names.setdefault(tool.runs.method, tool.name)

    def __call__(self, method: str) -> str:
        return self._names.get(method, method)
