"""``python -m kestrel_sdk.generate``: writes :mod:`kestrel_sdk.tool_methods`, the SDK's
typed methods for the tools ``client.py`` does not write by hand.

A tool declared in the surface is callable at once by name (``sdk.call(name, ...)``);
its typed method is generated from the declaration: named after the tool's runtime
method, taking the tool's arguments (by their Python names and types) and returning
its result objects. A tool whose arguments name a session (``session_id``) gets its
method on :class:`~kestrel_sdk.KestrelSession`, the others on
:class:`~kestrel_sdk.KestrelSdk`. Run it after adding a tool; ``tests/test_surface.py``
fails while the file is stale (``--check`` says the same without writing).
"""

from __future__ import annotations

import json
import sys
import textwrap
import types
from pathlib import Path
from typing import Annotated, Any, Final, Union, get_args, get_origin

from kestrel_protocol import ProtocolModel
from kestrel_protocol.surface import SURFACE, Surface, Tool
from pydantic.fields import FieldInfo

__all__ = ["TOOL_METHODS", "main", "tool_methods_source"]

TOOL_METHODS: Final = Path(__file__).with_name("tool_methods.py")
"""The generated module."""
_SESSION: Final = "session_id"
_BUILTIN: Final = (str, int, float, bool)
_HEADER: Final = '''\
"""The SDK's typed methods for the tools ``client.py`` does not write by hand.

Generated from the surface (``kestrel_protocol.surface.SURFACE``) by
``uv run python -m kestrel_sdk.generate``: do not edit. ``tests/test_surface.py`` fails
while it is stale.
"""

from __future__ import annotations

'''


def _type(annotation: Any, imports: set[str]) -> str:
    """``annotation`` as source text; each protocol object it names goes in ``imports``."""
    if annotation is None or annotation is type(None):
        return "None"
    if get_origin(annotation) is Annotated:
        return _type(get_args(annotation)[0], imports)
    if get_origin(annotation) in (Union, types.UnionType):
        return " | ".join(_type(a, imports) for a in get_args(annotation))
    if annotation in _BUILTIN:
        return str(annotation.__name__)
    if isinstance(annotation, type) and issubclass(annotation, ProtocolModel):
        imports.add(annotation.__name__)
        return annotation.__name__
    raise TypeError(
        f"cannot generate a typed method taking {annotation!r}: write it by hand in client.py"
    )


def _parameter(name: str, field: FieldInfo, imports: set[str]) -> str:
    text = f"{name}: {_type(field.annotation, imports)}"
    if field.is_required():
        return text
    default = field.get_default()
    return f"{text} = {json.dumps(default) if isinstance(default, str) else repr(default)}"


def _method(tool: Tool, on_session: bool, imports: set[str]) -> list[str]:
    """The lines of ``tool``'s typed method (on a session: without ``session_id``)."""
    assert tool.runs is not None
    method = tool.runs.method
    fields = {
        k: f for k, f in tool.arguments.model_fields.items() if not (on_session and k == _SESSION)
    }
    parameters = ["self", *(_parameter(k, f, imports) for k, f in fields.items())]
    required = [f.is_required() for f in fields.values()]
    if False in required and True in required[required.index(False) :]:
        parameters.insert(1, "*")  # a required argument after an optional one: by keyword
    answer = " | ".join(_type(model, imports) for model in tool.results) or "ProtocolModel"
    head = f"    async def {method}({', '.join(parameters)}) -> {answer}:"
    if len(head) > 100:
        head = "\n".join(
            [
                f"    async def {method}(",
                *(f"        {p}," for p in parameters),
                f"    ) -> {answer}:",
            ]
        )
    doc = textwrap.wrap(tool.description, 84)
    doc[0] = '"""' + doc[0]
    doc[-1] += '"""'
    call = f'await self.run("{method}"' + "".join(f", {k}={k}" for k in fields) + ")"
    body = f"        return cast({answer}, {call})"
    if len(body) > 100:
        body = f"        found = {call}\n        return cast({answer}, found)"
    return [head, *(f"        {line}" for line in doc), body]


def _class(name: str, doc: str, methods: list[list[str]]) -> list[str]:
    lines = [
        f"class {name}:",
        f'    """{doc}"""',
        "",
        "    async def run(self, method: str, **arguments: Any) -> ProtocolModel:",
        "        raise NotImplementedError",
    ]
    for method in methods:
        lines += ["", *method]
    return lines


def tool_methods_source(surface: Surface = SURFACE) -> str:
    """The text of :mod:`kestrel_sdk.tool_methods` for ``surface``."""
    from .client import KestrelSdk, KestrelSession  # noqa: PLC0415 - they import the module

    imports = {"ProtocolModel"}
    sdk: list[list[str]] = []
    session: list[list[str]] = []
    for tool in surface.tools:
        if tool.runs is None:
            continue
        name = tool.runs.method
        if name in vars(KestrelSdk) or name in vars(KestrelSession):
            continue  # written by hand
        on_session = _SESSION in tool.arguments.model_fields
        (session if on_session else sdk).append(_method(tool, on_session, imports))
    typing = "Any, cast" if sdk or session else "Any"
    protocol = f"from kestrel_protocol import {', '.join(sorted(imports))}"
    if len(protocol) > 100:
        protocol = "\n".join(
            ["from kestrel_protocol import (", *(f"    {n}," for n in sorted(imports)), ")"]
        )
    lines = [
        f"from typing import {typing}",
        "",
        protocol,
        "",
        '__all__ = ["SdkToolMethods", "SessionToolMethods"]',
        "",
        "",
        *_class("SdkToolMethods", "Typed methods of ``KestrelSdk``, one a tool.", sdk),
        "",
        "",
        *_class(
            "SessionToolMethods",
            "Typed methods of ``KestrelSession``, one a tool (the session is its own).",
            session,
        ),
    ]
    return _HEADER + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the module (``--check``: only say whether it is current; 1 when stale)."""
    args = sys.argv[1:] if argv is None else argv
    source = tool_methods_source()
    current = TOOL_METHODS.read_text("utf-8") if TOOL_METHODS.exists() else ""
    if "--check" in args:
        if current != source:
            sys.stderr.write(f"{TOOL_METHODS} is stale: run python -m kestrel_sdk.generate\n")
            return 1
        return 0
    if current != source:
        TOOL_METHODS.write_text(source, "utf-8")
        sys.stderr.write(f"wrote {TOOL_METHODS}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
