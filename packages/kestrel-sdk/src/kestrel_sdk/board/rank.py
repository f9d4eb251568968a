"""Rankings: each scenario's cells (agent × scenario) by one metric, and the agents overall.

Only rows that verified, whose grade passed and that are not a copy of another row
(:mod:`.copies`) are ranked; under ``attested_only`` (``--trust``), only those whose
door's signed statement held. Every other row says why it is not ranked (``unranked``).

Within a scenario (its id and root: an embedded scenario unknown here is ranked only
with proofs of the same scenario), an agent's rows are one cell: N runs, the mean of
the metric and its 95 % t-interval (:mod:`.stats`). A cell's rank is one plus the
number of cells whose whole interval is better than its own (above it, or below it for
max drawdown): cells whose intervals overlap share a rank, so a difference the runs
cannot tell apart is a tie. Every row takes its cell's rank.

Under trust, runs its door graded while the scenario was not sealed are ranked apart from
the runs graded sealed, when a scenario has both (``unsealed``, not counted overall): an
unsealed run was served its tape's end and length, and could have read the tape through
another principal.

Overall, only scenarios of this machine's catalog count (a scenario a proof embeds could
be invented: a group of one that its author always wins), and the scenarios of one tape
(a scenario, its disguised twins and copies of its bars: one lineage) count once: an
agent's cells on them are one figure, the mean of their means and of their bounds.
Before, a tape and its twin were two scenarios: an agent that ran both stood with two,
its one tape weighed twice. An agent's overall figure is the mean over its tapes of
those figures (never a mean of ranks), with the interval from the mean of their lower
bounds to the mean of their upper bounds. Agents ranked on more tapes come first; among
agents on as many, the rank is one plus the number whose whole interval is better.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, localcontext

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

from .copies import flag_copies
from .names import keep_names_apart
from .rows import METRICS, BoardRow
from .stats import Interval, interval

__all__ = ["AgentStanding", "Cell", "ScenarioRanking", "rank_board"]


@dataclass(frozen=True, slots=True)
class Cell:
    """One agent's ranked runs of one scenario: their figures and the cell's rank."""

    agent: str
    rank: int
    stats: Interval
    rows: list[BoardRow]


@dataclass(frozen=True, slots=True)
class ScenarioRanking:
    """One scenario's cells in rank order; ``counted``: whether it counts overall
    (a scenario of this machine's catalog); ``forward``: its runs traded the tape while
    it grew (:mod:`.forward`), ranked apart from replays of the same tape once fixed and
    not counted overall."""

    scenario: str
    root: str
    cells: list[Cell]
    counted: bool
    forward: bool = False
    unsealed: bool = False
    """Its runs were graded unsealed, while other runs of the scenario were sealed."""

    @property
    def rows(self) -> list[BoardRow]:
        return [row for cell in self.cells for row in cell.rows]


@dataclass(frozen=True, slots=True)
class AgentStanding:
    """An agent overall: its rank, how many catalog tapes (lineages: a scenario and its
    twins are one) and proofs it is ranked with, and the mean over those tapes of its
    cells' means and bounds (a tape's cells averaged first)."""

    rank: int
    agent: str
    scenarios: int
    proofs: int
    stats: Interval


def _value(row: BoardRow, key: str) -> Decimal | None:
    raw = (row.metrics or {}).get(key)
    return Decimal(raw) if isinstance(raw, str) else None


def _better(a: Interval, b: Interval, higher_first: bool) -> bool:
    """``a``'s whole interval is better than ``b``'s (they do not overlap)."""
    return a.low > b.high if higher_first else a.high < b.low


NOT_ATTESTED = (
    "not attested: under --trust only proofs whose grade a trusted door signed are ranked"
)


def _mark_unranked(rows: list[BoardRow], key: str, attested_only: bool) -> None:
    """Say on each row that will not be ranked why not (copies are marked first)."""
    for row in rows:
        row.rank, row.unranked, row.duplicates = None, None, []
    flag_copies(rows)
    for row in rows:
        if row.badge == "failed":
            row.unranked = row.reason
        elif row.unranked is not None:
            continue
        elif attested_only and not row.attested:
            row.unranked = NOT_ATTESTED + (f" ({row.attestation})" if row.attestation else "")
        elif row.passed is not True:
            row.unranked = "its grade did not pass"
        elif not (row.scenario and row.scenario_root) or _value(row, key) is None:
            row.unranked = "no scenario or metric to rank it by"


def _cells(ranked: list[BoardRow], key: str, higher_first: bool) -> list[Cell]:
    by_agent: dict[str, list[BoardRow]] = defaultdict(list)
    for row in ranked:
        by_agent[row.agent].append(row)
    figures = {
        agent: interval([_value(r, key) or Decimal(0) for r in rows])
        for agent, rows in by_agent.items()
    }
    cells = []
    for agent, rows in by_agent.items():
        mine = figures[agent]
        rank = 1 + sum(1 for other in figures.values() if _better(other, mine, higher_first))
        for row in rows:
            row.rank = rank
        cells.append(Cell(agent, rank, mine, rows))
    cells.sort(key=lambda c: (c.rank, _ordered(c.stats.mean, higher_first), c.agent))
    return cells


def _ordered(mean: Decimal, higher_first: bool) -> Decimal:
    """``mean`` as a sort key: negated (exactly) when higher ranks first."""
    return mean.copy_negate() if higher_first else mean


def _mean_of(found: Sequence[Interval]) -> Interval:
    """The mean of ``found``'s means and of their bounds, with their runs summed."""
    k = Decimal(len(found))
    with localcontext(DEFAULT_DECIMAL_CONTEXT):
        mean = sum((s.mean for s in found), Decimal(0)) / k
        low = sum((s.low for s in found), Decimal(0)) / k
        high = sum((s.high for s in found), Decimal(0)) / k
    return Interval(sum(s.n for s in found), mean, low, high, None)


