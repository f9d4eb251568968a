"""Lineages: a scenario, its disguised twins and the scenarios of the same bars are one
lineage (their bars map one to one by index), and a principal's horizon is kept per
lineage.

A lineage's key is its tag (:func:`~.reveal.lineage_tag`: a tag of its bars' tape root,
which a disguise records in its ``scenario.toml`` as its source's), so every process
keys it the same whatever else its catalog holds: scouting one scenario of those bars
is scouting them all. A forward scenario is keyed by its id (its tape root is its
declared prefix's, often none, not the bars it grows), and so is a twin (a disguise, a
renamed copy) of a forward scenario of this catalog whose tag no whole tape shares.
Before, a lineage was keyed by the first id of this catalog's scenarios of its bars, so
two processes with different catalogs on one store (one also holding a copy whose id
sorted first) kept two rows for one lineage, and a scout in one went unseen in the
other; a store of those keys is re-keyed when opened (:mod:`..horizon`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .account_terms import margin_keys
from .builder import terms_toml
from .model import CatalogIndex, LoadedScenario
from .reveal import lineage_tag
from .terms import ScenarioTerms, parse_terms

__all__ = ["Lineages", "twin_toml"]


def twin_toml(
    source: LoadedScenario,
    *,
    scenario_id: str,
    title: str,
    description: str,
    instruments: Sequence[Mapping[str, str | int]],
    sealed: bool,
) -> tuple[str, ScenarioTerms]:
    """The ``scenario.toml`` and terms of a twin of ``source`` (a disguise, a renamed
    sealed copy): the source's account, fees, fill and interval under a new id, title,
    description and instruments, recording the source's lineage (and its
    ``max_open_orders``), sealed when ``sealed``. ``ValueError`` naming the problems
    when they are not valid terms."""
    scenario = source.scenario
    account, fees, fill = scenario.account, scenario.fees, scenario.fill
    toml = terms_toml(
        scenario_id=scenario_id,
        title=title,
        description=description,
        interval=scenario.tape.interval,
        bars_per_year=scenario.tape.bars_per_year,
        cash=account.cash,
        shortable=account.shortable,
        max_position=account.max_position,
        max_drawdown=account.max_drawdown,
        fee_bps=fees.bps,
        fee_minimum=fees.minimum,
        participation=fill.participation,
        slippage_bps=fill.slippage_bps,
        instruments=instruments,
        margin=margin_keys(account.to_json()),
    )
    extra = [f'lineage = "{lineage_tag(source)}"']
    if sealed:
        extra.append("sealed = true")
    if source.max_open_orders is not None:
        extra.append(f"max_open_orders = {source.max_open_orders}")
    if scenario.news_in_frame is not None:
        extra.append(f"news_in_frame = {scenario.news_in_frame}")
    toml = "\n".join(extra) + "\n" + toml  # top-level keys before the first table
    terms = parse_terms(toml)
    if isinstance(terms, list):
        raise ValueError("; ".join(problem.reason for problem in terms))
    return toml, terms


class Lineages:
    """The lineages of one catalog."""

    def __init__(self, index: CatalogIndex) -> None:
        scenarios = [s for s in (index.get(i) for i in sorted(index.ids())) if s is not None]
        ordinary = [s for s in scenarios if s.lineage is None]
        whole = {lineage_tag(s) for s in ordinary if not s.forward}
        forward: dict[str, str] = {}  # a forward scenario's tag -> its id, for its twins
        for loaded in ordinary:
            if loaded.forward and lineage_tag(loaded) not in whole:
                forward.setdefault(lineage_tag(loaded), loaded.id)
        self._keys: dict[str, str] = {}
        self._members: dict[str, list[LoadedScenario]] = {}
        for loaded in scenarios:
            tag = lineage_tag(loaded)
            own = loaded.lineage is None and loaded.forward  # its root: the prefix alone
            key = loaded.id if own else forward.get(tag, tag)
            self._keys[loaded.id] = key
            self._members.setdefault(key, []).append(loaded)

    def key(self, scenario_id: str) -> str:
        """The horizon key of the scenario's lineage (its tag; a forward scenario's id)."""
        return self._keys.get(scenario_id, scenario_id)

    def keys(self) -> dict[str, str]:
        """Every scenario's horizon key, by its id."""
        return dict(self._keys)

    def twins(self, scenario_id: str) -> list[LoadedScenario]:
        """Every scenario of the lineage, the scenario included, by id."""
        return list(self._members.get(self.key(scenario_id), []))
