"""A board: every proof given, verified, badged and ranked."""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .baseline import BASELINE, Baseline, buy_and_hold
from .catalog import BoardCatalog
from .gaps import Gaps, memorisation_gaps
from .rank import AgentStanding, ScenarioRanking, rank_board
from .rows import METRICS, BoardRow, check_entry
from .sources import Entry, read_entries
from .stats import Interval, eight_places
from .trials import CountSource, TrialsShown, asking_doors, trials_shown

if TYPE_CHECKING:
    from ..published_tape import PublishedTapes

__all__ = ["METHOD", "Board", "board_of", "build_board", "checked", "figures"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Board:
    """The rows (in the order given), the rankings per scenario and the one overall,
    the buy-and-hold baseline of each ranked scenario, the memorisation gaps (twins and
    each agent's gap, :mod:`.gaps`); ``attested_only``: only attested rows are ranked
    (``--trust``)."""

    metric: str
    rows: list[BoardRow]
    scenarios: list[ScenarioRanking]
    overall: list[AgentStanding]
    attested_only: bool = False
    baselines: dict[tuple[str, str], Baseline] = field(default_factory=dict)
    gaps: Gaps = field(default_factory=Gaps)
    trials: list[TrialsShown] = field(default_factory=list)
    """Per parent of attested trial rows, the trial numbers shown and missing."""

    @property
    def failed(self) -> list[BoardRow]:
        """The rows that failed (``kestrel board`` exits 1 when there is one)."""
        return [row for row in self.rows if row.badge == "failed"]

    def baseline(self, ranking: ScenarioRanking) -> Baseline | None:
        return self.baselines.get((ranking.scenario, ranking.root))

    def baseline_value(self, ranking: ScenarioRanking) -> Decimal | None:
        """The baseline's figure of the board's metric on ``ranking``'s scenario."""
        found = self.baseline(ranking)
        raw = (found.metrics or {}).get(METRICS[self.metric][0]) if found else None
        return Decimal(raw) if isinstance(raw, str) else None

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
            "method": METHOD,
            "ranks": "attested" if self.attested_only else "verified",
            "rows": [row.to_json() for row in self.rows],
            "scenarios": [
                {
                    "scenario": ranking.scenario,
                    "root": ranking.root,
                    "countsOverall": ranking.counted,
                    **({"forward": True} if ranking.forward else {}),
                    **({"unsealed": True} if ranking.unsealed else {}),
                    "cells": [
                        {"rank": cell.rank, "agent": cell.agent, **figures(cell.stats)}
                        for cell in ranking.cells
                    ],
                    "ranking": [
                        {"rank": row.rank, "agent": row.agent, "source": row.source}
                        for row in ranking.rows
                    ],
                    "baseline": self._baseline_json(ranking),
                }
                for ranking in self.scenarios
            ],
            "overall": [
                {
                    "rank": s.rank,
                    "agent": s.agent,
                    "scenarios": s.scenarios,
                    "proofs": s.proofs,
                    **figures(s.stats),
                }
                for s in self.overall
            ],
            "unranked": [
                {"source": row.source, "agent": row.agent, "why": row.unranked}
                for row in self.unranked
            ],
            "gaps": self.gaps.to_json(),
            "trials": [shown.to_json() for shown in self.trials],
        }

    def _baseline_json(self, ranking: ScenarioRanking) -> dict[str, Any] | None:
        found = self.baseline(ranking)
        if found is None:
            return None
        return {"name": BASELINE, "grade": found.grade, "metrics": found.metrics, "why": found.why}


METHOD = (
    "cells (agent x scenario) ranked by the mean of the metric over their N runs, with a "
    "95% Student t-interval; cells whose intervals overlap share a rank; overall: the mean "
    "over catalog tapes of an agent's cell means (a scenario and its twins are one tape: "
    "their cells averaged first; interval: the mean of the bounds)"
)
"""The ranking method, as the board's JSON and page state it."""


def figures(stats: Interval) -> dict[str, Any]:
    """A cell's or standing's figures as the board's JSON gives them (8 decimals)."""
    return {
        "n": stats.n,
        "mean": eight_places(stats.mean),
        "low": eight_places(stats.low),
        "high": eight_places(stats.high),
    }


