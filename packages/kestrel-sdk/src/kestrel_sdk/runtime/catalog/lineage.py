"""Lineages: a scenario, its disguised twins and the scenarios of the same bars are one
lineage (their bars map one to one by index), and a principal's horizon is kept per
lineage.

A scenario that is no disguise is keyed by its id, or, when others of this catalog have
the same tape (an import of bars another scenario ships: the same tape root), by the
first of their ids: scouting one is scouting them all. A scenario whose tape no other
shares is thus keyed as it always was, and so is a forward scenario (its tape root is
its declared prefix's, often none, not the bars it grows). A disguise records in its
``scenario.toml`` the tag of its source's bars (:func:`~.reveal.lineage_tag`); its key is
its source's (the first id by the tag), or the tag itself when its source is not in the
catalog (its twins still share it). Before, a copy was a lineage of its own, and a copy
whose id sorted first keyed the disguises of its bars apart from their source.
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
        by_tag: dict[str, str] = {}
        ordinary = [s for s in scenarios if s.lineage is None]
        for loaded in sorted(ordinary, key=lambda s: s.forward):  # whole tapes first
            by_tag.setdefault(lineage_tag(loaded), loaded.id)
        self._keys: dict[str, str] = {}
        self._members: dict[str, list[LoadedScenario]] = {}
        for loaded in scenarios:
            tag = lineage_tag(loaded)
            own = loaded.lineage is None and loaded.forward  # its root: the prefix alone
            key = loaded.id if own else by_tag.get(tag, tag)
            self._keys[loaded.id] = key
            self._members.setdefault(key, []).append(loaded)

    def key(self, scenario_id: str) -> str:
        """The horizon key of the scenario's lineage (its own id unless it is a disguise or
        a scenario of its bars has an id that sorts first)."""
        return self._keys.get(scenario_id, scenario_id)

    def twins(self, scenario_id: str) -> list[LoadedScenario]:
        """Every scenario of the lineage, the scenario included, by id."""
        return list(self._members.get(self.key(scenario_id), []))
