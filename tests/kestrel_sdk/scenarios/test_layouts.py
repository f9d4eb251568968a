"""The layouts people have (Alpaca, Polygon, long, yfinance, DataFrames) import alike."""

from __future__ import annotations

from pathlib import Path

import pandas as pd  # type: ignore[import-untyped]
import pytest
from kestrel_sdk.scenarios import ScenarioImportError, scenario_from_file, scenario_from_frame

EXPECTED = (
    "time,symbol,open,high,low,close,volume\n"
    "2024-01-02T14:30:00Z,ACME,10.00,11.00,9.50,10.50,1000\n"
    "2024-01-02T14:31:00Z,ACME,10.50,11.50,10.00,11.00,2000\n"
    "2024-01-02T14:32:00Z,ACME,11.00,11.25,10.75,11.00,0\n"
)
ROWS = [
    ("10", "11", "9.5", "10.5", "1000"),
    ("10.5", "11.5", "10", "11", "2000"),
    ("11", "11.25", "10.75", "11", "0"),
]


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("header", "times"),
    [
        pytest.param(
            "timestamp,open,high,low,close,volume,trade_count,vwap",
            ["2024-01-02T14:30:00Z", "2024-01-02T14:31:00Z", "2024-01-02T14:32:00Z"],
            id="alpaca",
        ),
        pytest.param(
            "t,o,h,l,c,v", ["1704205800000", "1704205860000", "1704205920000"], id="polygon-ms"
        ),
        pytest.param(
            "Datetime,Open,High,Low,Close,Volume",
            ["2024-01-02 09:30:00-05:00", "2024-01-02 09:31:00-05:00", "2024-01-02 09:32:00-05:00"],
            id="yahoo-intraday-with-offset",
        ),
    ],
)
def test_single_symbol_layouts_give_the_same_tape(
    tmp_path: Path, header: str, times: list[str]
) -> None:
    extra = ",7,10.1" if "vwap" in header else ""
    body = "".join(
        f"{time},{','.join(row)}{extra}\n" for time, row in zip(times, ROWS, strict=True)
    )
    imported = scenario_from_file(_file(tmp_path, "acme.csv", f"{header}\n{body}"), "acme-1m")
    assert imported.tape == EXPECTED
    assert imported.scenario.tape.interval == "1m"


def test_newest_first_files_are_turned_round(tmp_path: Path) -> None:
    times = ["2024-01-02T14:32:00Z", "2024-01-02T14:31:00Z", "2024-01-02T14:30:00Z"]
    body = "".join(f"{t},{','.join(r)}\n" for t, r in zip(times, reversed(ROWS), strict=True))
    imported = scenario_from_file(
        _file(tmp_path, "x.csv", "timestamp,open,high,low,close,volume\n" + body),
        "acme-1m",
        symbol="ACME",
    )
    assert imported.tape == EXPECTED
    assert any("newest first" in note for note in imported.notes)


def test_long_format_with_a_symbol_column_makes_a_multi_symbol_scenario(tmp_path: Path) -> None:
    text = (
        "symbol,timestamp,open,high,low,close,volume\n"  # Alpaca sorts by symbol, then time
        "msft,2024-01-02T05:00:00Z,370,376,366,370.87,25258600\n"
        "msft,2024-01-03T05:00:00Z,369.01,373.26,368.51,370.6,23083500\n"
        "aapl,2024-01-02T05:00:00Z,187.15,188.44,183.885,185.64,82488700\n"
        "aapl,2024-01-03T05:00:00Z,184.22,185.88,183.43,184.25,58414500\n"
    )
    imported = scenario_from_file(_file(tmp_path, "bars.csv", text), "two")
    assert [item.symbol for item in imported.scenario.instruments] == ["AAPL", "MSFT"]
    assert imported.scenario.instruments[0].tick == "0.001"
    assert imported.tape.splitlines()[1:3] == [
        "2024-01-02T00:00:00Z,AAPL,187.150,188.440,183.885,185.640,82488700",
        "2024-01-02T00:00:00Z,MSFT,370.000,376.000,366.000,370.870,25258600",
    ]
    picked = scenario_from_file(tmp_path / "bars.csv", "one", symbol="MSFT")
    assert [item.symbol for item in picked.scenario.instruments] == ["MSFT"]
    with pytest.raises(ScenarioImportError) as missing:
        scenario_from_file(tmp_path / "bars.csv", "one", symbol="GOOG")
    assert missing.value.lines == ["bars.csv: symbol GOOG is not in the file (it has AAPL, MSFT)"]


