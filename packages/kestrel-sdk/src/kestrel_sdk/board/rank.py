"""Rankings: the rows of each scenario by one metric, and the agents overall.

Only ranked rows take part (verified, and a grade that passed). Within a scenario (its
id and root: an embedded scenario unknown here is ranked only with proofs of the same
scenario), rows are ordered by the metric (higher first, or lower for max drawdown) and
take competition ranks (1, 2, 2, 4). Overall, each agent's rows are averaged: agents
ranked in more scenarios come first, then the lower mean rank, then the better mean of
the metric.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from .rows import METRICS, BoardRow

__all__ = ["AgentStanding", "ScenarioRanking", "rank_board"]


@dataclass(frozen=True, slots=True)
class ScenarioRanking:
    """One scenario's rows, ranked ones first in rank order."""

    scenario: str
    root: str
    rows: list[BoardRow]


@dataclass(frozen=True, slots=True)
class AgentStanding:
    """An agent overall: its rank, how many scenarios it is ranked in, its mean rank
    and the mean of the metric over its ranked rows."""

    rank: int
    agent: str
    scenarios: int
    proofs: int
    mean_rank: Decimal
    mean_metric: Decimal


def _value(row: BoardRow, key: str) -> Decimal | None:
    raw = (row.metrics or {}).get(key)
    return Decimal(raw) if isinstance(raw, str) else None


def _competition(values: list[tuple[object, ...]]) -> list[int]:
    """Competition ranks of values already in order (equal neighbours share a rank)."""
    ranks: list[int] = []
    for i, value in enumerate(values):
        ranks.append(ranks[-1] if i and values[i - 1] == value else i + 1)
    return ranks


def rank_board(
    rows: list[BoardRow], metric: str
) -> tuple[list[ScenarioRanking], list[AgentStanding]]:
    """Set each ranked row's ``rank``; the per-scenario rankings and the overall one."""
    key, higher_first = METRICS[metric]
    by_scenario: dict[tuple[str, str], list[BoardRow]] = defaultdict(list)
    for row in rows:
        row.rank = None
        if row.badge != "failed" and row.scenario and row.scenario_root:
            by_scenario[(row.scenario, row.scenario_root)].append(row)
    rankings: list[ScenarioRanking] = []
    per_agent: dict[str, list[tuple[int, Decimal, str]]] = defaultdict(list)
    for (scenario, root), members in sorted(by_scenario.items()):
        ranked = [r for r in members if r.ranked and _value(r, key) is not None]
        sign = -1 if higher_first else 1
        ranked.sort(key=lambda r: (sign * (_value(r, key) or Decimal(0)), r.source))
        ranks = _competition([(_value(r, key),) for r in ranked])
        for row, rank in zip(ranked, ranks, strict=True):
            row.rank = rank
            per_agent[row.agent].append((rank, _value(row, key) or Decimal(0), scenario))
        rest = sorted((r for r in members if r.rank is None), key=lambda r: r.source)
        rankings.append(ScenarioRanking(scenario, root, ranked + rest))
    standings = []
    for agent, results in per_agent.items():
        count = Decimal(len(results))
        standings.append(
            (
                len({s for _, _, s in results}),
                sum((Decimal(r) for r, _, _ in results), Decimal(0)) / count,
                sum((v for _, v, _ in results), Decimal(0)) / count,
                agent,
                len(results),
            )
        )
    sign = -1 if higher_first else 1
    standings.sort(key=lambda s: (-s[0], s[1], sign * s[2], s[3]))
    ranks = _competition([(s[0], s[1], s[2]) for s in standings])
    overall = [
        AgentStanding(rank, agent, scenarios, proofs, mean_rank, mean_metric)
        for rank, (scenarios, mean_rank, mean_metric, agent, proofs) in zip(
            ranks, standings, strict=True
        )
    ]
    return rankings, overall
