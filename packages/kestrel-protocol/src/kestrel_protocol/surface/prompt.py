"""A :class:`Prompt` of the surface (``prompts/list``, ``prompts/get``) and its
arguments: messages built from what the face's tool caller (:data:`Fetch`) answers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..quoting import clipped
from .results import ArgumentError
from .text import id_problem, text_problem

__all__ = ["Fetch", "Prompt", "PromptArgument"]

Fetch = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
"""Runs one tool through the face's caller and returns its structured result."""


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument of a prompt; ``complete`` names what completes it: scenario ids, the
    caller's grade roots, or a fixed set of values."""

    name: str
    description: str
    required: bool = True
    complete: Literal["scenario", "grade"] | tuple[str, ...] | None = None

    @property
    def names_id(self) -> bool:
        """Whether it names a scenario or a grade (an id: :data:`~.text.Id`'s rule)."""
        return self.complete in ("scenario", "grade")

    def listing(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "required": self.required}


@dataclass(frozen=True, slots=True)
class Prompt:
    """A prompt (``prompts/list``, ``prompts/get``): messages built from the facts its
    ``render`` fetches through the face's tool caller, so a prompt reads exactly what
    the caller's tools can read, and remote and local answer alike."""

    name: str
    title: str
    description: str
    arguments: tuple[PromptArgument, ...]
    render: Callable[[Fetch, Mapping[str, str]], Awaitable[list[dict[str, Any]]]]

    def listing(self) -> dict[str, Any]:
        """The MCP ``Prompt`` object."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "arguments": [argument.listing() for argument in self.arguments],
        }

    def argument(self, name: str) -> PromptArgument | None:
        return next((a for a in self.arguments if a.name == name), None)

    def check(self, arguments: Any) -> dict[str, str]:
        """The arguments as strings, or :class:`ArgumentError` naming the first problem."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise self._problem("(arguments)", "must be an object of strings")
        for key, value in arguments.items():
            argument = self.argument(str(key))
            if argument is None:
                known = ", ".join(a.name for a in self.arguments)
                raise self._problem(str(key), f"is not an argument of this prompt ({known})")
            if not isinstance(value, str):
                raise self._problem(str(key), "must be a string")
            problem = text_problem(value)
            if problem is None and value and argument.names_id:
                problem = id_problem(value)  # as the tool it is passed to would say
            if problem is not None:
                raise self._problem(str(key), problem)
        for argument in self.arguments:
            if argument.required and not arguments.get(argument.name):
                raise self._problem(argument.name, "is required")
        return {str(k): v for k, v in arguments.items() if v != ""}

    def _problem(self, key: str, message: str) -> ArgumentError:
        path = clipped(key)
        return ArgumentError(
            f"Invalid arguments for prompt {self.name}: {path}: {message}",
            {"prompt": self.name, "errors": [{"path": path, "message": message}]},
        )
