"""A board: every proof given, verified, badged and ranked."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .rank import AgentStanding, ScenarioRanking, rank_board
from .rows import BoardRow, check_entry
from .sources import Entry, read_entries

__all__ = ["Board", "build_board"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Board:
    """The rows (in the order given), the rankings per scenario and the one overall;
    ``attested_only``: only attested rows are ranked (``--trust``)."""

    metric: str
    rows: list[BoardRow]
    scenarios: list[ScenarioRanking]
    overall: list[AgentStanding]
    attested_only: bool = False

    def count(self, badge: str) -> int:
        return sum(1 for row in self.rows if row.badge == badge)

    @property
    def unranked(self) -> list[BoardRow]:
        """The rows not ranked, each saying why (listed apart from the rankings)."""
        return [row for row in self.rows if row.rank is None]

    def to_json(self) -> dict[str, Any]:
        """The board as JSON data (``kestrel board --json``): the same table as the page."""
        return {
            "kind": "kestrel.board",
            "metric": self.metric,
            "ranks": "attested" if self.attested_only else "verified",
            "rows": [row.to_json() for row in self.rows],
            "scenarios": [
                {
                    "scenario": ranking.scenario,
                    "root": ranking.root,
                    "countsOverall": ranking.counted,
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
            "unranked": [
                {"source": row.source, "agent": row.agent, "why": row.unranked}
                for row in self.unranked
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
    ``metric`` (with ``trusted_keys``, only the attested ones)."""
    rows = [
        _checked(entry, trusted_keys=trusted_keys, require_catalog=require_catalog)
        for entry in read_entries(paths)
    ]
    attested_only = trusted_keys is not None
    scenarios, overall = rank_board(rows, metric, attested_only=attested_only)
    return Board(metric, rows, scenarios, overall, attested_only)


def _checked(
    entry: Entry, *, trusted_keys: Mapping[str, Any] | None, require_catalog: bool
) -> BoardRow:
    """``entry``'s row; a proof that breaks the checker itself is a failed row saying so,
    never the end of the board (a participant must not be able to stop everyone's)."""
    try:
        return check_entry(entry, trusted_keys=trusted_keys, require_catalog=require_catalog)
    except Exception as exc:  # one bad input is its row: the board goes on
        logger.warning("board: %s could not be checked", entry.source, exc_info=True)
        why = f"could not be checked: {type(exc).__name__}: {str(exc)[:200]}"
        return BoardRow(entry.source, entry.agent, "failed", why, entry.agent)
