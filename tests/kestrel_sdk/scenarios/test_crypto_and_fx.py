"""backtesting.py's own BTCUSD (fractional volumes: monthly bitcoin, eight decimals) and
EURUSD (hourly forex) import with the real ``kestrel`` command and run: a session trades,
closes, is graded, and its proof verifies; every volume is the file's, exactly.

The CSV files are read from the installed ``backtesting`` package (a locked dev
dependency), exactly as it ships them: no network at test time.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import anyio
import pytest
from kestrel_protocol import root_of_bytes
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.scenarios import scenario_from_frame

BIN = Path(sys.executable).parent


def _shipped(name: str) -> Path:
    import backtesting.test  # type: ignore[import-untyped]

    path = Path(backtesting.test.__file__).with_name(f"{name}.csv")
    assert path.is_file(), f"backtesting.py no longer ships {path.name}"
    return path


def _kestrel(*args: str) -> subprocess.CompletedProcess[str]:
    kestrel = shutil.which("kestrel", path=str(BIN))
    assert kestrel is not None, f"the kestrel console script is not installed in {BIN}"
    return subprocess.run(
        [kestrel, *args], capture_output=True, text=True, timeout=120, check=False
    )


def _exact(text: str) -> str:
    """A volume's value as its plain decimal text (trailing zeros dropped), for comparing."""
    return f"{Decimal(text).normalize():f}"


