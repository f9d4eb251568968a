"""Durations as operators write them on every command line (``kestrel run --wait``,
``kestrel-door feed replay --every``): ``90`` (seconds), ``30s``, ``500ms``, ``10m``, ``2h``."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["duration_seconds"]

_DURATION: Final = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)?")
_SECONDS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def duration_seconds(text: str) -> float:
    """The seconds ``text`` names; ``ValueError`` naming the forms otherwise."""
    found = _DURATION.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"{text!r} is not a duration such as 30s, 500ms, 10m or 2h")
    return float(found.group(1)) * _SECONDS[found.group(2)]
