"""Imports stream: a large file is imported in bounded memory into the very bytes the
importer wrote before it streamed, and faults found part-way are named as before."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import sys
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kestrel_sdk.runtime.catalog.tapes import parse_tape, render_tape
from kestrel_sdk.scenarios import ImportedScenario, ScenarioImportError, scenario_from_file

from tests.large_tapes import MB, ROOT_2M, ROWS, peak, write_bar_file


def _problems(path: Path, tick: str | None = None) -> list[str]:
    with pytest.raises(ScenarioImportError) as caught:
        scenario_from_file(path, "x", tick=tick)
    return caught.value.lines


def _minute_rows(count: int, first: int = 0) -> str:
    start = dt.datetime(2024, 1, 2, 14, 30, tzinfo=dt.UTC)
    return "".join(
        f"{(start + dt.timedelta(minutes=n)):%Y-%m-%dT%H:%M:%SZ},10.5,11,10,10.25,{n}\n"
        for n in range(first, first + count)
    )


# -- the same bytes as before ------------------------------------------------------------

# Each root is the one the importer gave these files before it streamed (main at 7b8c790).
GOLDEN = [
    pytest.param(
        "Date,Open,High,Low,Close,Adj Close,Volume\n"  # Yahoo, newest first, float32 noise
        "2024-01-04,182.149994,183.089996,180.880005,181.910004,181.2,71983600\n"
        "2024-01-03,184.220001,185.880005,183.429993,184.250000,183.5,58414500\n"
        "2024-01-02,187.149994,188.440002,183.889999,185.639999,184.9,82488700\n",
        {"symbol": "AAPL"},
        "sha256:bfc1db566f79fb1444c0724fefe5db3f00b5c3f3c7ac4eafe6265133fcd52fe3",
        id="yahoo-newest-first",
    ),
    pytest.param(
        "symbol,t,o,h,l,c,v\n"  # long format by symbol, epoch milliseconds
        "msft,1704205800000,370,376,366,370.87,25258600\n"
        "msft,1704205860000,369.01,373.26,368.51,370.6,23083500\n"
        "aapl,1704205800000,187.15,188.44,183.885,185.64,82488700\n"
        "aapl,1704205860000,184.22,185.88,183.43,184.25,58414500\n",
        {},
        "sha256:08a59804c816dacf4aabb39ba91d8a77d59be2795025f65bf02863797378ce58",
        id="long-by-symbol",
    ),
    pytest.param(
        "Datetime,Open,High,Low,Close,Volume\n"  # daily at New York midnight, a coarse tick
        "2024-03-08 00:00:00-05:00,10.02,10.13,9.91,10.07,100\n"
        "2024-03-11 00:00:00-04:00,10.07,10.33,10.01,10.26,200\n",
        {"symbol": "ACME", "tick": "0.05"},
        "sha256:21f2291d1b5ecde828224a04f997efb6910a1200849fbc703f96ac1daeb6518d",
        id="daily-offsets-tick",
    ),
]


@pytest.mark.parametrize(("text", "options", "root"), GOLDEN)
def test_imports_keep_the_roots_they_had_before_streaming(
    tmp_path: Path, text: str, options: dict[str, str], root: str
) -> None:
    path = tmp_path / "bars.csv"
    path.write_text(text, encoding="utf-8")
    imported = scenario_from_file(
        path, "golden", symbol=options.get("symbol"), tick=options.get("tick")
    )
    assert imported.scenario.tape.root == root
    assert hashlib.sha256(imported.tape.encode("utf-8")).hexdigest() == root.removeprefix("sha256:")


@st.composite
def bar_files(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    """A valid file: 1-3 symbols, any order a file may have, prices of 0-6 decimals."""
    symbols = draw(st.lists(st.sampled_from(["AAA", "BB.X", "CCC"]), min_size=1, unique=True))
    count = draw(st.integers(1, 12))
    step = draw(st.sampled_from([60, 300, 3600, 86400]))
    places = draw(st.integers(0, 6))
    start = dt.datetime(2024, 1, 2, tzinfo=dt.UTC)
    rows = []
    for index in range(count):
        moment = (start + dt.timedelta(seconds=step * index)).strftime("%Y-%m-%dT%H:%M:%SZ")
        for symbol in symbols:
            low = 10**places + draw(st.integers(0, 10**6))  # at least 1: on any tick
            open_, close = (low + draw(st.integers(0, 500)) for _ in range(2))
            high = max(open_, close) + draw(st.integers(0, 500))
            prices = [f"{value / 10**places:.{places}f}" for value in (open_, high, low, close)]
            rows.append((index, symbol, f"{symbol},{moment},{','.join(prices)},{low % 997}\n"))
    order = draw(st.sampled_from(["time", "newest", "symbol"]))
    if order == "newest":
        rows.reverse()
    elif order == "symbol":
        rows.sort(key=lambda row: (row[1], row[0]))
    options = (
        {"tick": draw(st.sampled_from(["0.05", "1", "0.0001"]))} if draw(st.booleans()) else {}
    )
    return "symbol,timestamp,open,high,low,close,volume\n" + "".join(r[2] for r in rows), options


@settings(max_examples=80, deadline=None)
@given(case=bar_files())
def test_every_tape_written_is_canonical_and_the_catalog_accepts_it(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, dict[str, str]]
) -> None:
    text, options = case
    path = tmp_path_factory.mktemp("bars") / "bars.csv"
    path.write_text(text, encoding="utf-8")
    imported = scenario_from_file(path, "any", tick=options.get("tick"))
    scenario = imported.scenario
    ticks = {item.symbol: item.tick for item in scenario.instruments}
    scale = max(len(tick.partition(".")[2]) for tick in ticks.values())
    tape = parse_tape(imported.tape.encode("utf-8"), ticks, scale)
    assert not isinstance(tape, list), tape
    assert tape.root == scenario.tape.root
    assert render_tape(tape) == imported.tape  # already canonical: nothing to normalise
    assert (len(tape), tape.times[0], tape.times[-1]) == (
        scenario.tape.bars,
        scenario.tape.start,
        scenario.tape.end,
    )


def test_a_scenario_writes_its_tape_more_than_once(tmp_path: Path) -> None:
    path = tmp_path / "ACME.csv"
    path.write_text("timestamp,open,high,low,close,volume\n" + _minute_rows(3), encoding="utf-8")
    imported: ImportedScenario = scenario_from_file(path, "acme")
    first, second = imported.write(tmp_path / "one"), imported.write(tmp_path / "two")
    assert (first / "tape.csv").read_text(encoding="utf-8") == imported.tape
    assert (second / "tape.csv").read_bytes() == (first / "tape.csv").read_bytes()


# -- faults found part-way -------------------------------------------------------------


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"], ids=["plain", "with-bom"])
def test_a_byte_that_is_not_utf8_deep_in_the_file_is_the_one_problem(
    tmp_path: Path, bom: bytes
) -> None:
    head = b"timestamp,open,high,low,close,volume\n" + _minute_rows(5000).encode()
    before = b"2024-01-09T00:00:00Z,10,11,9,10"
    data = bom + head + before + b"\xff,1\n" + _minute_rows(3).encode()
    path = tmp_path / "ACME.csv"
    path.write_bytes(data)
    with pytest.raises(UnicodeDecodeError) as whole:
        data.decode("utf-8-sig")
    assert whole.value.start == len(head) + len(before)  # counted after any BOM, as before
    assert _problems(path) == [f"ACME.csv: not UTF-8 text (byte {whole.value.start})"]


def test_blank_lines_inside_the_file_are_named_and_those_at_its_end_are_not(
    tmp_path: Path,
) -> None:
    rows = _minute_rows(4).splitlines(keepends=True)
    text = "timestamp,open,high,low,close,volume\n" + rows[0] + "\n" + "".join(rows[1:3])
    text += " , ,\n" + rows[3] + "\n\n"
    path = tmp_path / "ACME.csv"
    path.write_text(text, encoding="utf-8")
    assert _problems(path) == ["ACME.csv: row 3: empty line", "ACME.csv: row 6: empty line"]


def test_a_field_too_large_for_csv_is_named_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "ACME.csv"
    body = _minute_rows(3) + '"' + "x" * 200_000 + '",1,1,1,1,1\n'
    path.write_text("timestamp,open,high,low,close,volume\n" + body, encoding="utf-8")
    assert _problems(path) == ["ACME.csv: line 5: not CSV: field larger than field limit (131072)"]


@pytest.mark.parametrize("reader", ["pyarrow", "polars"])
def test_a_parquet_file_of_many_batches_is_numbered_as_its_csv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    count = 150_000  # more than two of the reader's batches
    start = dt.datetime(2024, 1, 2, tzinfo=dt.UTC)
    lows = [10.0] * count
    lows[140_000] = 12.5  # above its High: row 140,002 counting the header as row 1
    table = pa.table(
        {
            "timestamp": pa.array(
                [start + dt.timedelta(minutes=n) for n in range(count)], pa.timestamp("s", "UTC")
            ),
            "open": [10.5] * count,
            "high": [11.0] * count,
            "low": lows,
            "close": [10.25] * count,
            "volume": list(range(count)),
        }
    )
    path = tmp_path / "ACME.parquet"
    pq.write_table(table, path, row_group_size=50_000)
    if reader == "polars":
        for name in ("pyarrow", "pyarrow.parquet"):
            monkeypatch.setitem(sys.modules, name, None)
    assert _problems(path) == ["ACME.parquet: row 140002: High 11.0 < Low 12.5"]


def test_prices_the_tape_cannot_hold_at_the_tick_are_named_by_row(tmp_path: Path) -> None:
    path = tmp_path / "ACME.csv"
    path.write_text(
        "timestamp,open,high,low,close,volume\n"
        "2024-01-02T14:30:00Z,0.02,0.03,0.02,0.03,1\n"
        "2024-01-02T14:31:00Z,999999999,999999999.5,999999999,999999999,1\n",
        encoding="utf-8",
    )
    assert _problems(path, tick="0.05") == [
        "ACME.csv: row 2: Low 0.02 is 0 on the grid of the tick 0.05",
    ]
    assert _problems(path, tick="0.0000001") == [
        "ACME.csv: row 3: High 999999999.5 has too many digits on the grid of the tick "
        "0.0000001 (a tape's prices have at most 15)",
    ]


# -- bounded memory ----------------------------------------------------------------------

LIST = """
import json, sys
from kestrel_sdk.runtime.catalog import load_catalog
index = load_catalog()
tape = index.get("acme").scenario.tape
print(json.dumps([[str(p) for p in index.problems], tape.bars, tape.root]))
"""


@pytest.mark.slow
def test_a_2_000_000_row_import_peaks_under_512_mb_and_lists_without_reading_its_tape(
    tmp_path: Path,
) -> None:
    source = tmp_path / "ACME.csv"
    write_bar_file(source)
    env = {**os.environ, "KESTREL_HOME": str(tmp_path / "home"), "KESTREL_CATALOG_PATH": ""}
    kestrel = str(Path(sys.executable).with_name("kestrel"))
    target = tmp_path / "catalog" / "acme"
    imported = peak(
        [kestrel, "scenario", "new", "acme", "--from", str(source), "--out", str(target)],
        env,
        tmp_path,
    )
    assert imported.rss <= 512 * MB, f"the import peaked at {imported.rss / MB:.0f} MB"
    tape = target / "tape.csv"
    digest = hashlib.sha256()
    with tape.open("rb") as data:
        while chunk := data.read(1 << 20):
            digest.update(chunk)
    assert f"sha256:{digest.hexdigest()}" == ROOT_2M
    # listing takes the scenario's shape as the import remembered it: the tape is not read
    listed = peak(
        [sys.executable, "-c", LIST], {**env, "KESTREL_CATALOG_PATH": str(target.parent)}, tmp_path
    )
    assert listed.output.strip() == f'[[], {ROWS}, "{ROOT_2M}"]'
    assert listed.rss < tape.stat().st_size, f"listing peaked at {listed.rss / MB:.0f} MB"
