"""The memorisation gap: an agent's return and Sharpe on labelled tapes minus the same on
their disguised twins (issue 46).

How the board knows two scenarios are twins:

- a **reveal** given with ``kestrel board --reveal FILE`` names the disguised scenario
  and its source (id and roots). The board checks it as ``kestrel verify --reveal``
  does: the disguised scenario (from a verified proof on the board) must be exactly the
  transform the reveal names of the source (the catalog's scenario of that id and root,
  or one a verified proof embeds). A pair whose reveal holds is ``confirmed``; one whose
  reveal does not hold is ``refuted``, naming what differs;
- the **pair metadata** of an Inspect log (``-T pairs=LABELLED,DISGUISED`` of
  ``kestrel_trading``) only claims a pair: without a reveal that confirms it, the pair is
  ``unconfirmed``. An evaluator's claim is not evidence that two tapes are twins.

Only confirmed pairs count. An unconfirmed or refuted pair is listed with its figures
and says why it does not count, never folded silently into a mean.

Runs are paired by (agent, pair): of an agent's ranked runs (verified, passed, not a
copy; under ``--trust`` attested) on the labelled scenario and on the disguised one, the
pair's gap is the mean over the labelled runs minus the mean over the disguised runs,
for ``return`` and for ``sharpe`` (the grades' decimal strings, exact decimals). An
agent's gap is the mean over its confirmed pairs, N the number of pairs, with the same
95 % Student t-interval as the cells when N ≥ 2 (:mod:`.stats`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from typing import Any, Literal

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

from .catalog import BoardCatalog
from .rows import BoardRow
from .sources import Entry
from .stats import Interval, eight_places, interval

__all__ = ["GAP_METHOD", "AgentGap", "Gaps", "PairGap", "Twins", "memorisation_gaps"]

Status = Literal["confirmed", "unconfirmed", "refuted"]
GAP_KEYS = ("return", "sharpe")

GAP_METHOD = (
    "per agent: labelled minus disguised, for return and Sharpe, of the mean of its runs "
    "on each confirmed pair of twins; the mean over pairs, N pairs, and a 95% Student "
    "t-interval when N >= 2. A pair counts only when a reveal (--reveal FILE) confirms "
    "that the disguised tape is the transform of the labelled one; a pair claimed by an "
    "Inspect log alone is unconfirmed and never counts"
)
"""How the gap is computed, as the board's JSON and page state it."""


@dataclass(frozen=True, slots=True)
class Twins:
    """A labelled scenario and its disguised twin (roots known once a reveal holds)."""

    labelled: str
    disguised: str
    status: Status
    why: str
    labelled_root: str | None = None
    disguised_root: str | None = None

    def holds(self, row: BoardRow, role: str) -> bool:
        scenario, root = (
            (self.labelled, self.labelled_root)
            if role == "labelled"
            else (self.disguised, self.disguised_root)
        )
        return row.scenario == scenario and (root is None or row.scenario_root == root)


@dataclass(frozen=True, slots=True)
class PairGap:
    """One agent's runs on one pair: how many on each twin, and the gaps (None when a
    twin has no run of the agent)."""

    agent: str
    labelled_runs: int
    disguised_runs: int
    gaps: dict[str, Decimal] | None
    counted: bool


@dataclass(frozen=True, slots=True)
class AgentGap:
    """An agent's gap over its confirmed pairs: N pairs, per metric the interval."""

    agent: str
    stats: dict[str, Interval]


@dataclass(slots=True)
class Gaps:
    """Every pair the board knows of (with each agent's runs on it) and each agent's gap."""

    pairs: list[tuple[Twins, list[PairGap]]] = field(default_factory=list)
    agents: list[AgentGap] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": GAP_METHOD,
            "agents": [
                {
                    "agent": gap.agent,
                    "pairs": gap.stats["return"].n,
                    **{key: _figures(stats) for key, stats in gap.stats.items()},
                }
                for gap in self.agents
            ],
            "pairs": [
                {
                    "labelled": twins.labelled,
                    "labelledRoot": twins.labelled_root,
                    "disguised": twins.disguised,
                    "disguisedRoot": twins.disguised_root,
                    "status": twins.status,
                    "why": twins.why,
                    "agents": [
                        {
                            "agent": run.agent,
                            "labelledRuns": run.labelled_runs,
                            "disguisedRuns": run.disguised_runs,
                            "counted": run.counted,
                            **{
                                key: None if run.gaps is None else eight_places(run.gaps[key])
                                for key in GAP_KEYS
                            },
                        }
                        for run in runs
                    ],
                }
                for twins, runs in self.pairs
            ],
        }