def _import(name: str, catalog: Path, noise: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """Import backtesting.py's ``name`` into ``catalog``: the (time, volume) of each row
    of the source file, checked against the tape written (``noise``: the file's volumes
    that are binary doubles' noise, and the decimals the import notes it kept)."""
    source = _shipped(name)
    scenario_id = name.lower()
    done = _kestrel(
        "scenario", "new", scenario_id, "--from", str(source), "--out", str(catalog / scenario_id)
    )
    assert done.returncode == 0, done.stderr
    assert "backtesting.py layout" in done.stdout
    noise = noise or {}
    if noise:
        noted = next(line for line in done.stdout.splitlines() if "volumes rounded" in line)
        assert noted.startswith(f"  note: {len(noise)} volumes rounded to at most 8 decimal places")
    check = _kestrel("--catalog-path", str(catalog), "catalog", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    with source.open(newline="", encoding="utf-8") as handle:
        rows = [(row[0], row[5]) for row in list(csv.reader(handle))[1:]]
    tape = (catalog / scenario_id / "tape.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert len(tape) == len(rows)
    # the tape keeps every volume exactly: the file's decimal, in canonical text
    expected = [noise.get(volume) or _exact(volume) for _, volume in rows]
    assert [line.rsplit(",", 1)[1] for line in tape] == expected
    return rows


async def _trade(
    scenario_id: str, catalog: Path, source: str, tmp_path: Path
) -> tuple[list[int | str], list[int | str], list[tuple[int, int]]]:
    """Open a session, trade, read frames and history, close, grade, write the proof;
    the volumes its frames showed, its history's, and its fills (bar, qty)."""
    async with create_sdk(local_transport(catalog_paths=[catalog])) as sdk:
        opened = await sdk.open_session(scenario_id)
        session = opened.session
        assert session is not None
        symbol = scenario_id.upper()
        shown = [(await session.frame()).frame.bars[symbol].volume]
        fills: list[tuple[int, int]] = []
        for statements in source.split("|"):
            frame = (await session.submit(statements)).delivery.frame
            shown.append(frame.bars[symbol].volume)
            fills += [(e.bar, int(e.qty or 0)) for e in frame.events if e.type == "fill"]
        history = [bar.volume for bar in (await session.history(5)).bars]
        await session.close()
        grade = await sdk.grade_until_done(session.id)
        assert grade.metrics.fills == len(fills)
        assert (await sdk.verify(grade)).ok
        proof = await sdk.proof(session.id, embed_tape=True)
        proof.write(tmp_path / f"{scenario_id}.proof.json")
    return shown, history, fills


def _verified(proof: Path) -> None:
    """The proof verifies from the file alone, in an empty home without the catalog."""
    elsewhere = proof.parent / "elsewhere"
    done = _kestrel("--home", str(elsewhere), "verify", "--json", str(proof))
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True


def test_btcusd_imports_with_its_fractional_volumes_exact_and_runs(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    # two monthly volumes are sums of doubles, 17 digits: the float noise is rounded away
    noise = {"397787.41249925003": "397787.41249925", "288372.04635443003": "288372.04635443"}
    rows = _import("BTCUSD", catalog, noise)
    assert rows[0] == ("2012-01-31", "2012.25343589")
    # backtesting.py's DataFrame (float64 volumes) makes the very same tape
    from backtesting.test import BTCUSD

    tape = (catalog / "btcusd" / "tape.csv").read_bytes()
    framed = scenario_from_frame(BTCUSD, "btcusd", symbol="BTCUSD")
    assert framed.scenario.tape.root == root_of_bytes(tape)
    # buy 100 at bar 1's open, hold two months, sell; the frames follow the clock
    shown, history, fills = anyio.run(
        _trade,
        "btcusd",
        catalog,
        "buy 100 BTCUSD\nadvance|advance 2|sell 100 BTCUSD\nadvance",
        tmp_path,
    )
    assert fills == [(1, 100), (4, 100)]
    # a fractional tape shows every volume as its exact decimal text, never a float
    assert shown == [_exact(rows[bar][1]) for bar in (0, 1, 3, 4)]
    assert shown[0] == "2012.25343589"
    assert history == [_exact(volume) for _, volume in rows[:5]]
    assert all(isinstance(volume, str) for volume in (*shown, *history))
    _verified(tmp_path / "btcusd.proof.json")


def test_eurusd_imports_and_runs_with_whole_volumes_as_integers(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    rows = _import("EURUSD", catalog)
    shown, history, fills = anyio.run(
        _trade,
        "eurusd",
        catalog,
        "buy 1000 EURUSD\nadvance|advance 2|sell 1000 EURUSD\nadvance",
        tmp_path,
    )
    assert fills == [(1, 1000), (4, 1000)]
    # whole volumes stay integers, as on every tape before fractional volumes
    assert shown == [int(rows[bar][1]) for bar in (0, 1, 3, 4)]
    assert history == [int(volume) for _, volume in rows[:5]]
    _verified(tmp_path / "eurusd.proof.json")


@pytest.mark.parametrize(
    ("volume", "reason"),
    [
        ("0.123456789", "Volume 0.123456789 has more than 8 decimal places"),
        ("-0.5", "Volume -0.5 is negative"),
        ("nan", "Volume 'nan' is not a number"),
        ("inf", "Volume 'inf' is infinite"),
        ("1e16", "Volume 1e16 is too large"),
    ],
    ids=["places", "negative", "nan", "infinite", "too-large"],
)
def test_a_bad_fractional_volume_is_refused_naming_its_row(
    tmp_path: Path, volume: str, reason: str
) -> None:
    source = tmp_path / "BTC.csv"
    source.write_text(
        "Date,Open,High,Low,Close,Volume\n"
        "2024-01-01,42000,43000,41000,42500,12.5\n"
        f"2024-01-02,42500,43500,42000,43000,{volume}\n",
        encoding="utf-8",
    )
    done = _kestrel("scenario", "new", "btc", "--from", str(source), "--out", str(tmp_path / "btc"))
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == f"BTC.csv: row 3: {reason}"
    assert not (tmp_path / "btc").exists()


def test_volumes_that_a_tape_cannot_hold_with_its_decimals_are_refused(tmp_path: Path) -> None:
    # 12345678901 with the 8 places of another row is 19 digits: beyond the tape's integers
    source = tmp_path / "BTC.csv"
    source.write_text(
        "Date,Open,High,Low,Close,Volume\n"
        "2024-01-01,42000,43000,41000,42500,12345678901\n"
        "2024-01-02,42500,43500,42000,43000,0.00000001\n",
        encoding="utf-8",
    )
    done = _kestrel("scenario", "new", "btc", "--from", str(source), "--out", str(tmp_path / "btc"))
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        "BTC.csv: row 2: Volume 12345678901 is too large for a tape whose volumes have "
        "8 decimal places (at most 18 digits with them)"
    )
