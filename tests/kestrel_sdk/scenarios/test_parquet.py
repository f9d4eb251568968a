"""Parquet bar files (real files, written by pyarrow) import exactly as the CSV of the same
bars, read by pyarrow or, where pyarrow is missing, by polars."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd  # type: ignore[import-untyped]
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner
from kestrel_sdk.cli import cli
from kestrel_sdk.scenarios import (
    ImportedScenario,
    ScenarioImportError,
    ScenarioTermsInput,
    scenario_from_file,
)

MINUTES = [datetime(2024, 1, 2, 14, 30 + minute, tzinfo=UTC) for minute in range(3)]
DAYS = [date(2024, 1, 2), date(2024, 1, 3), date(2024, 1, 4)]
OPEN = [187.15, 184.22, 182.15]
HIGH = [188.44, 185.88, 183.09]
LOW = [183.885, 183.43, 180.88]
CLOSE = [185.64, 184.25, 181.91]
VOLUME = [82488700, 58414500, 71983600]


_READER = ["pyarrow"]


@pytest.fixture(autouse=True, params=["pyarrow", "polars"])
def reader(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each test reads its files with pyarrow, then again with polars alone."""
    _READER[0] = request.param
    yield request.param
    _READER[0] = "pyarrow"


@contextmanager
def _reading() -> Iterator[None]:
    """While a file is imported: pyarrow hidden when the reader is polars (files are still
    written with pyarrow, outside)."""
    with pytest.MonkeyPatch.context() as patch:
        if _READER[0] == "polars":
            for name in ("pyarrow", "pyarrow.parquet"):
                patch.setitem(sys.modules, name, None)  # `import name` raises ImportError
        yield


def _daily(**columns: Any) -> pa.Table:
    """The daily bars of DAYS as a Parquet table (dates as ``date32``); ``columns``
    replace the named ones, in place."""
    table: dict[str, Any] = {
        "Date": pa.array(DAYS, pa.date32()),
        "Open": OPEN,
        "High": HIGH,
        "Low": LOW,
        "Close": CLOSE,
        "Volume": VOLUME,
    }
    return pa.table(table | columns)


def _write(tmp_path: Path, name: str, table: pa.Table) -> Path:
    path = tmp_path / name
    pq.write_table(table, path)
    return path


