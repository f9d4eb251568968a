"""Tapes are read as a stream: a large tape copied into a catalog is checked in bounded
memory by whatever meets it first, and its faults are named by line as they always were."""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError, kestrel_home, root_of_bytes
from kestrel_sdk.runtime.catalog import check_catalog, load_catalog
from kestrel_sdk.runtime.catalog import tapes as tape_module
from kestrel_sdk.runtime.catalog.shapes import remembered_shape
from kestrel_sdk.runtime.catalog.tapes import TapeShape, check_tape, parse_tape

from tests.kestrel_sdk.runtime.catalog.test_tapes import MALFORMED
from tests.large_tapes import MB, ROOT_2M, ROWS, SCENARIO_TOML, peak, write_canonical_tape

MakeScenario = Callable[..., Path]
HEAD = "time,symbol,open,high,low,close,volume\n"
BARS = 60_000  # 3.3 MB: many blocks of the reader


def _minute(index: int) -> str:
    day, minute = divmod(index, 1440)
    return f"2024-{1 + day // 28:02d}-{1 + day % 28:02d}T{minute // 60:02d}:{minute % 60:02d}:00Z"


def _row(index: int, volume: str | None = None) -> str:
    cents = 10_000 + index % 500
    price = f"{cents // 100}.{cents % 100:02d}"
    return f"{_minute(index)},FOO,{price},{price},{price},{price},{volume or 1000 + index % 7}\n"


def _long_tape(lines: dict[int, str] | None = None) -> str:
    """``BARS`` canonical bars of FOO (bar ``i`` on line ``i + 2``), some lines replaced."""
    rows = [HEAD] + [_row(index) for index in range(BARS)]
    for line, text in (lines or {}).items():
        rows[line - 1] = text
    return "".join(rows)


# -- faults part-way through a large tape, named as before ---------------------------------


def test_a_copied_in_tape_with_a_fault_part_way_is_refused_naming_its_line(
    tmp_path: Path, make_scenario: MakeScenario
) -> None:
    high_below_open = f"{_minute(45_000)},FOO,100.00,99.00,99.00,99.00,1000\n"
    bad = make_scenario(tmp_path, "copied", tape=_long_tape({45_002: high_below_open}))
    index = load_catalog([tmp_path])
    assert index.get("copied") is None
    assert [str(problem) for problem in index.problems] == [
        f"{bad / 'tape.csv'}:45002: prices are inconsistent: need low <= open, close <= high"
    ]
    assert (
        remembered_shape(kestrel_home(), bad / "tape.csv", (bad / "scenario.toml").read_bytes())
        is None
    )


def test_a_check_names_every_fault_of_a_large_tape_rows_first_then_their_order(
    tmp_path: Path, make_scenario: MakeScenario
) -> None:
    tape = _long_tape(
        {
            20_002: _row(20_001),  # the next bar's time twice: a second bar at line 20,003
            41_002: _row(41_000).replace("FOO", "BAR"),
            58_002: "\n",
        }
    )
    bad = make_scenario(tmp_path, "copied", tape=tape)
    assert [(p.path, p.line, p.reason) for p in check_catalog([tmp_path])] == [
        (bad / "tape.csv", 41_002, "unknown symbol 'BAR' (the instruments are FOO)"),
        (bad / "tape.csv", 58_002, "empty line"),
        (bad / "tape.csv", 20_003, f"a second bar for FOO at {_minute(20_001)}"),
    ]


def test_a_byte_that_is_not_utf8_deep_in_a_tape_is_its_one_problem(
    tmp_path: Path, make_scenario: MakeScenario
) -> None:
    data = _long_tape({10_002: "not a row\n"}).encode()
    at = data.index(_minute(50_000).encode())
    bad = make_scenario(tmp_path, "copied", tape_bytes=data[:at] + b"\xff" + data[at:])
    assert [(p.path, p.line, p.reason) for p in check_catalog([tmp_path])] == [
        (bad / "tape.csv", 50_002, "not UTF-8 text")
    ]