def test_a_symbol_missing_at_a_time_is_named_with_the_row(tmp_path: Path) -> None:
    text = (
        "symbol,date,open,high,low,close,volume\n"
        "AAA,2024-01-02,1,2,1,1,5\nBBB,2024-01-02,1,2,1,1,5\nAAA,2024-01-03,1,2,1,1,5\n"
    )
    with pytest.raises(ScenarioImportError) as error:
        scenario_from_file(_file(tmp_path, "ab.csv", text), "ab")
    assert error.value.lines == [
        "ab.csv: row 4: no bar for BBB at 2024-01-03T00:00:00Z "
        "(every symbol needs a bar at every time)"
    ]


def test_yfinance_three_row_header_and_daily_offsets_keep_the_local_date(tmp_path: Path) -> None:
    text = (
        "Price,Close,High,Low,Open,Volume\n"
        "Ticker,SPY,SPY,SPY,SPY,SPY\n"
        "Date,,,,,\n"
        "2024-03-08 00:00:00-05:00,511.72,518.22,511.13,515.46,85434900\n"
        "2024-03-11 00:00:00-04:00,511.28,512.74,509.64,510.48,62557200\n"
    )
    imported = scenario_from_file(_file(tmp_path, "download.csv", text), "spy")
    assert imported.layout == "yfinance three-row header"
    assert imported.tape.splitlines()[1:] == [
        "2024-03-08T00:00:00Z,SPY,515.46,518.22,511.13,511.72,85434900",
        "2024-03-11T00:00:00Z,SPY,510.48,512.74,509.64,511.28,62557200",
    ]


def test_frames_with_a_datetime_index_or_a_symbol_multiindex_import(tmp_path: Path) -> None:
    index = pd.DatetimeIndex(["2024-01-02 14:30", "2024-01-02 14:31", "2024-01-02 14:32"])
    frame = pd.DataFrame(
        [[float(v) for v in row] for row in ROWS],
        columns=["Open", "High", "Low", "Close", "Volume"],
        index=index,
    )
    assert scenario_from_frame(frame, "acme-1m", symbol="ACME").tape == EXPECTED
    alpaca = frame.rename(columns=str.lower).copy()
    alpaca.index = pd.MultiIndex.from_arrays(
        [["ACME"] * 3, index.tz_localize("UTC")], names=["symbol", "timestamp"]
    )
    imported = scenario_from_frame(alpaca, "acme-1m")
    assert imported.tape == EXPECTED
    assert imported.write(tmp_path / "acme-1m") == tmp_path / "acme-1m"
    assert (tmp_path / "acme-1m" / "tape.csv").read_text(encoding="utf-8") == EXPECTED


def test_frame_problems_name_the_row_by_position() -> None:
    frame = pd.DataFrame(
        {"Open": [10.0, 10.0], "High": [11.0, 9.0], "Low": [9.0, 11.0], "Close": [10.0, 10.0]},
        index=pd.DatetimeIndex(["2024-01-02", "2024-01-03"]),
    )
    with pytest.raises(ScenarioImportError) as error:
        scenario_from_frame(frame, "x", symbol="X")
    assert error.value.lines[0].startswith("DataFrame: missing column Volume")
    frame["Volume"] = [1, 1]
    with pytest.raises(ScenarioImportError) as error:
        scenario_from_frame(frame, "x", symbol="X")
    assert error.value.lines == ["row 1: High 9.0 < Low 11.0"]


def test_yfinance_wide_header_with_two_tickers_is_a_two_symbol_scenario(tmp_path: Path) -> None:
    text = (
        "Price,Close,High,Low,Open,Volume,Close,High,Low,Open,Volume\n"
        "Ticker,AAPL,AAPL,AAPL,AAPL,AAPL,MSFT,MSFT,MSFT,MSFT,MSFT\n"
        "Date,,,,,,,,,,\n"
        "2024-01-02,185.64,188.44,183.89,187.15,82488700,370.87,376,366,370,25258600\n"
    )
    imported = scenario_from_file(_file(tmp_path, "two.csv", text), "two")
    assert imported.tape.splitlines()[1:] == [
        "2024-01-02T00:00:00Z,AAPL,187.15,188.44,183.89,185.64,82488700",
        "2024-01-02T00:00:00Z,MSFT,370.00,376.00,366.00,370.87,25258600",
    ]