def _csv(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _import(path: Path, scenario_id: str, *, tick: str | None = None) -> ImportedScenario:
    """The file's scenario, described alike whatever the file's name (the default
    description names it, and the scenario's root covers its description)."""
    terms = ScenarioTermsInput(description="the bars of the test")
    with _reading():
        return scenario_from_file(path, scenario_id, tick=tick, terms=terms)


def _same(parquet: ImportedScenario, csv: ImportedScenario) -> None:
    assert parquet.tape == csv.tape
    assert parquet.scenario.tape.root == csv.scenario.tape.root
    assert parquet.scenario.root == csv.scenario.root
    assert parquet.layout == csv.layout
    assert parquet.notes == csv.notes


def _rows(times: list[str], symbol: str | None = None) -> str:
    prefix = f"{symbol}," if symbol else ""
    return "".join(
        f"{prefix}{t},{o!r},{h!r},{lo!r},{c!r},{v}\n"
        for t, o, h, lo, c, v in zip(times, OPEN, HIGH, LOW, CLOSE, VOLUME, strict=True)
    )


def test_alpaca_minute_bars_with_utc_nanosecond_timestamps_match_the_csv(tmp_path: Path) -> None:
    for zone in ("UTC", None):
        moments = MINUTES if zone else [moment.replace(tzinfo=None) for moment in MINUTES]
        table = pa.table(
            {
                "timestamp": pa.array(moments, pa.timestamp("ns", tz=zone)),
                "open": OPEN,
                "high": HIGH,
                "low": LOW,
                "close": CLOSE,
                "volume": pa.array(VOLUME, pa.int64()),
                "trade_count": pa.array([7, 8, 9], pa.int64()),
            }
        )
        parquet = _import(_write(tmp_path, "acme.parquet", table), "acme-1m")
        suffix = "Z" if zone else ""  # a naive timestamp is the CSV's naive time (noted as UTC)
        text = "timestamp,open,high,low,close,volume\n" + _rows(
            [f"2024-01-02T14:3{minute}:00{suffix}" for minute in range(3)]
        )
        _same(parquet, _import(_csv(tmp_path, "acme.csv", text), "acme-1m"))
        assert any("without an offset taken as UTC" in note for note in parquet.notes) == (
            zone is None
        )
        assert parquet.scenario.tape.interval == "1m"
        assert parquet.tape.splitlines()[1] == (
            "2024-01-02T14:30:00Z,ACME,187.150,188.440,183.885,185.640,82488700"
        )


def test_yahoo_daily_bars_with_date32_and_decimal_prices_match_the_csv(tmp_path: Path) -> None:
    prices = pa.decimal128(12, 6)
    table = pa.table(
        {
            "Date": pa.array(DAYS, pa.date32()),
            "Open": pa.array([Decimal(repr(v)) for v in OPEN], prices),
            "High": pa.array([Decimal(repr(v)) for v in HIGH], prices),
            "Low": pa.array([Decimal(repr(v)) for v in LOW], prices),
            "Close": pa.array([Decimal(repr(v)) for v in CLOSE], prices),
            "Adj Close": pa.array([Decimal("1.5")] * 3, prices),
            "Volume": pa.array(VOLUME, pa.int64()),
        }
    )
    parquet = _import(_write(tmp_path, "AAPL.parquet", table), "aapl")
    text = "Date,Open,High,Low,Close,Adj Close,Volume\n" + "".join(
        f"{day},{o},{h},{lo},{c},1.5,{v}\n"
        for day, o, h, lo, c, v in zip(DAYS, OPEN, HIGH, LOW, CLOSE, VOLUME, strict=True)
    )
    _same(parquet, _import(_csv(tmp_path, "AAPL.csv", text), "aapl"))
    assert parquet.layout == "Yahoo Finance"
    assert parquet.tape.splitlines()[1] == (
        "2024-01-02T00:00:00Z,AAPL,187.150,188.440,183.885,185.640,82488700"
    )


def test_daily_timestamps_in_new_york_keep_their_local_date(tmp_path: Path) -> None:
    local = pd.DatetimeIndex(["2024-03-08", "2024-03-11"]).tz_localize("America/New_York")
    table = pa.table(
        {
            "Date": pa.array(local, pa.timestamp("ns", tz="America/New_York")),
            "Open": [515.46, 510.48],
            "High": [518.22, 512.74],
            "Low": [511.13, 509.64],
            "Close": [511.72, 511.28],
            "Volume": [85434900, 62557200],
        }
    )
    parquet = _import(_write(tmp_path, "SPY.parquet", table), "spy")
    text = (
        "Date,Open,High,Low,Close,Volume\n"
        "2024-03-08 00:00:00-05:00,515.46,518.22,511.13,511.72,85434900\n"
        "2024-03-11 00:00:00-04:00,510.48,512.74,509.64,511.28,62557200\n"
    )
    _same(parquet, _import(_csv(tmp_path, "SPY.csv", text), "spy"))
    assert parquet.tape.splitlines()[1:] == [
        "2024-03-08T00:00:00Z,SPY,515.46,518.22,511.13,511.72,85434900",
        "2024-03-11T00:00:00Z,SPY,510.48,512.74,509.64,511.28,62557200",
    ]


def test_long_format_with_string_symbols_and_epoch_times_matches_the_csv(tmp_path: Path) -> None:
    epochs = [1704205800000000000, 1704205860000000000, 1704205920000000000]
    columns: dict[str, list[Any]] = {name: [] for name in ("sym", "window_start", "o", "h")}
    columns |= {"l": [], "c": [], "v": []}
    for symbol, scale in (("msft", 2.0), ("aapl", 1.0)):  # sorted by symbol, then time
        columns["sym"] += [symbol] * 3
        columns["window_start"] += epochs
        columns["o"] += [price * scale for price in OPEN]
        columns["h"] += [price * scale for price in HIGH]
        columns["l"] += [price * scale for price in LOW]
        columns["c"] += [price * scale for price in CLOSE]
        columns["v"] += VOLUME
    table = pa.table(columns)
    parquet = _import(_write(tmp_path, "flat.parquet", table), "two")
    text = "sym,window_start,o,h,l,c,v\n" + "".join(
        ",".join(str(value) if isinstance(value, int | str) else repr(value) for value in row)
        + "\n"
        for row in zip(*columns.values(), strict=True)
    )
    _same(parquet, _import(_csv(tmp_path, "flat.csv", text), "two"))
    assert [item.symbol for item in parquet.scenario.instruments] == ["AAPL", "MSFT"]
    assert parquet.tape.splitlines()[2] == (
        "2024-01-02T14:30:00Z,MSFT,374.300,376.880,367.770,371.280,82488700"
    )


def test_frames_saved_by_pandas_import_as_their_csv(tmp_path: Path) -> None:
    """backtesting.py's DatetimeIndex frame and yfinance's (Price, Ticker) columns, each
    saved with ``to_parquet`` and with ``to_csv``."""
    index = pd.DatetimeIndex([day.isoformat() for day in DAYS])
    frame = pd.DataFrame(
        {"Open": OPEN, "High": HIGH, "Low": LOW, "Close": CLOSE, "Volume": VOLUME}, index=index
    )
    frame.to_parquet(tmp_path / "GOOG.parquet")
    frame.to_csv(tmp_path / "GOOG.csv")
    parquet = _import(tmp_path / "GOOG.parquet", "goog")
    _same(parquet, _import(tmp_path / "GOOG.csv", "goog"))
    assert parquet.layout == "backtesting.py"

    wide = pd.concat({"AAPL": frame, "MSFT": frame * 2}, axis=1).swaplevel(axis=1)
    wide.columns.names = ["Price", "Ticker"]
    wide.index.name = "Date"
    wide.to_parquet(tmp_path / "two.parquet")
    wide.to_csv(tmp_path / "two.csv")
    parquet = _import(tmp_path / "two.parquet", "two")
    _same(parquet, _import(tmp_path / "two.csv", "two"))
    assert parquet.layout == "yfinance three-row header"
    assert [item.symbol for item in parquet.scenario.instruments] == ["AAPL", "MSFT"]


def test_float_prices_off_the_tick_round_as_the_csv_does(tmp_path: Path) -> None:
    """float64 keeps its shortest form (187.15, not 187.14999…); float32 noise and a price
    finer than the chosen tick are rounded half-even to the tick, with the same note."""
    for kind in (pa.float64(), pa.float32()):
        table = _daily(
            Open=pa.array([187.15, 184.225, 182.15], kind),
            High=pa.array(HIGH, kind),
            Low=pa.array(LOW, kind),
            Close=pa.array(CLOSE, kind),
            Volume=pa.array([float(v) for v in VOLUME]),  # pandas' float volume
        )
        path = _write(tmp_path, "ACME.parquet", table)
        text = "Date,Open,High,Low,Close,Volume\n" + "".join(
            f"{day},{o!r},{h!r},{lo!r},{c!r},{float(v)!r}\n"
            for day, o, h, lo, c, v in zip(
                DAYS,
                table["Open"].to_pylist(),
                table["High"].to_pylist(),
                table["Low"].to_pylist(),
                table["Close"].to_pylist(),
                VOLUME,
                strict=True,
            )
        )
        csv = _csv(tmp_path, "ACME.csv", text)
        for tick in (None, "0.01"):
            parquet = _import(path, "acme", tick=tick)
            _same(parquet, _import(csv, "acme", tick=tick))
            first = parquet.tape.splitlines()[1]
            second = parquet.tape.splitlines()[2]
            if tick:
                assert first.split(",")[2] == "187.15"
                # 184.225 is half-even 184.22; as a float32 it is 184.2250061…: 184.23
                assert second.split(",")[2] == ("184.22" if kind == pa.float64() else "184.23")
            else:
                assert first.split(",")[2:4] == ["187.150", "188.440"]
                assert second.split(",")[2] == "184.225"


def _problems(path: Path) -> list[str]:
    with pytest.raises(ScenarioImportError) as error:
        _import(path, "acme")
    return error.value.lines


def test_a_null_cell_is_named_by_its_row_as_an_empty_csv_cell_is(tmp_path: Path) -> None:
    table = _daily(
        Close=pa.array([CLOSE[0], None, CLOSE[2]], pa.float64()),
        Volume=pa.array([VOLUME[0], VOLUME[1], None], pa.int64()),
    )
    parquet = _problems(_write(tmp_path, "ACME.parquet", table))
    assert parquet == [
        "ACME.parquet: row 3: Close is empty",
        "ACME.parquet: row 4: Volume is empty",
    ]
    text = "Date,Open,High,Low,Close,Volume\n" + (
        f"2024-01-02,{OPEN[0]},{HIGH[0]},{LOW[0]},{CLOSE[0]},{VOLUME[0]}\n"
        f"2024-01-03,{OPEN[1]},{HIGH[1]},{LOW[1]},,{VOLUME[1]}\n"
        f"2024-01-04,{OPEN[2]},{HIGH[2]},{LOW[2]},{CLOSE[2]},\n"
    )
    csv = _problems(_csv(tmp_path, "ACME.csv", text))
    assert [line.replace("ACME.csv", "ACME.parquet") for line in csv] == parquet


def test_a_null_time_and_a_time_with_nanoseconds_are_refused_by_row(tmp_path: Path) -> None:
    stamps = [1704205800000000000, None, 1704205920000000001]
    table = pa.table(
        {
            "timestamp": pa.array(stamps, pa.timestamp("ns", tz="UTC")),
            "open": OPEN,
            "high": HIGH,
            "low": LOW,
            "close": CLOSE,
            "volume": VOLUME,
        }
    )
    assert _problems(_write(tmp_path, "ACME.parquet", table)) == [
        "ACME.parquet: row 3: the time is empty",
        "ACME.parquet: row 4: time 2024-01-02T14:32:00.000000001+00:00 has fractions of a second",
    ]
    text = "timestamp,open,high,low,close,volume\n" + _rows(
        ["2024-01-02T14:30:00Z", "", "2024-01-02T14:32:00.000000001+00:00"]
    )
    assert [
        line.replace(".csv", ".parquet") for line in _problems(_csv(tmp_path, "ACME.csv", text))
    ] == (_problems(tmp_path / "ACME.parquet"))


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        pytest.param(
            b"Date,Open\n2024-01-02,1\n",
            {"pyarrow": "Parquet magic bytes not found", "polars": "must end with PAR1"},
            id="a-csv",
        ),
        pytest.param(None, {"pyarrow": "Parquet", "polars": "parquet"}, id="truncated"),
    ],
)
def test_a_corrupt_parquet_file_is_one_clear_line_and_nothing_is_written(
    tmp_path: Path, reader: str, content: bytes | None, reason: dict[str, str]
) -> None:
    source = tmp_path / "ACME.parquet"
    if content is None:
        table = pa.table({"Date": pa.array(DAYS, pa.date32()), "Open": OPEN})
        pq.write_table(table, source)
        content = source.read_bytes()[:-20]
    source.write_bytes(content)
    before = sorted(tmp_path.iterdir())
    with _reading():
        result = CliRunner().invoke(
            cli,
            ["scenario", "new", "acme", "--from", str(source), "--out", str(tmp_path / "acme")],
        )
    assert result.exit_code == 1
    first, last = result.stderr.splitlines()
    assert first.startswith("ACME.parquet: cannot read the Parquet file: ")
    assert reason[reader] in first
    assert last == f"kestrel: INVALID_ARGUMENT: 1 problem in {source}; nothing written"
    assert sorted(tmp_path.iterdir()) == before


