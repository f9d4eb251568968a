"""What a declaration of the surface says: a :class:`Tool`, its :class:`Route`, a
:class:`Resource`, a :class:`Prompt`.

A tool is one call its face projects (``call(context, arguments)``, normally a
``Transport`` method) plus everything a face shows of it: name, title, description,
argument and result models, scope, MCP annotations and its ``/v1`` route. Faces are
generated from these values; none of them names a tool.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from .arguments import Arguments
from .results import ArgumentError
from .schemas import input_schema, output_schema, union_output_schema
from .text import TEXT_CHECK, text_problem

__all__ = ["Fetch", "Prompt", "PromptArgument", "Resource", "Route", "Tool"]

C = TypeVar("C")
Fetch = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
"""Runs one tool through the face's caller and returns its structured result."""
_VARIABLE = re.compile(r"\{([a-zA-Z]+)\}")


@dataclass(frozen=True, slots=True)
class Route:
    """Where a tool lives on ``/v1``.

    ``params`` maps an argument (by its wire name) to the path parameter that carries it;
    ``query`` maps an argument to the query parameter that carries it, read as
    its argument's type says (a flag's ``true``/``false``, an integer's digits; a route
    with a query takes no other query parameter); ``body`` says what the request body
    is: nothing, the JSON arguments, or (``source``) either JSON or the raw
    ``text/x-kestrel`` source.
    """

    method: Literal["GET", "POST"]
    path: str
    params: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    body: Literal["none", "json", "source"] = "none"
    media: str = "application/json"


@dataclass(frozen=True, eq=False)
class Tool(Generic[C]):
    """One tool of the surface, and the call it projects."""

    name: str
    title: str
    description: str
    arguments: type[Arguments]
    call: Callable[[C, Any], Awaitable[Any]]
    """Runs the tool on its context: returns the result's JSON data (``dict``), or the
    protocol object itself (the dispatcher dumps it to data and to text)."""
    projects: str
    """The ``Transport`` method the call projects (``open_session``)."""
    scope: str
    read_only: bool
    destructive: bool = False
    idempotent: bool = True
    results: tuple[type[BaseModel], ...] = ()
    """The protocol objects it may return; none means any object."""
    refusals: tuple[str, ...] = ()
    """The refusal codes it may answer (besides scope, approval and input errors)."""
    route: Route | None = None
    listed: bool = True
    """An MCP tool (``tools/list``, ``tools/call``); unlisted tools serve ``/v1`` and resources."""
    text: Callable[[Any], str] | None = None
    """The text content when it is not the JSON of the result (a tape's CSV)."""
    result_description: str = ""

    @property
    def alias(self) -> str:
        """The seed's dotted spelling, accepted by ``tools/call`` (``kestrel.session.open``)."""
        return self.name.replace("_", ".")

    @cached_property
    def _plain_text(self) -> bool:
        """Whether every argument is :data:`~.text.Text` (ASCII strings then always fit)."""
        return all(TEXT_CHECK in f.metadata for f in self.arguments.model_fields.values())

    def check(self, **fields: Any) -> None:
        """Check Python-side arguments (by field name) exactly as a face would check them.

        A transport calls this so a direct SDK caller is refused like an MCP or HTTP one.
        ASCII strings for a plain-text model are let through without a model round trip
        (an ASCII string has no lone surrogate): the agent loop's hot path.
        """
        if self._plain_text:
            for value in fields.values():  # a loop: all(genexpr) costs a generator per call
                if type(value) is not str or not value.isascii():
                    break
            else:
                return
        model = self.arguments.model_fields
        self.parse(
            {
                (model[k].alias or k) if k in model else k: v
                for k, v in fields.items()
                if v is not None
            }
        )

    def parse(self, arguments: Any) -> Any:
        """The validated arguments, or :class:`ArgumentError` naming the first problem."""
        if type(arguments) is not dict and not isinstance(arguments, Mapping):
            raise ArgumentError(
                f"Invalid arguments for {self.name}: (arguments): must be an object",
                {
                    "tool": self.name,
                    "errors": [{"path": "(arguments)", "message": "not an object"}],
                },
            )
        try:  # model_validate's own validator, without its wrapper (every call's path)
            return self.arguments.__pydantic_validator__.validate_python(arguments)
        except ValidationError as exc:
            raise ArgumentError.of(self.name, exc) from None

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        if len(self.results) == 1:
            return output_schema(self.results[0])
        if self.results:
            return union_output_schema(*self.results, description=self.result_description)
        return {"type": "object", "additionalProperties": True}

    @cached_property
    def listing(self) -> dict[str, Any]:
        """The MCP ``Tool`` object of ``tools/list``."""
        annotations: dict[str, Any] = {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "openWorldHint": False,
        }
        if not self.read_only:
            annotations["destructiveHint"] = self.destructive
            annotations["idempotentHint"] = self.idempotent
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": input_schema(self.arguments),
            "outputSchema": self.output_schema,
            "annotations": annotations,
        }


