"""Rankings: the rows of each scenario by one metric, and the agents overall.

Only rows that verified, whose grade passed and that are not a copy of another row
(:mod:`.copies`) are ranked; under ``attested_only`` (``--trust``), only those whose
door's signed statement held. Every other row says why it is not ranked (``unranked``).
Within a scenario (its id and root: an embedded scenario unknown here is ranked only
with proofs of the same scenario), rows are ordered by the metric (higher first, or
lower for max drawdown) and take competition ranks (1, 2, 2, 4).

Overall, only scenarios of this machine's catalog count (a scenario a proof embeds could
be invented: a group of one that its author always wins). Each agent's rows are
averaged: agents ranked in more catalog scenarios come first, then the lower mean rank,
then the better mean of the metric.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from .copies import flag_copies
from .rows import METRICS, BoardRow

__all__ = ["AgentStanding", "ScenarioRanking", "rank_board"]


@dataclass(frozen=True, slots=True)
class ScenarioRanking:
    """One scenario's ranked rows in rank order; ``counted``: whether it counts overall
    (a scenario of this machine's catalog)."""

    scenario: str
    root: str
    rows: list[BoardRow]
    counted: bool


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
            failed = "; ".join(f"{k} {v}" for k, v in row.checks.items() if v != "passed")
            row.unranked = "its grade did not pass" + (f": {failed}" if failed else "")
        elif not (row.scenario and row.scenario_root) or _value(row, key) is None:
            row.unranked = "no scenario or metric to rank it by"


def rank_board(
    rows: list[BoardRow], metric: str, *, attested_only: bool = False
) -> tuple[list[ScenarioRanking], list[AgentStanding]]:
    """Set each row's ``rank`` (or why it has none); the per-scenario rankings and the
    overall one."""
    key, higher_first = METRICS[metric]
    _mark_unranked(rows, key, attested_only)
    by_scenario: dict[tuple[str, str], list[BoardRow]] = defaultdict(list)
    for row in rows:
        if row.unranked is None and row.scenario and row.scenario_root:
            by_scenario[(row.scenario, row.scenario_root)].append(row)
    rankings: list[ScenarioRanking] = []
    per_agent: dict[str, list[tuple[int, Decimal, str]]] = defaultdict(list)
    for (scenario, root), ranked in sorted(by_scenario.items()):
        sign = -1 if higher_first else 1
        ranked.sort(key=lambda r: (sign * (_value(r, key) or Decimal(0)), r.source))
        ranks = _competition([(_value(r, key),) for r in ranked])
        counted = all(r.provenance == "catalog" for r in ranked)
        for row, rank in zip(ranked, ranks, strict=True):
            row.rank = rank
            if counted:
                per_agent[row.agent].append((rank, _value(row, key) or Decimal(0), scenario))
        rankings.append(ScenarioRanking(scenario, root, ranked, counted))
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
