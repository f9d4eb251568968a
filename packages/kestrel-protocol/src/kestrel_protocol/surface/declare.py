"""What a declaration of the surface says: a :class:`Tool`, how it runs (its
:class:`Binding`), its :class:`Route`, a :class:`Resource`, a :class:`Prompt`.

A tool is one call (``Transport.invoke(tool, arguments)``) plus everything a face shows
of it: name, title, description, argument and result models, scope, MCP annotations,
its ``/v1`` route and how a runtime in the caller's process runs it. Faces and
transports are generated from these values; none of them names a tool.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..model import ProtocolModel
from ..quoting import clipped
from ..wire import Wire
from .arguments import Arguments
from .results import ArgumentError
from .schemas import input_schema, output_schema, union_output_schema
from .text import id_problem, text_problem

__all__ = ["Binding", "Fetch", "Prompt", "PromptArgument", "Resource", "Route", "Tool"]

Fetch = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
"""Runs one tool through the face's caller and returns its structured result."""
_VARIABLE = re.compile(r"\{([a-zA-Z]+)\}")
_BOUND_MAX: Final = 512
"""Arguments given as plain strings a tool keeps checked (:meth:`Tool.bind`)..."""
_BOUND_TEXT: Final = 1024
"""... if their strings hold at most this many characters together (an id and a short
source, not a long program)."""
_OBJECTS: Final = (Wire, ProtocolModel)
"""What a runtime method may answer as it is (a tuple: ``isinstance`` reads it without
making a union per call; ``Wire`` first: every step answers one, and a model class's
check goes through its metaclass, twice as slow)."""


@dataclass(frozen=True, slots=True)
class Binding:
    """Which runtime method runs a tool, and what it is passed.

    ``method`` is the runtime's method. It is passed the tool's arguments by keyword,
    each field by its Python name (:meth:`~.arguments.Arguments.keywords`), and the
    caller: ``caller="principal"`` passes the caller's principal as ``principal``,
    ``"reader"`` passes whose artifacts it may read (``None``: every one) as
    ``reader``, ``None`` passes neither (:func:`~.signature.signature_problems` checks a
    method takes exactly that). ``result`` makes the runtime's answer the tool's result
    object when it is not one already: ``result(answer, arguments)``. Where the method
    runs (a worker thread or the caller's) is the executing transport's decision, not
    the surface's.
    """

    method: str
    caller: Literal["principal", "reader"] | None = "principal"
    result: Callable[[Any, Any], ProtocolModel] | None = None

    def keywords(self, principal: str, reader: str | None, arguments: Any) -> dict[str, Any]:
        """What the runtime's method is passed, by keyword."""
        values: dict[str, Any] = arguments.keywords()
        if self.caller == "principal":
            values["principal"] = principal
        elif self.caller == "reader":
            values["reader"] = reader
        return values

    def answer(self, found: Any, arguments: Any) -> ProtocolModel | Wire[Any]:
        """The tool's result object for what the runtime's method returned (a
        :class:`~kestrel_protocol.wire.Wire` as it is)."""
        if self.result is not None:
            return self.result(found, arguments)
        if not isinstance(found, _OBJECTS):
            raise TypeError(f"{self.method} answered a {type(found).__name__}, not an object")
        return found


@dataclass(frozen=True, slots=True)
class Route:
    """Where a tool lives on ``/v1``.

    ``params`` maps an argument (by its wire name) to the path parameter that carries it;
    ``query`` maps an argument to the query parameter that carries it, read as
    its argument's type says (a flag's ``true``/``false``, an integer's digits; a route
    with a query takes no other query parameter); ``body`` says what the request body
    is: nothing, the JSON arguments, or (``source``) either JSON or the raw
    ``text/x-kestrel`` source. A route whose ``media`` is not JSON answers the text of
    its result (the result object is then its path arguments, ``mediaType`` and
    ``text``).
    """

    method: Literal["GET", "POST"]
    path: str
    params: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    body: Literal["none", "json", "source"] = "none"
    media: str = "application/json"