def test_a_gzip_tape_cut_short_cannot_be_read_whatever_comes_before_the_cut(
    tmp_path: Path, make_scenario: MakeScenario, good_toml: str
) -> None:
    data = gzip.compress(_long_tape({3: "not a row\n"}).encode())
    bad = make_scenario(
        tmp_path,
        "cut",
        toml=good_toml.replace('"tape.csv"', '"tape.csv.gz"'),
        tape_bytes=data[: len(data) // 2],
        tape_name="tape.csv.gz",
    )
    (problem,) = check_catalog([tmp_path])
    assert (problem.path, problem.line) == (bad / "tape.csv.gz", None)
    assert problem.reason.startswith("cannot read the tape: Compressed file ended before")


def test_a_volume_with_more_places_late_in_a_tape_scales_every_volume_before_it() -> None:
    data = _long_tape({BARS + 1: _row(BARS - 1, volume="0.5")}).encode()
    tape = parse_tape(data, {"FOO": "0.01"}, 2)
    assert not isinstance(tape, list)
    assert (tape.volume_scale, tape.root, len(tape)) == (1, root_of_bytes(data), BARS)
    volumes = tape.columns["FOO"].volume
    assert volumes[:3].tolist() == [10_000, 10_010, 10_020]  # 1000, 1001, 1002 in tenths
    assert tape.volume_text(volumes[-1]) == "0.5"
    too_large = _long_tape(
        {2: _row(0, volume="100000000000000"), BARS + 1: _row(BARS - 1, volume="0.12345678")}
    )
    assert check_tape(too_large.encode(), {"FOO": "0.01"}, 2) == [
        tape_module.TapeProblem(
            2,
            "volume 100000000000000 is too large for a tape whose volumes have 8 decimal "
            "places (at most 18 digits with them)",
        )
    ]


@pytest.mark.parametrize("block", [1, 2, 3, 7, 40, 64])
def test_a_tape_read_in_blocks_of_any_size_gives_the_same_tape_or_problems(
    monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    ticks = {"FOO": "0.01", "BAR": "0.05"}
    pair = (
        HEAD
        + "2024-01-02T00:00:00Z,BAR,5.00,5.10,4.95,5.05,10\n"
        + "2024-01-02T00:00:00Z,FOO,10.00,10.50,9.90,10.20,1000.25\n"
        + "2024-01-03T00:00:00Z,BAR,5.05,5.05,5.00,5.00,20\n"
        + "2024-01-03T00:00:00Z,FOO,10.20,10.40,10.00,10.10,800\n"
    )
    loose = "\ufeff" + pair.replace("5.00,", "5.0,").replace("\n", "\r\n").replace(
        ",20\r", ",020\r"
    )
    swapped = pair.splitlines(keepends=True)
    swapped[1], swapped[2] = swapped[2], swapped[1]
    tapes = [pair, loose, "".join(swapped), pair.rstrip("\n"), pair + "\n"]
    tapes += [text for _, text, _, _ in MALFORMED]
    whole = [
        (parse_tape(t.encode(), ticks, 2, limit=9), check_tape(t.encode(), ticks, 2)) for t in tapes
    ]
    monkeypatch.setattr(tape_module, "_BLOCK", block)
    for text, (parsed, checked) in zip(tapes, whole, strict=True):
        assert parse_tape(text.encode(), ticks, 2, limit=9) == parsed
        assert check_tape(text.encode(), ticks, 2) == checked
    assert not isinstance(whole[1][0], list)
    assert whole[1][0] == whole[2][0] == whole[0][0]  # one tape, however it is spelled


# -- another home, a later change ---------------------------------------------------------


def test_a_tape_listed_under_a_fresh_home_is_checked_again_and_remembered_there(
    tmp_path: Path, make_scenario: MakeScenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _long_tape()
    directory = make_scenario(tmp_path / "catalog", "copied", tape=text)
    tape, toml = directory / "tape.csv", (directory / "scenario.toml").read_bytes()
    shape = TapeShape(BARS, _minute(0), _minute(BARS - 1), root_of_bytes(text.encode()))
    found = []
    for home in ("first", "second"):
        monkeypatch.setenv("KESTREL_HOME", str(tmp_path / home))
        assert remembered_shape(kestrel_home(), tape, toml) is None
        index = load_catalog([tmp_path / "catalog"])
        assert index.problems == []
        found.append(index.get("copied"))
        assert remembered_shape(kestrel_home(), tape, toml) == shape
    for loaded in found:
        assert loaded is not None
        listed = loaded.scenario.tape
        assert TapeShape(listed.bars, listed.start, listed.end, listed.root) == shape
    loaded = found[-1]
    assert loaded is not None
    assert loaded.tape.root == shape.root
    assert loaded.tape.times[-1] == shape.end
    assert loaded.tape.columns["FOO"].close[-1] == 10_000 + (BARS - 1) % 500


def test_a_tape_changed_after_its_listing_is_refused_at_first_use_not_served(
    tmp_path: Path, make_scenario: MakeScenario, good_tape: str
) -> None:
    listed = good_tape.replace(",800", ",8061")  # bars no other test has (none in memory)
    directory = make_scenario(tmp_path, "foo-daily", tape=listed)
    loaded = load_catalog([tmp_path]).get("foo-daily")
    assert loaded is not None
    (directory / "tape.csv").write_text(listed.replace("10.20,1000", "10.30,1000"), "utf-8")
    with pytest.raises(KestrelError, match="the tape of scenario foo-daily changed"):
        loaded.tape  # noqa: B018 - its first use


# -- bounded memory ----------------------------------------------------------------------

LIST = """
import json, sys
from kestrel_sdk.runtime.catalog import load_catalog
index = load_catalog()
loaded = index.get("big")
shape = loaded.scenario.tape
found = [[str(p) for p in index.problems], shape.bars, shape.root]
if sys.argv[1:] == ["trade"]:
    tape = loaded.tape
    found += [len(tape), tape.root, tape.columns["ACME"].close[-1]]
print(json.dumps(found))
"""


@pytest.mark.slow
def test_a_2_000_000_bar_tape_copied_into_a_catalog_is_checked_and_loaded_under_512_mb(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "catalog" / "big"
    directory.mkdir(parents=True)
    (directory / "scenario.toml").write_text(SCENARIO_TOML, "utf-8")
    tape = directory / "tape.csv"
    write_canonical_tape(tape)  # as `kestrel scenario new` writes it, copied in
    size = tape.stat().st_size
    env = {**os.environ, "KESTREL_CATALOG_PATH": str(directory.parent)}
    kestrel = str(Path(sys.executable).with_name("kestrel"))

    def home(name: str) -> dict[str, str]:
        return {**env, "KESTREL_HOME": str(tmp_path / name)}  # nothing remembered there

    listed = peak([sys.executable, "-c", LIST], home("list"), tmp_path)
    assert listed.output.strip() == f'[[], {ROWS}, "{ROOT_2M}"]'
    assert listed.rss < size, f"listing peaked at {listed.rss / MB:.0f} MB"
    checked = peak([kestrel, "catalog", "--check"], home("check"), tmp_path)
    assert checked.output.strip() == "catalog ok"
    assert checked.rss <= 512 * MB, f"checking peaked at {checked.rss / MB:.0f} MB"
    traded = peak([sys.executable, "-c", LIST, "trade"], home("trade"), tmp_path)
    last = traded.output.strip()
    assert last.startswith(f'[[], {ROWS}, "{ROOT_2M}", {ROWS}, "{ROOT_2M}", ')
    assert traded.rss <= 512 * MB, f"loading to trade peaked at {traded.rss / MB:.0f} MB"
