"""Lineages: a scenario and its disguised twins are one lineage (their bars map one to
one by index), and a principal's horizon is kept per lineage.

A scenario that is no disguise is its own lineage, keyed by its id (so the horizon rows
of every ordinary scenario are keyed as they always were). A disguise records in its
``scenario.toml`` the tag of its source's bars (:func:`~.reveal.lineage_tag`); its key
is the id of the scenario of this catalog whose tag that is (the first by id when
several share a tape), or the tag itself when its source is not in the catalog (its
twins still share it).
"""

from __future__ import annotations

from .model import CatalogIndex, LoadedScenario
from .reveal import lineage_tag

__all__ = ["Lineages"]


class Lineages:
    """The lineages of one catalog."""

    def __init__(self, index: CatalogIndex) -> None:
        scenarios = [s for s in (index.get(i) for i in sorted(index.ids())) if s is not None]
        by_tag: dict[str, str] = {}
        for loaded in scenarios:
            if loaded.lineage is None:
                by_tag.setdefault(lineage_tag(loaded), loaded.id)
        self._keys: dict[str, str] = {}
        self._members: dict[str, list[LoadedScenario]] = {}
        for loaded in scenarios:
            key = (
                loaded.id if loaded.lineage is None else by_tag.get(loaded.lineage, loaded.lineage)
            )
            self._keys[loaded.id] = key
            self._members.setdefault(key, []).append(loaded)

    def key(self, scenario_id: str) -> str:
        """The horizon key of the scenario's lineage (its own id unless it has twins)."""
        return self._keys.get(scenario_id, scenario_id)

    def twins(self, scenario_id: str) -> list[LoadedScenario]:
        """Every scenario of the lineage, the scenario included, by id."""
        return list(self._members.get(self.key(scenario_id), []))