@dataclass(frozen=True, eq=False)
class Tool:
    """One tool of the surface: what every face shows of it, and how it runs."""

    name: str
    title: str
    description: str
    arguments: type[Arguments]
    runs: Binding | None
    """How the runtime runs it; ``None`` for a face's own tool (it has ``serve``)."""
    scope: str
    read_only: bool
    destructive: bool = False
    idempotent: bool = True
    results: tuple[type[BaseModel], ...] = ()
    """The objects it may return (told apart by their ``kind``); none means any object."""
    refusals: tuple[str, ...] = ()
    """The refusal codes it may answer (besides scope, approval and input errors)."""
    effects: tuple[str, ...] = ()
    """What a call does that an operator may want to approve first (``"close"``: the
    session is closed for good; ``"grade"``: it is graded). An approval required of a
    tool is required of every tool that has all of its effects
    (:meth:`~.surface.Surface.guarded`), so no tool with the same effect walks around it."""
    route: Route | None = None
    listed: bool = True
    """An MCP tool (``tools/list``, ``tools/call``); unlisted tools serve ``/v1`` and resources."""
    text: Callable[[Any], str] | None = None
    """The text content when it is not the JSON of the result (a tape's CSV)."""
    result_description: str = ""
    serve: Callable[[Any], Awaitable[Any]] | None = None
    """A face's own tool (not the runtime's): the face runs it on the arguments and no
    transport is asked; it answers its result object or its JSON data."""

    @property
    def alias(self) -> str:
        """The seed's dotted spelling, accepted by ``tools/call`` (``kestrel.session.open``)."""
        return self.name.replace("_", ".")

    @cached_property
    def _wire_names(self) -> dict[str, str]:
        """Each argument's wire name (its alias), by its Python name."""
        return {k: (f.alias or k) for k, f in self.arguments.model_fields.items()}

    def bind(self, fields: Mapping[str, Any]) -> Any:
        """The arguments from Python-side values (``fields``, by field name; ``None`` is
        left out), checked exactly as a face checks them (the same validation, in
        pydantic-core, is cheaper than building the object unchecked): what an SDK call
        hands ``invoke``.

        Arguments given as plain strings only (an agent's session id and source, again
        and again) are checked once: checking them is a function of their values alone
        and the arguments object is immutable, so the one checked before is the one a
        new check would make (the last :data:`_BOUND_MAX` short ones are kept). Any
        other value is checked on every call."""
        plain = True
        for value in fields.values():
            if value is not None and type(value) is not str:
                plain = False
                break
        if plain:
            seen = tuple(fields.items())
            found = self._bound.get(seen)
            if found is not None:
                return found
        names = self._wire_names
        given = {}
        for key, value in fields.items():  # a loop, not a comprehension: no frame a call
            if value is not None:
                given[names.get(key, key)] = value
        found = self._check(given)
        if plain:
            _keep(self._bound, seen, given, found)
        return found

    def _check(self, given: dict[str, Any]) -> Any:
        try:
            return self._validate(given)
        except ValidationError as exc:
            raise ArgumentError.of(self.name, exc) from None

    @cached_property
    def _bound(self) -> dict[tuple[tuple[str, str | None], ...], Any]:
        """The arguments :meth:`bind` checked, by their plain string values."""
        return {}

    def parse(self, arguments: Any) -> Any:
        """The validated arguments, or :class:`ArgumentError` naming the first problem.

        Arguments of plain strings only (an agent's session id and source, on every
        step) are checked once, as :meth:`bind` checks them: the last
        :data:`_BOUND_MAX` short ones are kept, by their names and values in order."""
        if type(arguments) is dict:
            for value in arguments.values():
                if type(value) is not str:
                    break
            else:
                seen = tuple(arguments.items())
                found = self._parsed.get(seen)
                if found is None:
                    found = self._check(arguments)
                    _keep(self._parsed, seen, arguments, found)
                return found
        elif not isinstance(arguments, Mapping):
            raise ArgumentError(
                f"Invalid arguments for {self.name}: (arguments): must be an object",
                {
                    "tool": self.name,
                    "errors": [{"path": "(arguments)", "message": "not an object"}],
                },
            )
        return self._check(arguments)

    @cached_property
    def _parsed(self) -> dict[tuple[tuple[str, str], ...], Any]:
        """The arguments :meth:`parse` checked, by their plain string values (wire names)."""
        return {}

    @cached_property
    def _validate(self) -> Callable[[Any], Any]:
        """The arguments model's validation (the model's own schema and config): its
        pydantic-core validator's, without ``model_validate``'s or the adapter's per-call
        keyword handling in Python: every call of every face passes here."""
        return TypeAdapter(self.arguments).validator.validate_python

    def result_model(self, data: Any) -> type[BaseModel] | None:
        """Which of :attr:`results` ``data`` is (by its ``kind`` when there are several)."""
        if len(self.results) <= 1:
            return self.results[0] if self.results else None
        kind = data.get("kind") if isinstance(data, Mapping) else None
        for model in self.results:
            declared = model.model_fields.get("kind")
            if declared is not None and declared.default == kind:
                return model
        return self.results[0]

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
    ``updated_by`` names the effects of the tool calls that change it (a session's frame:
    ``trade``, ``close``): where subscriptions work, a subscriber is told after each
    such call made with the arguments the resource projects.
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
    updated_by: tuple[str, ...] = ()

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


def _keep(memo: dict[Any, Any], key: Any, given: Mapping[str, str], found: Any) -> None:
    """Remember ``found``, the check of plain-string arguments ``given``, under ``key`` in
    ``memo`` (:meth:`Tool.bind`'s or :meth:`Tool.parse`'s) when they are short: the last
    :data:`_BOUND_MAX` of up to :data:`_BOUND_TEXT` characters in all."""
    if sum(map(len, given.values())) <= _BOUND_TEXT:
        if len(memo) >= _BOUND_MAX:
            memo.clear()
        memo[key] = found