def build_board(
    paths: list[Path],
    metric: str = "sharpe",
    *,
    trusted_keys: Mapping[str, Any] | None = None,
    require_catalog: bool = False,
    reveals: Sequence[tuple[str, Any]] = (),
    catalog_paths: Sequence[Path] | None = None,
    home: Path | None = None,
) -> Board:
    """Read every proof of ``paths`` (files, directories, Inspect logs), verify each (the
    signed statements under ``trusted_keys``, a JWKS) and rank the ones that hold by
    ``metric`` (with ``trusted_keys``, only the attested ones); the memorisation gaps of
    the pairs ``reveals`` ((where each came from, its data)) confirm or the logs claim.
    This machine's catalog is the one of ``catalog_paths`` (``kestrel --catalog-path``;
    ``None``: ``KESTREL_CATALOG_PATH``'s)."""
    from ..published_tape import PublishedTapes  # noqa: PLC0415 - httpx loads only here

    entries = read_entries(paths)
    catalog, tapes = BoardCatalog(catalog_paths, home), PublishedTapes()  # read once a build
    rows = [
        checked(
            entry,
            trusted_keys=trusted_keys,
            require_catalog=require_catalog,
            catalog=catalog,
            tapes=tapes,
        )
        for entry in entries
    ]
    attested_only = trusted_keys is not None
    return board_of(
        rows,
        metric,
        attested_only=attested_only,
        counts=None if trusted_keys is None else asking_doors(trusted_keys),
        entries=entries,
        reveals=reveals,
        catalog=catalog,
    )


def board_of(
    rows: list[BoardRow],
    metric: str,
    *,
    attested_only: bool,
    counts: CountSource | None = None,
    entries: Sequence[Entry] = (),
    reveals: Sequence[tuple[str, Any]] = (),
    sealed: Collection[str] = (),
    catalog: BoardCatalog | None = None,
) -> Board:
    """The board of checked ``rows``: ranked, with each ranked catalog scenario's
    buy-and-hold baseline (none on the scenarios ``sealed`` by the door that published
    the board), the memorisation gaps (``entries``: the rows' entries, in the same
    order) and, per parent of attested trial rows, the trials shown and missing (up to
    the count each parent's door signs, from ``counts``); the catalog is ``catalog``, the
    rows' (``None``: ``KESTREL_CATALOG_PATH``'s)."""
    from ..runtime.catalog.lineage import Lineages  # noqa: PLC0415 - the engine loads only here

    catalog = catalog if catalog is not None else BoardCatalog()
    lineages = Lineages(catalog.index).keys()  # a tape and its twins: one
    scenarios, overall = rank_board(rows, metric, attested_only=attested_only, lineages=lineages)
    baselines = {
        (r.scenario, r.root): buy_and_hold(
            r.scenario, r.root, sealed=r.scenario in sealed, catalog=catalog
        )
        for r in scenarios
    }
    gaps = memorisation_gaps(rows, entries, reveals, catalog) if entries else Gaps()
    trials = trials_shown(rows, counts)  # after ranking: each row credited to its agent
    return Board(metric, rows, scenarios, overall, attested_only, baselines, gaps, trials)


def checked(
    entry: Entry,
    *,
    trusted_keys: Mapping[str, Any] | None,
    require_catalog: bool,
    keys_source: bool = True,
    catalog: BoardCatalog | None = None,
    tapes: PublishedTapes | None = None,
) -> BoardRow:
    """``entry``'s row (:func:`.rows.check_entry`); a proof that breaks the checker
    itself is a failed row saying so, never the end of the board (a participant must not
    be able to stop everyone's)."""
    try:
        return check_entry(
            entry,
            trusted_keys=trusted_keys,
            require_catalog=require_catalog,
            keys_source=keys_source,
            catalog=catalog,
            tapes=tapes,
        )
    except Exception as exc:  # one bad input is its row: the board goes on
        logger.warning("board: %s could not be checked", entry.source, exc_info=True)
        why = f"could not be checked: {type(exc).__name__}: {str(exc)[:200]}"
        return BoardRow(entry.source, entry.named or entry.agent, "failed", why, entry.agent)
