"""Grading (docs/spec.md §6): replay a record's pentads on a fresh engine, then measure.

Pure: a function of the scenario, the record and its pentads. A session's own engine,
closed at the record's head, holds what that replay would compute: :func:`measure_grade`
measures it where it is (the runtime grades a session it holds live so). The equity series is the
equity at each processed bar's close from the opening bar (bar 0); when a session
stands down, the liquidation's fees are booked at the stand-down bar, so that bar's
point is the equity *after* liquidation. ``exposure`` counts the processed bars
(bar 1 … T) whose close found a position held before any stand-down liquidation.
Ratios use Decimal at 50 significant digits, then 8 places half-even.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Context, Decimal, localcontext
from fractions import Fraction
from typing import Any

from kestrel_protocol import (
    Conformance,
    GradeResult,
    KestrelError,
    Pentad,
    RefusalCode,
    SessionRecord,
    money,
    ratio,
)

from ..catalog.model import LoadedScenario
from .chain import chain_engine
from .core import SessionEngine
from .margin import margin_check
from .orders import Fill
from .risk import bar_returns, risk_metrics
from .trades import trips_metrics

__all__ = ["compute_grade", "equity_metrics", "max_drawdown", "measure_grade"]

_CONTEXT = Context(prec=50)


def _sharpe(returns: Sequence[Decimal], bars_per_year: int) -> Decimal:
    """The per-bar returns' mean over their sample deviation, × ``sqrt(bars_per_year)``.
    Each operation is the one the figure is defined by (its digits depend on every
    rounding); made in lists, a deviation once for its square."""
    zero = Decimal(0)
    n = len(returns)
    if n < 2:
        return zero
    mean = sum(returns, zero) / n
    deviations = [r - mean for r in returns]
    variance = sum([d * d for d in deviations], zero) / (n - 1)
    if variance == 0:
        return zero
    return mean / variance.sqrt() * Decimal(bars_per_year).sqrt()


def max_drawdown(series: Sequence[int]) -> Fraction:
    """``max (peak − e) / peak`` over the series (0 when it never falls below a positive peak)."""
    worst_num, worst_den = 0, 1
    peak = series[0]
    for equity in series:
        if equity > peak:
            peak = equity
        elif peak > 0 and (peak - equity) * worst_den > worst_num * peak:
            worst_num, worst_den = peak - equity, peak
    return Fraction(worst_num, worst_den)


def equity_metrics(
    series: Sequence[int],
    returns: Sequence[Decimal],
    holding: Sequence[int],
    scale: int,
    *,
    bars_per_year: int,
    worst: Fraction,
) -> dict[str, str]:
    """pnl, return, maxDrawdown, sharpe and exposure of an equity series in 10**-scale
    units (``holding[i]`` is 1 when bar ``i`` closed with a position). ``returns`` is its
    :func:`.risk.bar_returns` and ``worst`` its :func:`max_drawdown`, which the risk
    metrics read too."""
    with localcontext(_CONTEXT):
        e0, et = series[0], series[-1]
        pnl = Decimal(et - e0).scaleb(-scale)
        ret = Decimal(et - e0) / Decimal(e0) if e0 else Decimal(0)
        processed = len(series) - 1
        exposure = Decimal(sum(holding[1:])) / processed if processed else Decimal(0)
        return {
            "pnl": money(pnl),
            "return": ratio(ret),
            "maxDrawdown": ratio(Decimal(worst.numerator) / Decimal(worst.denominator)),
            "sharpe": ratio(_sharpe(returns, bars_per_year)),
            "exposure": ratio(exposure),
        }


def _buy_and_hold(loaded: LoadedScenario, last: int) -> str | None:
    """The first instrument's close-to-close return from bar 0 to bar ``last``."""
    close = loaded.tape.columns[loaded.scenario.instruments[0].symbol].close
    if close[0] <= 0:
        return None
    with localcontext(_CONTEXT):
        return ratio(Decimal(close[last] - close[0]) / Decimal(close[0]))


def _check(check_id: str, passed: bool, detail: str) -> dict[str, Any]:
    return {"id": check_id, "passed": passed, "detail": detail}


