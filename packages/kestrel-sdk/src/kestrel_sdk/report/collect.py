"""Gather a report's data through the SDK alone, so it works over any transport.

The equity curve is rebuilt from the blotter's fills and the tape's closes (cash and
positions change only at fills), which needs no access to the runtime's internals.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal, localcontext

from kestrel_protocol import (
    DEFAULT_DECIMAL_CONTEXT,
    Blotter,
    GradeResult,
    KestrelError,
    Proof,
    RefusalCode,
    Scenario,
    SessionFrame,
    SessionRecord,
)

from ..client import KestrelSdk
from .data import ReportData, ReportFill

__all__ = [
    "SessionSources",
    "closes_by_symbol",
    "collect_proof_data",
    "collect_report_data",
    "equity_series",
    "grade_sources",
    "proof_sources",
]


def closes_by_symbol(tape_csv: str) -> tuple[list[str], dict[str, list[Decimal]]]:
    """The tape's bar times, and each symbol's closes by bar (exact)."""
    times: list[str] = []
    closes: dict[str, list[Decimal]] = defaultdict(list)
    for row in csv.DictReader(io.StringIO(tape_csv)):
        if not times or times[-1] != row["time"]:
            times.append(row["time"])
        closes[row["symbol"]].append(Decimal(row["close"]))
    return times, dict(closes)


def equity_series(
    cash: Decimal, blotter: Blotter, closes: dict[str, list[Decimal]], last_bar: int
) -> list[Decimal]:
    """Equity at each bar's close from bar 0 to ``last_bar`` (inclusive)."""
    sides = {order.id: order.side for order in blotter.orders}
    symbols = {order.id: order.symbol for order in blotter.orders}
    by_bar: dict[int, list[tuple[str, Decimal, Decimal, Decimal]]] = defaultdict(list)
    for fill in blotter.fills:
        qty = Decimal(fill.qty)  # an integer, or a fractional lot's decimal text
        signed = qty if sides[fill.order] == "buy" else qty.copy_negate()
        by_bar[fill.bar].append(
            (symbols[fill.order], signed, Decimal(fill.price), Decimal(fill.fee))
        )
    positions: dict[str, Decimal] = defaultdict(Decimal)
    series: list[Decimal] = []
    with localcontext(DEFAULT_DECIMAL_CONTEXT):
        for bar in range(last_bar + 1):
            for symbol, signed, price, fee in by_bar.get(bar, ()):
                cash -= signed * price + fee
                positions[symbol] += signed
            held = sum((q * closes[s][bar] for s, q in positions.items()), Decimal(0))
            series.append(cash + held)
    return series


async def _full_scenario(sdk: KestrelSdk, scenario_id: str) -> Scenario:
    """The scenario with its tape terms; a sealed one cannot be reported on (its tape is
    not served)."""
    scenario = await sdk.scenario(scenario_id)
    if not isinstance(scenario, Scenario):
        raise KestrelError(
            RefusalCode.SCENARIO_SEALED,
            f"scenario {scenario_id!r} is sealed: a report needs its tape, which is not served",
            {"scenario": scenario_id},
        )
    return scenario


@dataclass(frozen=True, slots=True)
class SessionSources:
    """What a graded session's report and frames are made from: the grade, its record
    and blotter, the scenario, its tape (canonical CSV) and the last bar processed."""

    grade: GradeResult
    record: SessionRecord
    blotter: Blotter
    scenario: Scenario
    tape: str
    last_bar: int


async def grade_sources(sdk: KestrelSdk, grade: GradeResult) -> SessionSources:
    """Fetch the record, blotter, head frame, scenario and tape a grade points at."""
    record = SessionRecord.parse(await sdk.artifact(grade.record))
    blotter = Blotter.parse(await sdk.artifact(record.blotter_root))
    scenario = await _full_scenario(sdk, grade.scenario.id)
    tape = await sdk.tape(grade.scenario.id)
    try:
        last_bar = SessionFrame.parse(await sdk.artifact(record.head)).clock.bar
    except KestrelError:
        last_bar = max((fill.bar for fill in blotter.fills), default=0)
    return SessionSources(grade, record, blotter, scenario, tape, last_bar)


async def proof_sources(sdk: KestrelSdk, proof: Proof) -> SessionSources:
    """A proof's sources: everything from the proof, the scenario and its tape from the
    proof when it embeds them, else from the catalog (whose scenario must be the
    proof's, root for root)."""
    if proof.embedded is not None:
        scenario, tape = proof.embedded.scenario, proof.embedded.tape
    else:
        scenario = await _full_scenario(sdk, proof.scenario.id)
        if scenario.root != proof.scenario.root:
            raise KestrelError(
                RefusalCode.UNKNOWN_SCENARIO,
                f"the proof's scenario {proof.scenario.id} ({proof.scenario.root}) is not the "
                f"catalog's ({scenario.root}) and the proof does not embed it",
                {"scenario": proof.scenario.id, "root": proof.scenario.root},
            )
        tape = await sdk.tape(proof.scenario.id)
    return SessionSources(
        proof.grade, proof.record, proof.blotter, scenario, tape, proof.head.clock.bar
    )


async def collect_report_data(sdk: KestrelSdk, grade: GradeResult) -> ReportData:
    """A grade's report data (its artifacts fetched through ``sdk``)."""
    return _assemble(await grade_sources(sdk, grade))


async def collect_proof_data(sdk: KestrelSdk, proof: Proof) -> ReportData:
    """A proof's report data (see :func:`proof_sources`)."""
    return _assemble(await proof_sources(sdk, proof))


def _assemble(sources: SessionSources) -> ReportData:
    grade, record, blotter, scenario = (
        sources.grade,
        sources.record,
        sources.blotter,
        sources.scenario,
    )
    last_bar = sources.last_bar
    times, closes = closes_by_symbol(sources.tape)
    equity = equity_series(Decimal(scenario.account.cash), blotter, closes, last_bar)
    orders = {order.id: order for order in blotter.orders}
    fills = [
        ReportFill(
            bar=f.bar,
            time=f.time,
            symbol=orders[f.order].symbol,
            side=orders[f.order].side,
            qty=f.qty,
            price=float(f.price),
            fee=f.fee,
            order=f.order,
        )
        for f in blotter.fills
    ]
    return ReportData(
        grade=grade,
        scenario=scenario,
        times=times[: last_bar + 1],
        equity=[float(e) for e in equity],
        closes={s: [float(c) for c in cs[: last_bar + 1]] for s, cs in closes.items()},
        fills=fills,
        record_root=grade.record,
        blotter_root=record.blotter_root,
    )
