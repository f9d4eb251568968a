"""The protocol objects the catalog publishes: ``Scenario`` and ``Catalog``."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from kestrel_protocol import Catalog, Scenario

from ..lang.kinds import STATEMENT_KINDS
from .reveal import scenario_commitment
from .tapes import TapeShape
from .terms import ScenarioTerms

__all__ = ["catalog_object", "scenario_object"]


def scenario_object(
    terms: ScenarioTerms, shape: TapeShape, news_root: str | None = None
) -> Scenario:
    """The rooted Scenario of validated terms and the shape of their tape (a forward
    scenario's: of its declared prefix, with ``forward``), and the root of its news, if
    it has any (the members about news are absent otherwise)."""
    extra: dict[str, object] = {}
    if news_root is not None:
        extra["news_root"] = news_root
    if terms.news_in_frame is not None:
        extra["news_in_frame"] = terms.news_in_frame
    if terms.forward:
        extra["forward"] = {"bars": shape.bars, "head": shape.root}
    return Scenario.with_root(
        id=terms.id,
        title=terms.title,
        description=terms.description,
        instruments=[
            {"symbol": item.symbol, "tick": item.tick, "lot": item.lot}
            for item in terms.instruments
        ],
        tape={
            "interval": terms.interval,
            "bars": shape.bars,
            "start": shape.start,
            "end": shape.end,
            "bars_per_year": terms.bars_per_year,
            "root": shape.root,
        },
        account=_account(terms),
        fees={"bps": terms.fee_bps, "minimum": terms.fee_minimum},
        fill={"participation": terms.participation, "slippage_bps": terms.slippage_bps},
        **extra,
    )


def _account(terms: ScenarioTerms) -> dict[str, object]:
    """The account's members; a margin account's four terms only when it is one."""
    account: dict[str, object] = {
        "cash": terms.cash,
        "shortable": terms.shortable,
        "max_position": terms.max_position,
        "max_drawdown": terms.max_drawdown,
    }
    margin = terms.margin
    if margin is not None:
        account["kind"] = "margin"
        account["leverage"] = margin.leverage
        account["maintenance_margin"] = margin.maintenance_margin
        account["borrow_rate"] = margin.borrow_rate
        account["cash_rate"] = margin.cash_rate
    return account


def catalog_object(scenarios: Iterable[Scenario], sealed: Collection[str] = ()) -> Catalog:
    """The rooted Catalog: every scenario by id (those in ``sealed`` marked so, with
    their tape root all the same but not their length), and the four statement kinds."""
    return Catalog.with_root(
        scenarios=[
            _entry(scenario, scenario.id in sealed)
            for scenario in sorted(scenarios, key=lambda scenario: scenario.id)
        ],
        statement_kinds=[kind.to_json() for kind in STATEMENT_KINDS],
    )


def _entry(scenario: Scenario, sealed: bool) -> dict[str, object]:
    """A catalog entry; a sealed one without the tape's length."""
    entry: dict[str, object] = {
        "id": scenario.id,
        "title": scenario.title,
        "symbols": [item.symbol for item in scenario.instruments],
        "interval": scenario.tape.interval,
        "bars": scenario.tape.bars,
        "root": scenario.root,
        "tape_root": scenario.tape.root,
        "sealed": sealed,
    }
    if sealed:
        del entry["bars"]
    if scenario.forward_tape is not None:
        entry["forward"] = True
    commitment = scenario_commitment(scenario)
    if commitment is not None:  # a disguise: what pairs it with its source after reveal
        entry["commitment"] = commitment
    return entry
