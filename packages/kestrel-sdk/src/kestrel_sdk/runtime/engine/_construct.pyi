"""The compiled runtime's C primitive (``_construct.c``); absent from a pure-Python install."""

from typing import Any

def construct(
    cls: type[Any],
    members: dict[str, Any],
    fields_set: set[str],
    extra: dict[str, Any],
    descriptors: tuple[Any, ...],
    /,
) -> Any: ...
