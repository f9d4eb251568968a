"""A board: every proof given, verified, badged and ranked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .rank import AgentStanding, ScenarioRanking, rank_board
from .rows import BoardRow, check_entry
from .sources import read_entries

__all__ = ["Board", "build_board"]


@dataclass(frozen=True, slots=True)
class Board:
    """The rows (in the order given), the rankings per scenario and the one overall."""

    metric: str
    rows: list[BoardRow]
    scenarios: list[ScenarioRanking]
    overall: list[AgentStanding]

    def count(self, badge: str) -> int:
        return sum(1 for row in self.rows if row.badge == badge)

    def to_json(self) -> dict[str, Any]:
        """The board as JSON data (``kestrel board --json``): the same table as the page."""
        return {
            "kind": "kestrel.board",
            "metric": self.metric,
            "rows": [row.to_json() for row in self.rows],
            "scenarios": [
                {
                    "scenario": ranking.scenario,
                    "root": ranking.root,
                    "ranking": [
                        {"rank": row.rank, "agent": row.agent, "source": row.source}
                        for row in ranking.rows
                        if row.rank is not None
                    ],
                }
                for ranking in self.scenarios
            ],
            "overall": [
                {
                    "rank": s.rank,
                    "agent": s.agent,
                    "scenarios": s.scenarios,
                    "proofs": s.proofs,
                    "meanRank": f"{s.mean_rank:.2f}",
                    "meanMetric": f"{s.mean_metric:.8f}",
                }
                for s in self.overall
            ],
        }


def build_board(
    paths: list[Path],
    metric: str = "sharpe",
    *,
    trusted_keys: Mapping[str, Any] | None = None,
    require_catalog: bool = False,
) -> Board:
    """Read every proof of ``paths`` (files, directories, Inspect logs), verify each (the
    signed statements under ``trusted_keys``, a JWKS) and rank the ones that hold by
    ``metric``."""
    rows = [
        check_entry(entry, trusted_keys=trusted_keys, require_catalog=require_catalog)
        for entry in read_entries(paths)
    ]
    scenarios, overall = rank_board(rows, metric)
    return Board(metric, rows, scenarios, overall)
