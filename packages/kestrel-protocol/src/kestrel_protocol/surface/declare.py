"""What a declaration of a tool says: a :class:`Tool`, how it runs (its
:class:`Binding`) and its :class:`Route`. A resource (:mod:`.resource`) projects a
tool's call; a prompt (:mod:`.prompt`) reads through the face's tools.

A tool is one call (``Transport.invoke(tool, arguments)``) plus everything a face shows
of it: name, title, description, argument and result models, scope, MCP annotations,
its ``/v1`` route and how a runtime in the caller's process runs it. Faces and
transports are generated from these values; none of them names a tool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..model import ProtocolModel
from ..wire import Wire
from .arguments import Arguments
from .results import ArgumentError
from .schemas import input_schema, output_schema, union_output_schema

__all__ = ["Binding", "Route", "Tool"]

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
    the surface's; ``steps`` is a fact it decides by.
    """

    method: str
    caller: Literal["principal", "reader"] | None = "principal"
    result: Callable[[Any, Any], ProtocolModel] | None = None
    steps: bool = False
    """The method steps a session (a submission): it appends to the session's journal,
    waiting for the store's write lock while another process holds it, and once the
    runtime has the submission it applies or is refused, and that stands."""

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


def _keep(memo: dict[Any, Any], key: Any, given: Mapping[str, str], found: Any) -> None:
    """Remember ``found``, the check of plain-string arguments ``given``, under ``key`` in
    ``memo`` (:meth:`Tool.bind`'s or :meth:`Tool.parse`'s) when they are short: the last
    :data:`_BOUND_MAX` of up to :data:`_BOUND_TEXT` characters in all."""
    if sum(map(len, given.values())) <= _BOUND_TEXT:
        if len(memo) >= _BOUND_MAX:
            memo.clear()
        memo[key] = found