def _no_lookahead(record: SessionRecord) -> dict[str, Any]:
    """``no-lookahead``: failed when, at one of the session's submissions, its principal
    had been shown a bar after the session's clock by any face (the record's
    ``lookahead``, as the runtime saw it: see ``runtime.horizon``), naming the first."""
    seen = record.lookahead
    if seen.reads:
        first = seen.reads[0]
        more = len(seen.reads) - 1
        return _check(
            "no-lookahead",
            False,
            f"{first.read} before submission {first.seq} at bar {first.bar}: the principal "
            "had been shown bars after the session's clock"
            + (f"; {more} more such event(s)" if more else ""),
        )
    if seen.sealed:
        return _check(
            "no-lookahead",
            True,
            "the scenario was sealed for the whole session: no face served its tape or a "
            "bar after the clock",
        )
    return _check(
        "no-lookahead",
        True,
        "the session's principal read no bar after the clock through the runtime between "
        "open and close (the scenario was not sealed; reads outside the runtime, such as a "
        "tape file on the agent's own disk, cannot be seen)",
    )


def compute_grade(
    loaded: LoadedScenario,
    record: SessionRecord,
    pentads: Sequence[Pentad],
    progress: Callable[[int, int], None] | None = None,
    bars: int | None = None,
) -> GradeResult:
    """Replay ``pentads`` on a fresh engine and grade the result (docs/spec.md §6 metrics and
    conformance). Pure: a function of the artifacts and the scenario alone.
    ``progress(done, total)`` is called after each pentad with bars replayed / ``bars``
    (the clock the replay ends at, i.e. the head frame's; default the tape's last bar)."""
    first = pentads[0].prev if pentads else None
    engine = chain_engine(loaded, record.session, first, head=record.head)
    total = max(1, len(loaded.tape) - 1 if bars is None else bars)
    chain: str | None = None
    after_stand_down = 0
    scenario = loaded.scenario
    if record.scenario.id != scenario.id or record.scenario.root != scenario.root:
        chain = (
            f"record is for scenario {record.scenario.id} {record.scenario.root}, "
            f"graded on {scenario.id} {scenario.root}"
        )
    elif len(pentads) != len(record.pentads):
        chain = f"record lists {len(record.pentads)} pentads, {len(pentads)} were given"
    for index, pentad in enumerate(pentads):
        if chain is not None:
            break
        seq = index + 1
        prev = engine.frame_root()
        if pentad.root != record.pentads[index]:
            chain = f"pentad {seq} is {pentad.root}, the record lists {record.pentads[index]}"
        elif pentad.session != record.session or pentad.seq != seq:
            chain = f"pentad {seq} names session {pentad.session} seq {pentad.seq}"
        elif pentad.prev != prev:
            chain = f"pentad {seq}: prev {pentad.prev} is not frame {index}'s root {prev}"
        else:
            try:
                engine.replay(pentad.body.bytes)
            except KestrelError as exc:
                if exc.code == RefusalCode.SESSION_STOOD_DOWN:
                    after_stand_down = len(pentads) - index
                chain = f"pentad {seq} does not replay: {exc.code}: {exc.message}"
        if progress is not None:
            progress(min(engine.clock, total), total)
    if chain is None:
        last_root = engine.frame_root()
        engine.close()
        closed_root = engine.frame_root()
        if record.head not in (last_root, closed_root):
            chain = f"replay ends at {closed_root}, the record's head is {record.head}"
    elif engine.status != "closed":
        engine.close()
    if progress is not None:
        progress(total, total)
    return _measure(loaded, record, engine, chain, after_stand_down)


def measure_grade(
    loaded: LoadedScenario, record: SessionRecord, engine: SessionEngine
) -> GradeResult:
    """The grade of ``record`` measured on ``engine``: the session's own engine, whose
    steps the record's pentads journal, closed at the record's head. Equal to
    :func:`compute_grade` of the record and its pentads (their replay ends in this very
    state: a test compares the two), without replaying them."""
    return _measure(loaded, record, engine, None, 0)