def test_a_missing_parquet_file_says_so_as_a_missing_csv_does(tmp_path: Path) -> None:
    parquet = _problems(tmp_path / "ACME.parquet")
    csv = _problems(tmp_path / "ACME.csv")
    assert parquet == ["ACME.parquet: cannot read the file: No such file or directory"]
    assert [line.replace(".csv", ".parquet") for line in csv] == parquet


def test_without_a_reader_the_message_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, "bars.parquet", pa.table({"Date": pa.array(DAYS, pa.date32())}))
    for name in ("pyarrow", "pyarrow.parquet", "polars"):
        monkeypatch.setitem(sys.modules, name, None)  # `import name` raises ImportError
    assert _problems(path) == [
        "bars.parquet: reading Parquet needs pyarrow or polars: "
        "pip install pyarrow (or polars); or save it as CSV"
    ]


def test_the_cli_makes_the_same_scenario_from_parquet_as_from_csv(tmp_path: Path) -> None:
    source = _write(tmp_path, "ACME.parquet", _daily())
    csv = _csv(
        tmp_path,
        "ACME.csv",
        "Date,Open,High,Low,Close,Volume\n" + _rows([day.isoformat() for day in DAYS]),
    )
    written = {}
    for path in (source, csv):
        out = tmp_path / path.suffix[1:]
        with _reading():
            result = CliRunner().invoke(
                cli, ["scenario", "new", "acme", "--from", str(path), "--out", str(out)]
            )
        assert result.exit_code == 0, result.output
        assert f"{path.name}: OHLCV layout; 3 bars of ACME, 1d" in result.stdout
        written[path.suffix] = {
            name: (out / name).read_text(encoding="utf-8") for name in ("scenario.toml", "tape.csv")
        }
    parquet_toml, csv_toml = written[".parquet"]["scenario.toml"], written[".csv"]["scenario.toml"]
    assert parquet_toml == csv_toml.replace("ACME.csv", "ACME.parquet")
    assert written[".parquet"]["tape.csv"] == written[".csv"]["tape.csv"]
    assert written[".parquet"]["tape.csv"].splitlines()[1] == (
        "2024-01-02T00:00:00Z,ACME,187.150,188.440,183.885,185.640,82488700"
    )
