"""The input rules for strings, shared by every face (docs/spec.md §13).

Every string argument reaches canonical JSON (a pentad, a refusal's detail, an audit
digest), which cannot hold a lone surrogate: :data:`Text` refuses one. A label names a
session for good, so :data:`Label` is stricter: 1 to 64 printable characters (no control
characters, no lone surrogates). A string ``/v1`` carries in its URL is at most
:data:`URL_TEXT_MAX` characters (:data:`Short`: no symbol, news item id or cursor is that
long, and a URL has a length limit); an id (a session's, a scenario's, a root) travels
as one segment of a path, so :data:`Id` also refuses what no segment carries: nothing,
a ``/``, ``.`` or ``..`` (which a URL resolves away). Each is a pydantic type, so an
argument model says the rule once and every face refuses alike (``INVALID_ARGUMENT``),
the SDK's remote transport before it sends anything.
"""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

__all__ = [
    "ID_RULE",
    "LABEL_MAX",
    "LABEL_RULE",
    "SHORT_RULE",
    "TEXT_CHECK",
    "URL_TEXT_MAX",
    "Id",
    "Label",
    "Short",
    "Text",
    "id_problem",
    "label_problem",
    "text_problem",
]

LABEL_MAX: Final = 64
LABEL_RULE: Final = (
    f"a label is 1 to {LABEL_MAX} printable characters (no control characters or lone surrogates)"
)
URL_TEXT_MAX: Final = 128
SHORT_RULE: Final = f"at most {URL_TEXT_MAX} characters (it travels in a /v1 URL)"
ID_RULE: Final = (
    f"an id is 1 to {URL_TEXT_MAX} characters, without '/' and not '.' or '..' "
    "(it is one segment of a /v1 path)"
)
_DOTS: Final = frozenset((".", ".."))
"""The dot segments a URL resolves away (RFC 3986 §5.2.4)."""
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


def id_problem(value: str) -> str | None:
    """Why ``value`` is not an id, or ``None`` when it may be one."""
    if 0 < len(value) <= URL_TEXT_MAX and "/" not in value and value not in _DOTS:
        return None
    return ID_RULE


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


def _short(value: str) -> str:
    if len(value) > URL_TEXT_MAX:
        raise PydanticCustomError("short", SHORT_RULE)
    return _text(value)


def _id(value: str) -> str:
    if id_problem(value) is not None:
        raise PydanticCustomError("id", ID_RULE)
    return _text(value)


TEXT_CHECK: Final = AfterValidator(_text)
"""The validator of :data:`Text` (a model whose fields all carry it is plain text)."""

Text = Annotated[str, TEXT_CHECK]
"""A string that can reach canonical JSON (no lone surrogates)."""

Short = Annotated[str, AfterValidator(_short)]
"""A string a ``/v1`` URL's query carries: at most :data:`URL_TEXT_MAX` characters, no
lone surrogate."""

Id = Annotated[str, AfterValidator(_id)]
"""A session id, a scenario id or a root: 1 to :data:`URL_TEXT_MAX` characters, no
``/``, not ``.`` or ``..``, no lone surrogate."""

Label = Annotated[
    str,
    AfterValidator(_label),
    Field(json_schema_extra={"minLength": 1, "maxLength": LABEL_MAX}),
]
"""A session label: 1-64 printable characters."""
