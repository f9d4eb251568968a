"""Whether a runtime method takes what its tool's :class:`~.declare.Binding` passes it.

A binding passes the tool's arguments by keyword, each field by its Python name, and
the caller as ``principal`` or ``reader`` (:meth:`~.declare.Binding.keywords`). A field
the method has no parameter for, a parameter nothing fills, or a caller under another
name would fail (or, worse, fill the wrong parameter) only when the tool is called:
:func:`signature_problems` finds each of them from the declaration, so a test can check
every tool at once. The method's parameters are also expected in the order the tool
reads (the principal first, then the fields in their model's order, the reader last),
so a Python caller of the runtime reads them as an agent does.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .declare import Tool

__all__ = ["signature_problems"]

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def signature_problems(tool: Tool, method: Callable[..., Any]) -> list[str]:
    """What is wrong with ``method`` (bound: no ``self``) as the runtime method of
    ``tool``, each problem naming the tool and the argument or parameter; empty when
    it takes exactly what the tool's binding passes."""
    binding = tool.runs
    if binding is None:
        return []
    signature = inspect.signature(method)
    name = f"{tool.name}: {binding.method}{signature}"
    parameters = signature.parameters
    passed = list(tool.arguments.model_fields)
    if binding.caller == "principal":
        passed.insert(0, "principal")
    elif binding.caller == "reader":
        passed.append("reader")
    problems = []
    for key in passed:
        parameter = parameters.get(key)
        if parameter is None or parameter.kind not in _NAMED:
            what = f"argument {key!r}" if key in tool.arguments.model_fields else "the caller"
            problems.append(f"{name} takes no keyword {key!r} for {what}")
    for key, parameter in parameters.items():
        unfilled = parameter.default is inspect.Parameter.empty and parameter.kind in _NAMED
        if unfilled and key not in passed:
            problems.append(f"{name}: parameter {key!r} is required but no argument fills it")
    order = [key for key in parameters if key in passed]
    if not problems and order != passed:
        first = next(a for a, b in zip(passed, order, strict=True) if a != b)
        problems.append(
            f"{name}: argument {first!r} is out of order: the method takes "
            f"({', '.join(order)}), the tool passes ({', '.join(passed)})"
        )
    return problems
