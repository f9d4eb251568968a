"""What Inspect imports through the ``inspect_ai`` entry point: the registered task and
the offline agents' model API (``--model kestrel/momentum``)."""

from __future__ import annotations

from .scripted import ScriptedAgent
from .task import kestrel_trading

__all__ = ["ScriptedAgent", "kestrel_trading"]