def _fill_facts(
    fills: Sequence[Fill],
) -> tuple[list[tuple[str, int, int, int, int]], int, int, bool]:
    """One pass over ``fills``: their legs, their turnover (``Σ |qty × price|``), the
    largest absolute position they made and whether one went short."""
    legs: list[tuple[str, int, int, int, int]] = []
    positions: dict[str, int] = {}
    turnover = worst = 0
    short = False
    for f in fills:
        order = f.order
        symbol, qty = order.symbol, f.qty
        delta = qty if order.buy else -qty
        legs.append((symbol, f.bar, delta, f.price, f.fee))
        turnover += abs(qty * f.price)
        held = positions[symbol] = positions.get(symbol, 0) + delta
        if held < 0:
            short = True
            held = -held
        worst = max(worst, held)
    return legs, turnover, worst, short


def _measure(
    loaded: LoadedScenario,
    record: SessionRecord,
    engine: SessionEngine,
    chain: str | None,
    after_stand_down: int,
) -> GradeResult:
    """The grade of ``engine``'s state: ``chain`` is what broke the record's chain (None
    when intact), ``after_stand_down`` the submissions its replay found after a stand-down."""
    scenario = loaded.scenario
    terms = engine.terms
    series = engine.series()
    holding = engine.holding()
    drawdown = max_drawdown(series)
    bars_per_year = scenario.tape.bars_per_year
    returns = bar_returns(series)
    metrics: dict[str, Any] = equity_metrics(
        series, returns, holding, terms.money_scale, bars_per_year=bars_per_year, worst=drawdown
    )
    fills = engine.fills
    legs, turnover, worst, short = _fill_facts(fills)
    with localcontext(_CONTEXT):
        e0 = series[0]
        metrics["turnover"] = ratio(Decimal(turnover) / Decimal(e0) if e0 else Decimal(0))
        metrics["fees"] = money(Decimal(engine.account.fees).scaleb(-terms.money_scale))
    metrics["fills"] = len(fills)
    metrics.update(risk_metrics(series, returns, bars_per_year, drawdown))
    metrics["buyAndHold"] = _buy_and_hold(loaded, engine.clock)
    factor = terms.tape_factor
    marks = {s: Fraction(c.close[engine.clock] * factor) for s, c in loaded.tape.columns.items()}
    metrics.update(trips_metrics(legs, marks))

    limit = terms.max_position
    within = worst <= limit and (terms.shortable or not short)
    holdings = {s: h.qty for s, h in engine.account.holdings.items()}
    count = len(record.pentads)
    skipped = engine.skipped
    checks = [
        _check(
            "chain-intact",
            chain is None,
            chain or f"{count} pentads chain from the opening frame; replay reproduces head",
        ),
        _check(
            "within-position-limits",
            within,
            f"largest |position| {terms.quantity(worst)}"
            f" of max_position {terms.quantity(limit)}"
            + ("" if terms.shortable or not short else "; went short on a cash account"),
        ),
        _check(
            "flat-at-end",
            not holdings,
            "flat at the end"
            if not holdings
            else "still holding "
            + ", ".join(f"{terms.quantity(q)} {s}" for s, q in sorted(holdings.items())),
        ),
        _check(
            "no-statement-after-stand-down",
            skipped == 0 and after_stand_down == 0,
            "nothing was sent after the session stood down"
            if skipped == 0 and after_stand_down == 0
            else f"{skipped} statement(s) after the stand-down in its source were not applied;"
            f" {after_stand_down} submission(s) came after it",
        ),
    ]
    checks.append(_no_lookahead(record))
    if engine.margin is not None:
        ended = engine.stand_down is not None and engine.stand_down.reason == "end-of-tape"
        checks.append(margin_check(engine.margin, terms, loaded.tape.times, tape_ended=ended))
    conformance = Conformance.with_root(checks=checks)
    return GradeResult.with_root(
        session=record.session,
        scenario={"id": scenario.id, "root": scenario.root},
        record=record.root,
        head=record.head,
        metrics=metrics,
        conformance=conformance,
        passed=all(c["passed"] for c in checks),
    )
