"""The catalog as one runtime serves it: loaded once on first use, some scenarios sealed.

A sealed scenario's tape is never served, nor a bar after a session's clock: the
scenario is served in its sealed view (no description, no tape end). A scenario is
sealed when its ``scenario.toml`` says so or the runtime seals it. A title written for a
sealed scenario (``sealed = true``: ``kestrel scenario new --sealed``, ``kestrel
scenario disguise --sealed``) is the operator's and served; a scenario the runtime
seals was titled to be read openly ("ACME daily, crash and recovery" tells what comes),
so it is served under the opaque title ``Sealed scenario`` (its roots unchanged: the
catalog entry and sealed view carry the full scenario's root). A scenario sealed as
``SOURCE=SERVED`` is served as a renamed copy under the operator's neutral id
(:mod:`.renamed`), and ``SOURCE`` is not served at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from kestrel_protocol import Catalog, KestrelError, RefusalCode, Scenario, SealedScenario
from kestrel_protocol.confined import unknown_scenario

from .lineage import Lineages
from .loader import load_catalog
from .model import CatalogIndex, LoadedScenario
from .objects import catalog_object
from .renamed import OPAQUE_TITLE, renamed_copy, seal_specs

__all__ = ["OPAQUE_TITLE", "ServedCatalog"]


class ServedCatalog:
    """The catalog at ``paths`` (or ``index``, when one is supplied; the shapes of its
    checked tapes remembered in ``home``: ``load_catalog``), sealing ``sealed``
    besides the scenarios whose ``scenario.toml`` seals them. An entry of ``sealed`` is
    a scenario id, or ``ID=SERVED_ID`` to serve it as a renamed copy (``ValueError`` for
    a malformed entry; ``UNKNOWN_SCENARIO`` on first use for an id the catalog lacks or a
    served id it already has)."""

    def __init__(
        self,
        paths: Sequence[str | Path] | None,
        index: CatalogIndex | None = None,
        sealed: Iterable[str] = (),
        home: Path | None = None,
    ) -> None:
        self._paths = list(paths) if paths is not None else None
        self._home = home
        self._source = index  # tests and embedders may supply one
        specs = seal_specs(sealed)
        self._sealed = frozenset(source for source, served in specs if served is None)
        self._renamed = {source: served for source, served in specs if served is not None}
        self._index: CatalogIndex | None = None
        self._all: CatalogIndex | None = None
        self._lineages: Lineages | None = None
        self._lock = threading.Lock()
        self.unsealed: Callable[[str], bool] = lambda scenario_id: False
        """Whether a forward scenario's tape has been published (its feed unsealed):
        until then it is sealed, whatever its ``scenario.toml`` says (the runtime sets
        this to ask its store)."""

    @property
    def index(self) -> CatalogIndex:
        """The catalog this process serves, loaded once on first use: a scenario sealed
        under a served id replaced by its renamed copy."""
        index = self._index
        if index is None:
            with self._lock:
                if self._index is None:
                    self._index, self._all = self._load()
                index = self._index
        return index

    @property
    def loaded_index(self) -> bool:
        """Whether the catalog has been loaded (reading it then reads memory alone)."""
        return self._index is not None

    @property
    def lineages(self) -> Lineages:
        """The lineages of the catalog (a scenario, its disguised twins and the scenarios
        of its bars), the sources of renamed copies included (bars shown of a copy were
        shown of its source)."""
        lineages = self._lineages
        if lineages is None:
            self.index  # noqa: B018 - loads both indexes
            assert self._all is not None
            lineages = self._lineages = Lineages(self._all)
        return lineages

    def _load(self) -> tuple[CatalogIndex, CatalogIndex]:
        """(the served index, the index with the sources of renamed copies too)."""
        source = (
            self._source if self._source is not None else load_catalog(self._paths, home=self._home)
        )
        if not self._renamed and not self._sealed & set(source.ids()):
            return source, source  # served as loaded, catalog root and all
        scenarios = {i: s for i in source.ids() if (s := source.get(i)) is not None}
        copies: dict[str, LoadedScenario] = {}
        for original, served in self._renamed.items():
            if original not in scenarios:
                raise KestrelError(
                    RefusalCode.UNKNOWN_SCENARIO,
                    f"no scenario {original!r} in the catalog: cannot seal it",
                    {"scenario": original},
                )
            if served in scenarios or served in copies:
                raise KestrelError(
                    RefusalCode.UNKNOWN_SCENARIO,
                    f"cannot serve {original!r} as {served!r}: that id is taken; choose another",
                    {"scenario": served},
                )
            copies[served] = renamed_copy(scenarios[original], served).loaded
        served_scenarios = {i: s for i, s in scenarios.items() if i not in self._renamed} | copies
        sealed = [i for i, s in served_scenarios.items() if s.sealed or i in self._sealed]
        catalog = catalog_object((self._titled(s) for s in served_scenarios.values()), sealed)
        return (
            CatalogIndex(catalog, served_scenarios, source.problems),
            CatalogIndex(source.catalog, scenarios | copies, source.problems),
        )

    def loaded(self, scenario_id: str) -> LoadedScenario:
        """The scenario; ``UNKNOWN_SCENARIO`` when the catalog has none by that id."""
        loaded = self.index.get(scenario_id)
        if loaded is None:
            raise unknown_scenario(scenario_id)
        return loaded

    def sealed(self, scenario_id: str) -> bool:
        """Whether no face serves the scenario's tape or a bar after a session's clock."""
        if scenario_id in self._sealed:
            return True
        loaded = self.index.get(scenario_id)
        if loaded is None:
            return False
        if loaded.forward:
            return not self.unsealed(scenario_id)
        return loaded.sealed

    def catalog(self) -> Catalog:
        """The catalog, each scenario marked ``sealed`` as this runtime serves it."""
        return self.index.catalog

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
