"""The argument checks both transports run before a call leaves the caller.

``CHECK[method]`` is the ``check`` of the tool that projects that ``Transport`` method,
so a Python caller with a bad label (or a lone surrogate, or a wrong type) gets the same
``INVALID_ARGUMENT`` (code, message, detail) as an MCP or HTTP caller of that tool,
whichever transport it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from kestrel_protocol.surface import SURFACE

__all__ = ["CHECK"]

CHECK: Final[Mapping[str, Callable[..., None]]] = {
    tool.projects: tool.check for tool in reversed(SURFACE.tools)
}
"""``Transport`` method name -> the check of the (first) tool that projects it."""
