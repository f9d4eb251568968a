"""``to_pandas()`` / ``to_polars()`` on a grade: the equity curve, every fill with its
side and symbol, and the round trips, as numeric frames whose numbers are the grade's."""

from __future__ import annotations

import shutil
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import kestrel_sdk
import pytest
from kestrel_sdk import Kestrel

from .conftest import Graded

SHIPPED = Path(kestrel_sdk.__file__).parent / "catalog_data" / "acme-trend"


def _ratio(value: float) -> Decimal:
    """A float as the grade shows a ratio: 8 places."""
    return Decimal(float(value)).quantize(Decimal("1e-8"))


@pytest.fixture(scope="module")
def frames(graded: Graded) -> Any:
    return graded.grade.to_pandas()


def test_the_equity_curve_ends_at_the_grades_pnl_and_worst_drawdown(
    graded: Graded, frames: Any
) -> None:
    equity, metrics = frames.equity, graded.grade.metrics
    assert str(equity["time"].dtype) == "datetime64[us, UTC]"
    assert list(equity["bar"]) == list(range(len(equity)))
    assert len(equity) == graded.session.frame().frame.clock.bar + 1
    cash = equity["equity"].iloc[0]
    assert equity["equity"].iloc[-1] - cash == pytest.approx(float(metrics.pnl), abs=1e-6)
    assert _ratio(equity["return"].iloc[-1]) == Decimal(metrics.return_)
    assert _ratio(equity["drawdown"].max()) == Decimal(metrics.max_drawdown)
    assert (equity["drawdown"] >= 0).all()


def test_every_fill_has_its_side_symbol_and_numeric_price(graded: Graded, frames: Any) -> None:
    fills, blotter = frames.fills, graded.session.blotter().blotter
    metrics = graded.grade.metrics
    assert len(fills) == metrics.fills == len(blotter.fills)
    orders = {o.id: o for o in blotter.orders}
    assert list(fills["side"]) == [orders[f.order].side for f in blotter.fills]
    assert set(fills["side"]) == {"buy", "sell"}
    assert list(fills["symbol"]) == [orders[f.order].symbol for f in blotter.fills]
    for column in ("price", "fee", "notional"):
        assert str(fills[column].dtype) == "float64"
    assert str(fills["qty"].dtype) == "int64"
    assert list(fills["price"]) == [float(f.price) for f in blotter.fills]
    assert fills["fee"].sum() == pytest.approx(float(metrics.fees), abs=1e-6)
    assert fills["signed_qty"].sum() == 0  # the session stood down flat


def test_the_round_trips_are_the_grades_trades(graded: Graded, frames: Any) -> None:
    trades, metrics = frames.trades, graded.grade.metrics
    assert len(trades) == metrics.trades > 1
    assert set(trades["side"]) == {"long"}
    assert _ratio(trades["return"].max()) == Decimal(str(metrics.best_trade))
    assert _ratio(trades["return"].min()) == Decimal(str(metrics.worst_trade))
    assert _ratio(trades["return"].mean()) == Decimal(str(metrics.expectancy))
    assert _ratio((trades["pnl"] > 0).mean()) == Decimal(str(metrics.win_rate))
    # Every share bought is sold in its trade; the P&L of the trades is the session's.
    assert trades["qty"].sum() == frames.fills["qty"].sum() / 2
    assert trades["pnl"].sum() == pytest.approx(float(metrics.pnl), abs=1e-6)
    assert (trades["exit_bar"] > trades["entry_bar"]).all()
    assert not trades["open"].any()


def test_the_metrics_frame_is_the_grade_exactly(graded: Graded, frames: Any) -> None:
    exact = graded.grade.metrics.to_json()
    table = frames.metrics.set_index("metric")
    assert list(table.index) == list(exact)
    assert table.loc["sharpe", "exact"] == exact["sharpe"]
    assert table.loc["sharpe", "value"] == float(exact["sharpe"])
    assert table.loc["fills", "value"] == exact["fills"]


def test_polars_frames_hold_the_same_numbers(graded: Graded, frames: Any) -> None:
    polars = graded.grade.to_polars()
    for name in ("equity", "fills", "trades", "metrics"):
        theirs, ours = getattr(polars, name), getattr(frames, name)
        assert theirs.columns == list(ours.columns)
        assert theirs.height == len(ours)
    assert polars.fills["price"].to_list() == frames.fills["price"].to_list()
    assert polars.equity["equity"].to_list() == frames.equity["equity"].to_list()
    assert polars.trades["return"].to_list() == frames.trades["return"].to_list()
    assert str(polars.equity["time"].dtype) == "Datetime(time_unit='us', time_zone='UTC')"


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_a_missing_extra_names_it(
    graded: Graded, library: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, library, None)  # as if it were not installed
    with pytest.raises(ImportError) as missing:
        getattr(graded.grade, f"to_{library}")()
    assert f"kestrel-sdk[{library}]" in str(missing.value)
    assert f"to_{library}() needs {library}" in str(missing.value)


def test_a_fill_across_zero_splits_the_trade_and_the_frames_say_so(
    tmp_path: Path,
) -> None:
    """Long 100, sell 150 (closes the long, opens a short of 50), buy 50, short 20 left
    open at the end: four trades, sides and sizes as traded, the fee split by shares,
    and the frames' totals still the grade's."""
    catalog = tmp_path / "catalog"
    shutil.copytree(SHIPPED, catalog / "shorty")
    toml = (catalog / "shorty" / "scenario.toml").read_text("utf-8")
    toml = toml.replace('id = "acme-trend"', 'id = "shorty"').replace(
        "shortable = false", "shortable = true"
    )
    (catalog / "shorty" / "scenario.toml").write_text(toml, "utf-8")
    with Kestrel(store="memory:", catalog_paths=[catalog]) as kestrel:
        session = kestrel.open("shorty")
        session.submit(
            "buy 100 ACME\nadvance 10\nsell 150 ACME\nadvance 10\n"
            "buy 50 ACME\nadvance 5\nsell 20 ACME\nadvance 3\n"
        )
        session.close()
        mark = session.frame().frame.marks["ACME"]
        grade = session.grade()
        frames = grade.to_pandas()
    trades, fills, metrics = frames.trades, frames.fills, grade.metrics
    assert list(trades["side"]) == ["long", "short", "short"]
    assert list(trades["qty"]) == [100, 50, 20]
    assert list(trades["open"]) == [False, False, True]
    assert trades["exit_bar"].isna().tolist() == [False, False, True]
    assert len(trades) == metrics.trades
    crossing = fills["fee"].iloc[1]
    assert trades["fees"].iloc[0] == pytest.approx(fills["fee"].iloc[0] + crossing * 100 / 150)
    assert trades["fees"].iloc[1] == pytest.approx(crossing * 50 / 150 + fills["fee"].iloc[2])
    assert trades["exit_price"].iloc[2] == float(mark)  # marked at the last close
    assert trades["pnl"].sum() == pytest.approx(float(metrics.pnl), abs=1e-6)
    assert _ratio(trades["return"].max()) == Decimal(str(metrics.best_trade))
    assert _ratio(trades["return"].min()) == Decimal(str(metrics.worst_trade))