@dataclass(frozen=True, slots=True)
class Resource:
    """A resource, or a template of them, read as the tool call it projects.

    ``uri`` may hold variables (``{id}``); ``variables`` gives each one's pattern and
    ``arguments`` turns their values into the tool's arguments. ``per_scenario`` lists
    one resource per catalog scenario in ``resources/list`` (``item_name`` and
    ``item_title`` formatted with the scenario's ``id`` and ``title``); ``complete``
    names what completes a variable (``scenario`` ids or artifact ``root``s).
    """

    uri: str
    name: str
    title: str
    description: str
    mime: str
    tool: str
    variables: Mapping[str, str] = field(default_factory=dict)
    arguments: Callable[[Mapping[str, str]], dict[str, Any]] = lambda values: {}
    per_scenario: bool = False
    item_name: str = "{id}"
    item_title: str = "{title}"
    """How ``resources/list`` names and titles a per-scenario resource."""
    complete: Mapping[str, Literal["scenario", "root"]] = field(default_factory=dict)

    @property
    def is_template(self) -> bool:
        return bool(self.variables)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' values when ``uri`` is one of this resource's, else ``None``."""
        if not self.variables:
            return {} if uri == self.uri else None
        pattern = "".join(
            f"(?P<{part}>{self.variables[part]})" if i % 2 else re.escape(part)
            for i, part in enumerate(_VARIABLE.split(self.uri))
        )
        found = re.fullmatch(pattern, uri)
        return dict(found.groupdict()) if found is not None else None

    def expand(self, **values: str) -> str:
        return _VARIABLE.sub(lambda m: values[m.group(1)], self.uri)

    def template(self) -> dict[str, Any]:
        """The MCP ``ResourceTemplate`` object."""
        return {
            "uriTemplate": self.uri,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "mimeType": self.mime,
        }


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument of a prompt; ``complete`` names what completes it: scenario ids, the
    caller's grade roots, or a fixed set of values."""

    name: str
    description: str
    required: bool = True
    complete: Literal["scenario", "grade"] | tuple[str, ...] | None = None

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
            if self.argument(str(key)) is None:
                known = ", ".join(a.name for a in self.arguments)
                raise self._problem(str(key), f"is not an argument of this prompt ({known})")
            if not isinstance(value, str):
                raise self._problem(str(key), "must be a string")
            problem = text_problem(value)
            if problem is not None:
                raise self._problem(str(key), problem)
        for argument in self.arguments:
            if argument.required and not arguments.get(argument.name):
                raise self._problem(argument.name, "is required")
        return {str(k): v for k, v in arguments.items() if v != ""}

    def _problem(self, path: str, message: str) -> ArgumentError:
        return ArgumentError(
            f"Invalid arguments for prompt {self.name}: {path}: {message}",
            {"prompt": self.name, "errors": [{"path": path, "message": message}]},
        )
