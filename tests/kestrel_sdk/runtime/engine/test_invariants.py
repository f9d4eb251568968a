"""Invariants over random programs: exact accounting identity, limits, ids, replay."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from kestrel_protocol import KestrelError, root_of
from kestrel_sdk.runtime.engine import SessionEngine, compute_grade, measure_grade

from tests.kestrel_sdk.runtime.engine.replay import run_session
from tests.kestrel_sdk.runtime.engine.tapes import daily


def _rows() -> list[tuple[str, str, str, str, int]]:
    rows = []
    price = 10000
    for i in range(40):
        step = ((i * 7919) % 13) - 6
        o = price + ((i * 31) % 5) - 2
        c = price + step * 10
        h = max(o, c) + (i % 4) * 5
        lo = min(o, c) - (i % 3) * 5
        rows.append((f"{o / 100:.2f}", f"{h / 100:.2f}", f"{lo / 100:.2f}", f"{c / 100:.2f}", 50))
        price = c
    return rows


LOADED = daily(
    _rows(),
    cash="20000.00",
    bps="7.5",
    minimum="0.10",
    participation="0.5",
    slippage_bps="3",
    shortable=True,
    max_position=60,
)

prices = st.integers(min_value=9000, max_value=11000).map(lambda p: f"{p / 100:.2f}")
orders = st.builds(
    lambda side, qty, kind, p1, p2, tif: (
        f"{side} {qty} ACME"
        + {"market": "", "limit": f" limit {p1}", "stop": f" stop {p1}"}.get(
            kind, f" stop {p1} limit {p2}"
        )
        + f" tif {tif}"
    ),
    st.sampled_from(["buy", "sell"]),
    st.integers(min_value=1, max_value=40),
    st.sampled_from(["market", "limit", "stop", "stop-limit"]),
    prices,
    prices,
    st.sampled_from(["day", "gtc", "ioc"]),
)
statements = st.one_of(
    orders,
    st.integers(min_value=1, max_value=4).map(lambda n: f"advance {n}"),
    st.just("cancel all"),
    st.integers(min_value=1, max_value=6).map(lambda n: f"cancel o{n}"),
    st.just('stand down "enough"'),
)
programs = st.lists(
    st.lists(statements, min_size=1, max_size=5).map("\n".join), min_size=1, max_size=12
)


def _marked(engine: SessionEngine) -> tuple[list[int], bytearray]:
    """The equity at every bar's close from bar 0 to the clock, and whether a position
    was held there, by definition: the fills booked up to the bar (a stand-down's
    liquidation is booked at its bar, after the position was seen held there)."""
    factor = engine.terms.tape_factor
    closes = [close * factor for close in LOADED.tape.columns["ACME"].close]
    cash, qty, k = engine.terms.cash, 0, 0
    fills = engine.fills
    series, holding = [], bytearray()
    for bar in range(engine.clock + 1):
        held = qty
        while k < len(fills) and fills[k].bar <= bar:
            fill = fills[k]
            delta = fill.qty if fill.order.buy else -fill.qty
            cash -= delta * fill.price + fill.fee
            qty += delta
            k += 1
            # the stand-down's own liquidation orders (line 0), not an order of the source
            # it cancelled after a partial fill (whose reason is "stand-down" too)
            if fill.order.reason != "stand-down" or fill.order.line:
                held = qty
        series.append(cash + qty * closes[bar])
        holding.append(1 if held and bar else 0)
    return series, holding


def _accepted(sources: list[str]) -> list[str]:
    engine = SessionEngine(LOADED, "ks_prop")
    kept = []
    for source in sources:
        try:
            engine.submit(source)
        except KestrelError as exc:
            if exc.code not in {"INVALID_SOURCE", "SESSION_STOOD_DOWN"}:
                raise
            continue
        kept.append(source)
    return kept


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
@example(["buy 10 ACME tif gtc\nadvance 3", 'sell 4 ACME\nadvance 2\nstand down "enough"'])
@example(['buy 26 ACME tif gtc\nadvance 1\nstand down "enough"'])  # 25 filled, then cancelled
def test_random_programs_keep_every_invariant(sources: list[str]) -> None:
    sources = _accepted(sources)
    engine, pentads, record = run_session(LOADED, sources)
    terms = engine.terms
    account = engine.account
    closes = LOADED.tape.columns["ACME"].close
    clock = engine.clock
    # exact identity: cash + Σ qty × close == start + realized + unrealized − fees
    value = sum(h.qty * closes[clock] for h in account.holdings.values())
    basis = sum(Fraction(h.basis) for h in account.holdings.values())
    assert account.cash + value == terms.cash + account.realized + (value - basis) - account.fees
    blotter = engine.blotter()
    assert [o.id for o in blotter.orders] == [f"o{i}" for i in range(1, len(blotter.orders) + 1)]
    assert [f.id for f in blotter.fills] == [f"f{i}" for i in range(1, len(blotter.fills) + 1)]
    position = 0
    filled: dict[str, int] = {}
    for fill in blotter.fills:
        side = next(o.side for o in blotter.orders if o.id == fill.order)
        qty = int(fill.qty)
        position += qty if side == "buy" else -qty
        assert abs(position) <= 60
        filled[fill.order] = filled.get(fill.order, 0) + qty
    for order in blotter.orders:
        assert order.filled == filled.get(order.id, 0) <= int(order.qty)
        assert (order.status == "filled") == (order.filled == order.qty)
    grade = compute_grade(LOADED, record, pentads)
    assert grade.conformance.checks[0].passed, grade.conformance.checks[0].detail
    again = compute_grade(LOADED, record, pentads)
    assert again.root == grade.root
    # the equity and exposure the engine kept as runs are every bar marked, and its own
    # grade (a live session's, unreplayed) is the replay's
    assert (engine.series(), engine.holding()) == _marked(engine)
    assert measure_grade(LOADED, record, engine).canonical() == grade.canonical()
    assert record.head == root_of(engine.frame())
