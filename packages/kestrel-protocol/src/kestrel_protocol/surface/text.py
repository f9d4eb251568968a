"""The input rules for strings, shared by every face (docs/spec.md §13).

Every string argument reaches canonical JSON (a pentad, a refusal's detail, an audit
digest), which cannot hold a lone surrogate: :data:`Text` refuses one. A label names a
session for good, so :data:`Label` is stricter: 1 to 64 printable characters (no control
characters, no lone surrogates). Both are pydantic types, so an argument model says
the rule once and every face refuses alike (``INVALID_ARGUMENT``).
"""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

__all__ = [
    "LABEL_MAX",
    "LABEL_RULE",
    "TEXT_CHECK",
    "Label",
    "Text",
    "label_problem",
    "text_problem",
]

LABEL_MAX: Final = 64
LABEL_RULE: Final = (
    f"a label is 1 to {LABEL_MAX} printable characters (no control characters or lone surrogates)"
)
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot reach canonical JSON, or ``None`` when it can."""
    found = _SURROGATE.search(value)
    if found is None:
        return None
    return f"lone surrogate U+{ord(found.group()):04X} at character {found.start()}"


def label_problem(value: str) -> str | None:
    """Why ``value`` is not a label, or ``None`` when it is one."""
    if 1 <= len(value) <= LABEL_MAX and value.isprintable():
        return None
    return LABEL_RULE


def _text(value: str) -> str:
    if value.isascii():  # no lone surrogate: every tool call's ids and sources, mostly
        return value
    problem = text_problem(value)
    if problem is not None:
        raise PydanticCustomError("text", problem)
    return value


def _label(value: str) -> str:
    if label_problem(value) is not None:
        raise PydanticCustomError("label", LABEL_RULE)
    return value


TEXT_CHECK: Final = AfterValidator(_text)
"""The validator of :data:`Text` (a model whose fields all carry it is plain text)."""

Text = Annotated[str, TEXT_CHECK]
"""A string that can reach canonical JSON (no lone surrogates)."""

Label = Annotated[
    str,
    AfterValidator(_label),
    Field(json_schema_extra={"minLength": 1, "maxLength": LABEL_MAX}),
]
"""A session label: 1-64 printable characters."""