def _standings(
    per_agent: dict[str, dict[str, list[Cell]]], higher_first: bool
) -> list[AgentStanding]:
    figures: dict[str, tuple[int, int, Interval]] = {}
    for agent, tapes in per_agent.items():
        mine = _mean_of([_mean_of([c.stats for c in cells]) for cells in tapes.values()])
        figures[agent] = (len(tapes), mine.n, mine)
    standings = []
    for agent, (scenarios, proofs, mine) in figures.items():
        rank = 1 + sum(
            1
            for other_scenarios, _, other in figures.values()
            if other_scenarios > scenarios
            or (other_scenarios == scenarios and _better(other, mine, higher_first))
        )
        standings.append(AgentStanding(rank, agent, scenarios, proofs, mine))
    standings.sort(
        key=lambda s: (s.rank, -s.scenarios, _ordered(s.stats.mean, higher_first), s.agent)
    )
    return standings


def _scenario_of(row: BoardRow) -> tuple[str, str, bool]:
    """The ranking a row belongs to: its scenario, root and whether it traded forward."""
    return (row.scenario or "", row.scenario_root or "", row.forward is not None)


def rank_board(
    rows: list[BoardRow],
    metric: str,
    *,
    attested_only: bool = False,
    lineages: Mapping[str, str] | None = None,
) -> tuple[list[ScenarioRanking], list[AgentStanding]]:
    """Set each row's ``rank`` (its cell's, or why it has none); the per-scenario
    rankings and the overall one, where the catalog scenarios ``lineages`` maps to one
    key (by id: a tape and its twins) count once."""
    tape_of = lineages or {}
    key, higher_first = METRICS[metric]
    keep_names_apart(rows)
    _mark_unranked(rows, key, attested_only)
    ranked_rows = [r for r in rows if r.unranked is None and r.scenario and r.scenario_root]
    sealed = {_scenario_of(r) for r in ranked_rows if r.badge == "attested-and-sealed"}
    by_scenario: dict[tuple[str, str, bool, bool], list[BoardRow]] = defaultdict(list)
    for row in ranked_rows:
        unsealed = row.attested and row.badge != "attested-and-sealed"
        by_scenario[(*_scenario_of(row), unsealed and _scenario_of(row) in sealed)].append(row)
    rankings: list[ScenarioRanking] = []
    per_agent: dict[str, dict[str, list[Cell]]] = defaultdict(lambda: defaultdict(list))
    for (scenario, root, forward, unsealed), ranked in sorted(by_scenario.items()):
        cells = _cells(ranked, key, higher_first)
        counted = not (forward or unsealed) and all(r.provenance == "catalog" for r in ranked)
        if counted:
            for cell in cells:
                per_agent[cell.agent][tape_of.get(scenario, scenario)].append(cell)
        rankings.append(ScenarioRanking(scenario, root, cells, counted, forward, unsealed))
    return rankings, _standings(per_agent, higher_first)
