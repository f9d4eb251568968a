"""A transport that serves only some scenarios of its catalog: a trial's, minted for one
sample.

A pair's disguised sample must not see its labelled twin: an agent that could list the
catalog and open the twin at its own bar would match returns, learn the real name and
dates and trade on what it remembers, the twin being no bar ahead (``no-lookahead``
passes). So a trial is given the scenarios of its sample only, and every tool that names
a scenario passes through :meth:`ConfinedTransport.invoke`: the catalog lists those
scenarios alone (its root that of the list it shows), and any other id is refused
``UNKNOWN_SCENARIO`` with the very refusal of an id the catalog lacks
(:func:`unknown_scenario`), so the refusal does not tell that the twin exists. Tools bound
to a session (history, news, submit, grade, proof) reach only the principal's own
sessions, each opened here on an allowed scenario.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from .errors import KestrelError, RefusalCode
from .model import ProtocolModel
from .objects.catalog import Catalog
from .ports import Transport
from .wire import Wire

if TYPE_CHECKING:
    from .surface.arguments import Arguments
    from .surface.declare import Tool

__all__ = ["ConfinedTransport", "unknown_scenario"]


def unknown_scenario(scenario_id: str) -> KestrelError:
    """The refusal of a scenario id the catalog (as the caller sees it) lacks."""
    return KestrelError(
        RefusalCode.UNKNOWN_SCENARIO,
        f"no scenario {scenario_id!r} in the catalog",
        {"scenario": scenario_id},
    )


class ConfinedTransport:
    """``inner`` as a caller allowed only ``scenarios`` sees it."""

    def __init__(self, inner: Transport, scenarios: Collection[str]) -> None:
        self.inner = inner
        self.scenarios = frozenset(scenarios)

    async def invoke(self, tool: Tool, arguments: Arguments) -> ProtocolModel | Wire[Any]:
        named = getattr(arguments, "scenario", None)
        if isinstance(named, str) and named not in self.scenarios:
            raise unknown_scenario(named)
        result = await self.inner.invoke(tool, arguments)
        if isinstance(result, Wire) and result.cls is Catalog:
            result = result.model()
        if isinstance(result, Catalog):
            data = result.to_json()
            data["scenarios"] = [s for s in data["scenarios"] if s["id"] in self.scenarios]
            return Catalog.with_root(**data)
        return result

    async def aclose(self) -> None:
        await self.inner.aclose()
