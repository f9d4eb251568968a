"""What Inspect imports through the ``inspect_ai`` entry point: the registered task."""

from __future__ import annotations

from .task import kestrel_trading

__all__ = ["kestrel_trading"]
