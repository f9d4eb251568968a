"""JSON Schemas for tool inputs and outputs, generated from the protocol models.

Generated, not hand-written, so a schema can never drift from the object the tool
returns. References are inlined (no ``$defs``): every host we target validates a
self-contained schema, and some older ones do not resolve ``$ref`` at all. The root of
every schema is ``type: "object"``, which the 2025-06-18 schema requires of
``outputSchema``. Descriptions come from the models' docstrings, written in
reStructuredText for the API docs; hosts render Markdown (or plain text), so their roles
and literals are rewritten as Markdown code (:func:`markdown`).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from pydantic import BaseModel

__all__ = ["inline_refs", "input_schema", "markdown", "output_schema", "union_output_schema"]

_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?(?:[\w.]*\.)?([^`<]+?)`")  # :class:`~a.B` -> B
_LITERAL = re.compile(r"``([^`]+)``")  # ``x`` -> x in one pair of backticks


def markdown(text: str) -> str:
    """``text`` with reStructuredText roles and literals as Markdown code spans."""
    return _LITERAL.sub(r"`\1`", _ROLE.sub(r"`\1`", text))


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace every local ``$ref`` with the definition it names and drop ``$defs``."""
    defs: dict[str, Any] = schema.get("$defs", {})

    def member(key: str, value: Any) -> Any:
        return markdown(value) if key == "description" and isinstance(value, str) else walk(value)

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = walk(copy.deepcopy(defs[ref.removeprefix("#/$defs/")]))
                rest = {k: member(k, v) for k, v in node.items() if k != "$ref"}
                return {**target, **rest}
            return {k: member(k, v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    result: dict[str, Any] = walk(schema)
    return result


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The ``inputSchema`` of a tool whose arguments are ``model``."""
    return inline_refs(model.model_json_schema(by_alias=True, mode="validation"))


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The ``outputSchema`` of a tool that returns ``model``'s JSON."""
    return inline_refs(model.model_json_schema(by_alias=True, mode="serialization"))


def union_output_schema(*models: type[BaseModel], description: str) -> dict[str, Any]:
    """An object schema that is one of several protocol objects (e.g. a grade or an operation)."""
    return {
        "type": "object",
        "description": description,
        "anyOf": [output_schema(model) for model in models],
    }
