"""Gather a report's data through the SDK alone, so it works over any transport.

The equity curve is rebuilt from the blotter's fills and the tape's closes (cash and
positions change only at fills), which needs no access to the runtime's internals.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from decimal import Decimal

from kestrel_protocol import Blotter, GradeResult, KestrelError, SessionFrame, SessionRecord

from ..client import KestrelSdk
from .data import ReportData, ReportFill

__all__ = ["collect_report_data", "equity_series"]


def _closes_by_symbol(tape_csv: str) -> tuple[list[str], dict[str, list[Decimal]]]:
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
    by_bar: dict[int, list[tuple[str, int, Decimal, Decimal]]] = defaultdict(list)
    for fill in blotter.fills:
        signed = fill.qty if sides[fill.order] == "buy" else -fill.qty
        by_bar[fill.bar].append(
            (symbols[fill.order], signed, Decimal(fill.price), Decimal(fill.fee))
        )
    positions: dict[str, int] = defaultdict(int)
    series: list[Decimal] = []
    for bar in range(last_bar + 1):
        for symbol, signed, price, fee in by_bar.get(bar, ()):
            cash -= signed * price + fee
            positions[symbol] += signed
        series.append(cash + sum((q * closes[s][bar] for s, q in positions.items()), Decimal(0)))
    return series


async def collect_report_data(sdk: KestrelSdk, grade: GradeResult) -> ReportData:
    """Fetch the record, blotter, head frame, scenario and tape a grade points at."""
    record = SessionRecord.parse(await sdk.artifact(grade.record))
    blotter = Blotter.parse(await sdk.artifact(record.blotter_root))
    scenario = await sdk.scenario(grade.scenario.id)
    times, closes = _closes_by_symbol(await sdk.tape(grade.scenario.id))
    try:
        last_bar = SessionFrame.parse(await sdk.artifact(record.head)).clock.bar
    except KestrelError:
        last_bar = max((fill.bar for fill in blotter.fills), default=0)
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
