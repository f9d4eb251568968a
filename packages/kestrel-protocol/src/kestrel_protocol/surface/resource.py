"""A :class:`Resource` of the surface (or a template of them): a URI read as the tool
call it projects."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Resource"]

_VARIABLE = re.compile(r"\{([a-zA-Z]+)\}")


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
