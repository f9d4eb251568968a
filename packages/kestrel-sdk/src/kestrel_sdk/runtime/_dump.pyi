"""The compiled runtime's C primitive (``_dump.c``); absent from a pure-Python install."""

from collections.abc import Callable
from typing import Any

def configure(
    plans: dict[type[Any], Any], plan_for: Callable[[type[Any]], None], descriptors: Any, /
) -> None: ...
def dump(obj: Any, /) -> dict[str, Any] | None: ...
