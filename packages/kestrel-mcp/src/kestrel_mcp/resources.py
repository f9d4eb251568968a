"""Resources, resource templates and argument completion.

Every read returns the protocol object verbatim (its JSON, or the tape's CSV), and
goes through the SDK like everything else: even the catalog is ``sdk.catalog()``.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = [
    "ARTIFACT_PREFIX",
    "CATALOG_URI",
    "SCENARIO_PREFIX",
    "TEMPLATES",
    "ResourceRef",
    "parse_uri",
]

CATALOG_URI: Final = "kestrel://catalog"
SCENARIO_PREFIX: Final = "kestrel://catalog/scenarios/"
ARTIFACT_PREFIX: Final = "kestrel://artifacts/"

_SCENARIO_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_ROOT = re.compile(r"sha256:[0-9a-f]{64}")

TEMPLATES: Final[tuple[dict[str, Any], ...]] = (
    {
        "uriTemplate": SCENARIO_PREFIX + "{id}",
        "name": "scenario",
        "title": "Kestrel scenario",
        "description": "A scenario's full description (kestrel.scenario): instruments, tape, "
        "account, fees and fill terms.",
        "mimeType": "application/json",
    },
    {
        "uriTemplate": SCENARIO_PREFIX + "{id}/tape",
        "name": "scenario-tape",
        "title": "Kestrel scenario tape",
        "description": "A scenario's tape as canonical CSV "
        "(time,symbol,open,high,low,close,volume).",
        "mimeType": "text/csv",
    },
    {
        "uriTemplate": ARTIFACT_PREFIX + "{root}",
        "name": "artifact",
        "title": "Kestrel artifact",
        "description": "Any stored object (session record, pentad, blotter, grade) by its root, "
        "sha256:<hex>, verbatim.",
        "mimeType": "application/json",
    },
)


class ResourceRef:
    """A parsed Kestrel resource URI: which kind, and its one parameter."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value: str) -> None:
        self.kind = kind
        self.value = value


def parse_uri(uri: str) -> ResourceRef | None:
    """The resource a URI names, or ``None`` when it names nothing Kestrel serves."""
    if uri == CATALOG_URI:
        return ResourceRef("catalog", "")
    if uri.startswith(SCENARIO_PREFIX):
        rest = uri.removeprefix(SCENARIO_PREFIX)
        if rest.endswith("/tape"):
            scenario = rest.removesuffix("/tape")
            return ResourceRef("tape", scenario) if _SCENARIO_ID.fullmatch(scenario) else None
        return ResourceRef("scenario", rest) if _SCENARIO_ID.fullmatch(rest) else None
    if uri.startswith(ARTIFACT_PREFIX):
        root = uri.removeprefix(ARTIFACT_PREFIX)
        if _ROOT.fullmatch(root):
            return ResourceRef("artifact", root)
        # Hosts that URL-encode the template variable send sha256%3A…
        decoded = root.replace("%3A", ":").replace("%3a", ":")
        return ResourceRef("artifact", decoded) if _ROOT.fullmatch(decoded) else None
    return None
