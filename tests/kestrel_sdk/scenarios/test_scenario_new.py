"""`kestrel scenario new`: real layouts become scenarios the catalog accepts; bad files
get one line per problem with its row, and nothing is written."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from kestrel_sdk.cli import cli
from kestrel_sdk.runtime.catalog import load_catalog

YAHOO = """Date,Open,High,Low,Close,Adj Close,Volume
2024-01-02,187.149994,188.440002,183.889999,185.639999,184.938217,82488700
2024-01-03,184.220001,185.880005,183.429993,184.250000,183.553467,58414500
2024-01-04,182.149994,183.089996,180.880005,181.910004,181.222336,71983600
2024-01-05,181.990005,182.759995,180.169998,181.179993,180.495087,62303300
2024-01-08,182.089996,185.600006,181.500000,185.559998,184.864929,59144500
"""


def _kestrel(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _backtesting_csv(tmp_path: Path, name: str) -> Path:
    from backtesting.test import EURUSD, GOOG  # type: ignore[import-untyped]

    path = tmp_path / f"{name}.csv"
    {"GOOG": GOOG, "EURUSD": EURUSD}[name].to_csv(path)
    return path


@pytest.mark.parametrize(
    "case",
    [("GOOG", "1d", "0.01", 2148), ("EURUSD", "1h", "0.00001", 5000)],
    ids=["GOOG", "EURUSD"],
)
def test_backtesting_data_imports_into_a_checked_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: tuple[str, str, str, int]
) -> None:
    from backtesting.test import EURUSD, GOOG

    name, interval, tick, bars = case
    source = _backtesting_csv(tmp_path, name)
    catalog = tmp_path / "catalog"
    result = _kestrel(
        "scenario", "new", name.lower(), "--from", str(source), "--out", str(catalog / name.lower())
    )
    assert result.exit_code == 0, result.output
    assert "backtesting.py layout" in result.stdout
    assert f"export KESTREL_CATALOG_PATH={catalog}" in result.stdout
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(catalog))
    check = _kestrel("catalog", "--check")
    assert check.exit_code == 0, check.output
    loaded = load_catalog().get(name.lower())
    assert loaded is not None
    scenario = loaded.scenario
    assert (scenario.tape.interval, scenario.tape.bars) == (interval, bars)
    assert scenario.instruments[0].symbol == name
    assert scenario.instruments[0].tick == tick
    # the catalog entry printed is the one the catalog now lists
    entry = json.loads(result.stdout.split("catalog entry:\n")[1].splitlines()[0])
    assert entry["root"] == scenario.root
    # every bar is the DataFrame's, to the tick
    frame = {"GOOG": GOOG, "EURUSD": EURUSD}[name]
    tape = loaded.tape
    unit = 10**tape.scale
    columns = tape.columns[name]
    for index in (0, 1, bars // 2, bars - 1):
        row = frame.iloc[index]
        assert tape.times[index] == frame.index[index].strftime("%Y-%m-%dT%H:%M:%SZ")
        assert columns.open[index] == round(row.Open * unit)
        assert columns.high[index] == round(row.High * unit)
        assert columns.low[index] == round(row.Low * unit)
        assert columns.close[index] == round(row.Close * unit)
        assert columns.volume[index] == row.Volume


def test_yahoo_layout_imports_with_float_noise_rounded_to_cents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "AAPL.csv"
    source.write_text(YAHOO, encoding="utf-8")
    catalog = tmp_path / "catalog"
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(catalog))
    catalog.mkdir()
    result = _kestrel(
        "scenario", "new", "aapl-2024", "--from", str(source), "--fees-bps", "5", "--cash", "25000"
    )
    assert result.exit_code == 0, result.output
    assert "Yahoo Finance layout" in result.stdout
    assert "Adj Close is not used" in result.stdout
    assert "187.149994 is 187.15" in result.stdout
    assert "the scenario is in the catalog now" in result.stdout  # default --out: on the path
    assert _kestrel("catalog", "--check").exit_code == 0
    loaded = load_catalog().get("aapl-2024")
    assert loaded is not None
    assert loaded.origin == catalog / "aapl-2024"
    assert (loaded.scenario.account.cash, loaded.scenario.fees.bps) == ("25000.00", "5")
    tape = (catalog / "aapl-2024" / "tape.csv").read_text(encoding="utf-8")
    assert tape.splitlines()[1] == "2024-01-02T00:00:00Z,AAPL,187.15,188.44,183.89,185.64,82488700"


def test_an_id_already_in_the_catalog_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "AAPL.csv"
    source.write_text(YAHOO, encoding="utf-8")
    result = _kestrel(
        "scenario", "new", "acme-trend", "--from", str(source), "--out", str(tmp_path / "x")
    )
    assert result.exit_code == 1
    assert "id 'acme-trend' is already taken by a shipped scenario" in result.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("scenario_id", ["", "AAPL"])
def test_a_bad_id_is_refused_and_nothing_is_written(tmp_path: Path, scenario_id: str) -> None:
    """An empty or upper-case id is the argument's fault, not the file's: one line, as
    ``scenario disguise --as`` says it (it was blamed on the file: ``AAPL.csv: id …``
    then ``1 problem in AAPL.csv``)."""
    source = tmp_path / "AAPL.csv"
    source.write_text(YAHOO, encoding="utf-8")
    result = _kestrel(
        "scenario", "new", scenario_id, "--from", str(source), "--out", str(tmp_path / "x")
    )
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"kestrel: INVALID_ARGUMENT: id {scenario_id!r} must match [a-z0-9][a-z0-9-]{{0,63}}; "
        "nothing written"
    ]
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (("--cash", "9" * 40), f"AAPL.csv: account.cash is too large ({'9' * 40})"),
        (("--lot", "9" * 5000), f"AAPL.csv: instruments[0].lot is too large ({'9' * 5000})"),
        (("--bars-per-year", "0"), "AAPL.csv: bars_per_year must be at least 1, not 0"),
    ],
    ids=["cash-digits", "lot-digits", "zero-bars-per-year"],
)
def test_a_term_out_of_range_is_refused_in_one_line_and_nothing_is_written(
    tmp_path: Path, options: tuple[str, str], line: str
) -> None:
    source = tmp_path / "AAPL.csv"
    source.write_text(YAHOO, encoding="utf-8")
    out = tmp_path / "aapl"
    result = _kestrel("scenario", "new", "aapl", "--from", str(source), "--out", str(out), *options)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == line
    assert not out.exists()


def test_a_hidden_out_directory_is_refused_as_the_catalog_never_lists_it(tmp_path: Path) -> None:
    source = tmp_path / "AAPL.csv"
    source.write_text(YAHOO, encoding="utf-8")
    out = tmp_path / ".aapl"
    result = _kestrel("scenario", "new", "aapl", "--from", str(source), "--out", str(out))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"kestrel: INVALID_ARGUMENT: {out} is a hidden directory, which the catalog does not "
        "read; name it without the leading dot; nothing written"
    ]
    assert not out.exists()


def test_an_existing_directory_is_never_overwritten(tmp_path: Path) -> None:
    source = tmp_path / "AAPL.csv"
    source.write_text(YAHOO, encoding="utf-8")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    result = _kestrel("scenario", "new", "mine", "--from", str(source), "--out", str(out))
    assert result.exit_code == 1
    assert "already exists" in result.stderr
    assert sorted(path.name for path in out.iterdir()) == ["notes.txt"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["AAPL.csv", "mine"]


_KILLED_AT_THE_RENAME = """
import os, signal, sys
from kestrel_sdk.scenarios import scenario_from_file, staged
made = scenario_from_file(sys.argv[1], "acme-mine")
staged.os.replace = lambda *_: os.kill(os.getpid(), signal.SIGKILL)
made.write(sys.argv[2])
"""


def test_an_import_killed_before_its_rename_leaves_no_scenario_and_can_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "AAPL.csv"
    source.write_text(YAHOO, encoding="utf-8")
    catalog = tmp_path / "catalog"
    killed = subprocess.run(  # every file written, then SIGKILL where the rename was
        [sys.executable, "-c", _KILLED_AT_THE_RENAME, str(source), str(catalog / "acme-mine")],
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL
    assert [path.name[:11] for path in catalog.iterdir()] == [".acme-mine."]
    assert load_catalog([catalog]).get("acme-mine") is None
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(catalog))
    again = _kestrel("scenario", "new", "acme-mine", "--from", str(source))
    assert again.exit_code == 0, again.output
    assert load_catalog([catalog]).get("acme-mine") is not None


def test_prices_finer_than_a_tape_holds_import_rounded_to_its_finest_tick(
    tmp_path: Path,
) -> None:
    source = tmp_path / "SHIB.csv"  # a token priced in hundred-thousandths of a dollar
    source.write_text(
        "Date,Open,High,Low,Close,Volume\n"
        "2024-01-02,0.000012345,0.000012500,0.000012100,0.000012400,1000\n"
        "2024-01-03,0.000012400,0.000012600,0.000012300,0.000012500,1200\n",
        encoding="utf-8",
    )
    out = tmp_path / "catalog" / "shib"
    result = _kestrel("scenario", "new", "shib", "--from", str(source), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert (
        "  note: prices rounded to the tick 0.00000001, the finest a tape holds: 0.000012345 "
        "is 0.00001234 (--tick chooses another tick)"
    ) in result.stdout.splitlines()
    rows = (out / "tape.csv").read_text(encoding="utf-8").splitlines()
    assert rows[1] == "2024-01-02T00:00:00Z,SHIB,0.00001234,0.00001250,0.00001210,0.00001240,1000"
    loaded = load_catalog([tmp_path / "catalog"]).get("shib")
    assert loaded is not None
    assert loaded.scenario.instruments[0].tick == "0.00000001"


def test_a_disk_full_mid_write_names_the_target_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    source = tmp_path / "AAPL.csv"
    source.write_text(YAHOO, encoding="utf-8")
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    monkeypatch.setattr(shutil, "copyfileobj", full)  # the tape is copied into place
    result = _kestrel(
        "scenario", "new", "aapl", "--from", str(source), "--out", str(catalog / "aapl")
    )
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"kestrel: INVALID_INPUT: cannot write {catalog / 'aapl'}: No space left on device; "
        "nothing written"
    ]
    assert list(catalog.iterdir()) == []


HEADER = "Date,Open,High,Low,Close,Volume\n"
GOOD = "2024-01-02,10.00,11.00,9.50,10.50,1000\n"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            HEADER + GOOD + "2024-01-04,10,11,9,10,5\n2024-01-03,10,11,9,10,5\n",
            "row 4: time 2024-01-03T00:00:00Z is before the previous row's "
            "2024-01-04T00:00:00Z (rows must be sorted by time)",
            id="unsorted",
        ),
        pytest.param(
            HEADER + GOOD + "2024-01-03,10,11,9,10,5\n2024-01-03,10,11,9,10,5\n",
            "row 4: duplicate time 2024-01-03T00:00:00Z for ACME (also row 3)",
            id="duplicate",
        ),
        pytest.param(
            HEADER + GOOD + "2024-01-03,10,9,11,10,5\n",
            "row 3: High 9 < Low 11",
            id="high-below-low",
        ),
        pytest.param(
            HEADER + GOOD + "2024-01-03,10,11,9,10,-400\n",
            "row 3: Volume -400 is negative",
            id="negative-volume",
        ),
        pytest.param(
            "Date,Open,High,Close,Volume\n2024-01-02,10,11,10,5\n",
            "row 1: missing column Low (found 'Date', 'Open', 'High', 'Close', 'Volume')",
            id="missing-column",
        ),
        pytest.param(
            HEADER + GOOD + "2024-01-03,10,11,9,null,5\n",
            "row 3: Close 'null' is not a number",
            id="non-numeric-price",
        ),
        pytest.param(
            HEADER + GOOD + "2024-01-03,10,11,9,10,1e999999999\n",
            "row 3: Volume 1e999999999 is too large",
            id="volume-exponent-past-decimal-range",
        ),
        pytest.param(
            "timestamp,open,high,low,close,volume\n99999999999999999999999,10,11,9,10,5\n",
            "row 2: time 99999999999999999999999 is out of range",
            id="epoch-time-out-of-range",
        ),
        pytest.param(
            "timestamp,open,high,low,close,volume\n" + "9" * 5000 + ",10,11,9,10,5\n",
            f"row 2: time {'9' * 5000} is out of range",
            id="epoch-time-of-5000-digits",
        ),
        pytest.param(
            HEADER + GOOD + "2024-01-03,10,11,9,10,1e-999999999\n",
            "row 3: Volume 1e-999999999 has more than 8 decimal places",
            id="volume-exponent-below-decimal-range",
        ),
        pytest.param(
            "timestamp,open,high,low,close,volume\n"
            "2024-01-02T14:30:00Z,10,11,9,10,5\n2024-01-02T14:31:00Z,10,11,9,10,5\n"
            "2024-01-02T14:32:00Z,10,11,9,10,5\n2024-01-02T14:32:30Z,10,11,9,10,5\n"
            "2024-01-02T14:34:00Z,10,11,9,10,5\n",
            "row 5: time 2024-01-02T14:32:30Z is 0:00:30 off the 1m grid of the other bars "
            "(mixed intervals)",
            id="mixed-intervals",
        ),
    ],
)
def test_each_malformed_file_gets_one_line_with_its_row_and_nothing_is_written(
    tmp_path: Path, body: str, expected: str
) -> None:
    source = tmp_path / "ACME.csv"
    source.write_text(body, encoding="utf-8")
    before = sorted(tmp_path.iterdir())
    result = _kestrel(
        "scenario", "new", "acme-mine", "--from", str(source), "--out", str(tmp_path / "acme-mine")
    )
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines == [
        f"ACME.csv: {expected}",
        "kestrel: INVALID_ARGUMENT: 1 problem in " + str(source) + "; nothing written",
    ]
    assert result.stdout == ""
    assert sorted(tmp_path.iterdir()) == before


@pytest.mark.parametrize("tick", ["1e999999999", "1e-999999999", "1e15"])
def test_a_tick_out_of_range_is_refused_in_one_line(tmp_path: Path, tick: str) -> None:
    source = tmp_path / "ACME.csv"
    source.write_text(HEADER + GOOD, encoding="utf-8")
    result = _kestrel(
        "scenario", "new", "acme-mine", "--from", str(source), "--tick", tick,
        "--out", str(tmp_path / "acme-mine"),
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        f"ACME.csv: tick '{tick}' must be a positive decimal no finer than 1e-8 and under 1e15"
    )


def test_every_problem_of_a_file_is_listed_in_row_order(tmp_path: Path) -> None:
    source = tmp_path / "ACME.csv"
    source.write_text(
        HEADER + GOOD + "2024-01-03,10,9,11,10,5\n2024-01-04,x,11,9,10,-1\n", encoding="utf-8"
    )
    result = _kestrel("scenario", "new", "acme-mine", "--from", str(source))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[:3] == [
        "ACME.csv: row 3: High 9 < Low 11",
        "ACME.csv: row 4: Open 'x' is not a number",
        "ACME.csv: row 4: Volume -1 is negative",
    ]
    assert "3 problems" in result.stderr


def test_margin_terms_without_a_margin_account_are_refused_not_dropped(tmp_path: Path) -> None:
    """``--leverage 3`` without ``--account margin`` used to write a cash account,
    silently; it is refused naming the options, and nothing is written. With
    ``--account margin`` the terms not given take their documented defaults."""
    source = tmp_path / "AAPL.csv"
    source.write_text(YAHOO, encoding="utf-8")
    refused = _kestrel(
        "scenario", "new", "aapl-cash", "--from", str(source), "--leverage", "3",
        "--cash-rate", "0.02", "--out", str(tmp_path / "cash"),
    )  # fmt: skip
    assert refused.exit_code == 1
    assert (
        "--leverage, --cash-rate: a margin account's terms; add --account margin" in refused.stderr
    )
    assert not (tmp_path / "cash").exists()
    made = _kestrel(
        "scenario", "new", "aapl-margin", "--from", str(source), "--account", "margin",
        "--leverage", "3", "--out", str(tmp_path / "catalog" / "margin"),
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    loaded = load_catalog([tmp_path / "catalog"]).get("aapl-margin")
    assert loaded is not None
    account = loaded.scenario.account
    terms = (account.leverage, account.maintenance_margin, account.borrow_rate, account.cash_rate)
    assert (account.kind, *terms) == ("margin", "3", "0.25", "0", "0")
