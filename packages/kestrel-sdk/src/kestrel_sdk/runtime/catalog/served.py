"""The catalog as one runtime serves it: loaded once on first use, some scenarios sealed.

A sealed scenario's tape is never served, nor a bar after a session's clock: the
scenario is served in its sealed view (no description, no tape end). A scenario is
sealed when its ``scenario.toml`` says so or the runtime seals it. A title written for a
sealed scenario (``sealed = true``: ``kestrel scenario new --sealed``, ``kestrel
scenario disguise --sealed``) is the operator's and served; a scenario the runtime
seals was titled to be read openly ("ACME daily, crash and recovery" tells what comes),
so it is served under the opaque title ``Sealed scenario`` (its roots unchanged: the
catalog entry and sealed view carry the full scenario's root).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from kestrel_protocol import Catalog, KestrelError, RefusalCode, Scenario, SealedScenario

from .lineage import Lineages
from .loader import load_catalog
from .model import CatalogIndex, LoadedScenario
from .objects import catalog_object

__all__ = ["OPAQUE_TITLE", "ServedCatalog"]

OPAQUE_TITLE = "Sealed scenario"


class ServedCatalog:
    """The catalog at ``paths`` (or ``index``, when one is supplied), sealing ``sealed``
    besides the scenarios whose ``scenario.toml`` seals them."""

    def __init__(
        self,
        paths: Sequence[str | Path] | None,
        index: CatalogIndex | None = None,
        sealed: Iterable[str] = (),
    ) -> None:
        self._paths = list(paths) if paths is not None else None
        self._index = index  # tests and embedders may supply one
        self._sealed = frozenset(sealed)
        self._catalog: Catalog | None = None
        self._lineages: Lineages | None = None
        self._lock = threading.Lock()

    @property
    def index(self) -> CatalogIndex:
        """The catalog of this process, loaded once on first use."""
        index = self._index
        if index is None:
            with self._lock:
                if self._index is None:
                    self._index = load_catalog(self._paths)
                index = self._index
        return index

    @property
    def lineages(self) -> Lineages:
        """The lineages of the catalog (a scenario and its disguised twins)."""
        lineages = self._lineages
        if lineages is None:
            lineages = self._lineages = Lineages(self.index)
        return lineages

    def loaded(self, scenario_id: str) -> LoadedScenario:
        """The scenario; ``UNKNOWN_SCENARIO`` when the catalog has none by that id."""
        loaded = self.index.get(scenario_id)
        if loaded is None:
            raise KestrelError(
                RefusalCode.UNKNOWN_SCENARIO,
                f"no scenario {scenario_id!r} in the catalog",
                {"scenario": scenario_id},
            )
        return loaded

    def sealed(self, scenario_id: str) -> bool:
        """Whether no face serves the scenario's tape or a bar after a session's clock."""
        loaded = self.index.get(scenario_id)
        return scenario_id in self._sealed or (loaded is not None and loaded.sealed)

    def catalog(self) -> Catalog:
        """The catalog, each scenario marked ``sealed`` as this runtime serves it."""
        catalog = self._catalog
        if catalog is None:
            index = self.index
            catalog = index.catalog
            if self._sealed & set(index.ids()):
                scenarios = [index.get(i) for i in index.ids()]
                sealed = [i for i in index.ids() if self.sealed(i)]
                catalog = catalog_object(
                    (self._titled(s) for s in scenarios if s is not None), sealed
                )
            self._catalog = catalog
        return catalog

    def scenario(self, scenario_id: str) -> Scenario | SealedScenario:
        """The scenario; a sealed one's sealed view (no description, no tape end)."""
        loaded = self.loaded(scenario_id)
        if self.sealed(scenario_id):
            return SealedScenario.of(self._titled(loaded))
        return loaded.scenario

    def _titled(self, loaded: LoadedScenario) -> Scenario:
        """The scenario as served: a title it was not given for sealing made opaque."""
        if loaded.id in self._sealed and not loaded.sealed:
            return loaded.scenario.model_copy(update={"title": OPAQUE_TITLE})
        return loaded.scenario

    def with_tape(self, scenario_id: str) -> LoadedScenario:
        """The scenario whose tape may be served; ``SCENARIO_SEALED`` for a sealed one."""
        loaded = self.loaded(scenario_id)
        if self.sealed(scenario_id):
            raise KestrelError(
                RefusalCode.SCENARIO_SEALED,
                f"scenario {scenario_id!r} is sealed: its tape is not served (the catalog "
                "lists its tape root); read the bars up to your clock with the session's "
                "history",
                {"scenario": scenario_id, "tapeRoot": loaded.scenario.tape.root},
            )
        return loaded