def _figures(stats: Interval) -> dict[str, Any]:
    return {
        "n": stats.n,
        "mean": eight_places(stats.mean),
        "low": None if stats.half is None else eight_places(stats.low),
        "high": None if stats.half is None else eight_places(stats.high),
    }


def _value(row: BoardRow, key: str) -> Decimal | None:
    raw = (row.metrics or {}).get(key)
    return Decimal(raw) if isinstance(raw, str) else None


def _claimed(entries: Sequence[Entry]) -> list[tuple[str, str]]:
    """The pairs Inspect logs claim, in the order first claimed."""
    found: list[tuple[str, str]] = []
    for entry in entries:
        if entry.pair is not None and entry.pair not in found:
            found.append(entry.pair)
    return found


def _usable(row: BoardRow) -> bool:
    return row.rank is not None and all(_value(row, key) is not None for key in GAP_KEYS)


def _gap(labelled: list[BoardRow], disguised: list[BoardRow], key: str) -> Decimal:
    """The mean of ``key`` over the labelled runs less its mean over the disguised."""
    with localcontext(DEFAULT_DECIMAL_CONTEXT):
        return _mean(labelled, key) - _mean(disguised, key)


def _mean(rows: list[BoardRow], key: str) -> Decimal:
    return sum((_value(r, key) or Decimal(0) for r in rows), Decimal(0)) / len(rows)


def _runs(twins: Twins, rows: list[BoardRow]) -> list[PairGap]:
    ranked = [row for row in rows if _usable(row)]
    agents = sorted(
        {row.agent for row in ranked if twins.holds(row, "labelled")}
        | {row.agent for row in ranked if twins.holds(row, "disguised")}
    )
    runs = []
    for agent in agents:
        mine = [row for row in ranked if row.agent == agent]
        labelled = [row for row in mine if twins.holds(row, "labelled")]
        disguised = [row for row in mine if twins.holds(row, "disguised")]
        gaps = (
            {key: _gap(labelled, disguised, key) for key in GAP_KEYS}
            if labelled and disguised
            else None
        )
        counted = gaps is not None and twins.status == "confirmed"
        runs.append(PairGap(agent, len(labelled), len(disguised), gaps, counted))
    return runs


def memorisation_gaps(
    rows: list[BoardRow],
    entries: Sequence[Entry],
    reveals: Sequence[tuple[str, Any]],
    catalog: BoardCatalog | None = None,
) -> Gaps:
    """The gaps of the board's ranked ``rows`` (``entries``: the same order, for the
    proofs and the pairs Inspect claims; ``reveals``: (where it came from, its data),
    their sources looked up in ``catalog``, ``None``: ``KESTREL_CATALOG_PATH``'s)."""
    from .twins import revealed_twins  # noqa: PLC0415 - the engine loads only with reveals

    known = revealed_twins(rows, entries, reveals, catalog or BoardCatalog()) if reveals else []
    for labelled, disguised in _claimed(entries):
        if any(t.labelled == labelled and t.disguised == disguised for t in known):
            continue
        other = [t for t in known if t.disguised == disguised and t.status == "confirmed"]
        why = (
            f"claimed by an Inspect log; the reveal of {disguised} names another source "
            f"({other[0].labelled}): not counted"
            if other
            else f"claimed by an Inspect log, not confirmed: no reveal of {disguised} given "
            "(kestrel board --reveal FILE); not counted"
        )
        known.append(Twins(labelled, disguised, "unconfirmed", why))
    gaps = Gaps()
    counted: dict[str, list[dict[str, Decimal]]] = {}
    for twins in known:
        runs = _runs(twins, rows)
        gaps.pairs.append((twins, runs))
        for run in runs:
            if run.counted and run.gaps is not None:
                counted.setdefault(run.agent, []).append(run.gaps)
    for agent in sorted(counted):
        values = counted[agent]
        stats = {key: interval([v[key] for v in values]) for key in GAP_KEYS}
        gaps.agents.append(AgentGap(agent, stats))
    return gaps
