"""Tape CSV rules: each malformed kind is reported by path, line and reason, and skipped."""

from __future__ import annotations

import gzip
import logging
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kestrel_protocol import root_of_bytes
from kestrel_sdk.runtime.catalog import check_catalog, load_catalog, tape_csv
from kestrel_sdk.runtime.catalog.tapes import parse_tape, render_tape

MakeScenario = Callable[..., Path]
SHIPPED = {"acme-chop", "acme-crash", "acme-trend", "basket-20", "minute-200k", "pairs-kx"}
HEAD = "time,symbol,open,high,low,close,volume\n"
ROW1 = "2024-01-02T00:00:00Z,FOO,10.00,10.50,9.90,10.20,1000\n"
ROW2 = "2024-01-03T00:00:00Z,FOO,10.20,10.40,10.00,10.10,800\n"

# (kind, tape text, expected line, a phrase the reason must contain)
MALFORMED: list[tuple[str, str, int | None, str]] = [
    ("header", "time,sym,open,high,low,close,volume\n" + ROW1, 1, "header must be exactly"),
    ("no-bars", HEAD, None, "no bars"),
    (
        "field-count",
        HEAD + ROW1 + "2024-01-03T00:00:00Z,FOO,10.20,10.40,10.00,800\n",
        3,
        "7 fields",
    ),
    ("time-format", HEAD + ROW1.replace("2024-01-02T00:00:00Z", "2024-01-02 00:00"), 2, "ISO-8601"),
    ("time-zone", HEAD + ROW1.replace("00:00:00Z", "00:00:00+01:00"), 2, "ISO-8601"),
    ("impossible-date", HEAD + ROW1.replace("2024-01-02", "2024-02-30"), 2, "ISO-8601"),
    ("impossible-hour", HEAD + ROW1.replace("T00:", "T24:"), 2, "ISO-8601"),
    ("unsorted", HEAD + ROW2 + ROW1, 3, "not after the previous time"),
    ("repeated-time", HEAD + ROW1 + ROW1, 3, "a second bar for FOO"),
    ("unknown-symbol", HEAD + ROW1 + ROW2.replace("FOO", "BAR"), 3, "unknown symbol 'BAR'"),
    ("lower-case-symbol", HEAD + ROW1.replace("FOO", "foo"), 2, "unknown symbol 'foo'"),
    ("off-grid", HEAD + ROW1 + ROW2.replace("10.10", "10.105"), 3, "close 10.105 of FOO is not on"),
    ("not-a-price", HEAD + ROW1.replace("10.50", "ten"), 2, "high 'ten' is not a decimal price"),
    ("signed-price", HEAD + ROW1.replace("10.00", "-10.00"), 2, "open '-10.00' is not a decimal"),
    ("zero-price", HEAD + ROW1.replace("9.90", "0.00"), 2, "low 0.00 must be greater than 0"),
    ("high-below-close", HEAD + ROW1.replace("10.50", "10.10"), 2, "low <= open, close <= high"),
    ("low-above-open", HEAD + ROW1.replace("9.90", "10.05"), 2, "low <= open, close <= high"),
    (
        "negative-volume",
        HEAD + ROW1.replace(",1000", ",-5"),
        2,
        "volume '-5' must be a non-negative",
    ),
    (
        "volume-places",
        HEAD + ROW1.replace(",1000", ",10.123456789"),
        2,
        "volume 10.123456789 has more than 8 decimal places",
    ),
    ("volume-exponent", HEAD + ROW1.replace(",1000", ",1e3"), 2, "volume '1e3' must be a non-neg"),
    ("volume-nan", HEAD + ROW1.replace(",1000", ",NaN"), 2, "volume 'NaN' must be a non-negative"),
    ("volume-digits", HEAD + ROW1.replace(",1000", ",1" + "0" * 15), 2, "is too large"),
    (
        "volume-too-large-for-places",
        HEAD + ROW1.replace(",1000", ",12345678901") + ROW2.replace(",800", ",0.12345678"),
        2,
        "volume 12345678901 is too large for a tape whose volumes have 8 decimal places",
    ),
    ("price-digits", HEAD + ROW1.replace("10.50", "9" * 5000), 2, "9999 is too large"),
    ("zero-padded-price", HEAD + ROW1.replace("9.90", "0" * 5000 + "10.05"), 2, "low <= open"),
    ("empty-line", HEAD + ROW1 + "\n" + ROW2, 3, "empty line"),
    ("quoted-field", HEAD + ROW1.replace("FOO", '"FOO"'), 2, "unknown symbol"),
]


@pytest.mark.parametrize("case", MALFORMED, ids=[case[0] for case in MALFORMED])
def test_malformed_tape_is_reported_and_skipped(
    tmp_path: Path,
    make_scenario: MakeScenario,
    caplog: pytest.LogCaptureFixture,
    case: tuple[str, str, int | None, str],
) -> None:
    _, tape, line, phrase = case
    make_scenario(tmp_path, "good")
    bad = make_scenario(tmp_path, "bad", tape=tape)
    with caplog.at_level(logging.WARNING, logger="kestrel_sdk.runtime.catalog"):
        index = load_catalog([tmp_path])
    assert len(index.problems) == 1
    problem = index.problems[0]
    assert problem.path == bad / "tape.csv"
    assert problem.line == line
    assert phrase in problem.reason
    assert index.get("bad") is None
    assert index.get("good") is not None
    assert set(index.ids()) >= SHIPPED
    assert "bad" not in [entry.id for entry in index.catalog.scenarios]
    assert str(bad / "tape.csv") in caplog.text
    checked = check_catalog([tmp_path])
    assert (checked[0].path, checked[0].line) == (bad / "tape.csv", line)


def test_check_reports_every_problem_of_a_tape(tmp_path: Path, make_scenario: MakeScenario) -> None:
    tape = (
        HEAD
        + ROW1.replace("10.50", "10.10")
        + ROW2.replace("FOO", "BAR")
        + "2024-01-04T00:00:00Z,FOO,10.20,10.40,10.00,10.105,800\n"
    )
    bad = make_scenario(tmp_path, "bad", tape=tape)
    problems = check_catalog([tmp_path])
    assert [(p.path, p.line) for p in problems] == [(bad / "tape.csv", n) for n in (2, 3, 4)]
    assert len(load_catalog([tmp_path]).problems) == 1


def test_missing_tape_file_is_reported_on_the_tape_line(
    tmp_path: Path, make_scenario: MakeScenario, good_toml: str
) -> None:
    bad = make_scenario(tmp_path, "bad", toml=good_toml.replace('"tape.csv"', '"other.csv"'))
    (problem,) = load_catalog([tmp_path]).problems
    assert (problem.path, problem.line) == (bad / "scenario.toml", 4)
    assert "other.csv does not exist" in problem.reason


def test_not_utf8_is_reported_with_its_line(tmp_path: Path, make_scenario: MakeScenario) -> None:
    bad = make_scenario(tmp_path, "bad", tape_bytes=(HEAD + ROW1).encode() + b"\xff\xfe,,\n")
    (problem,) = load_catalog([tmp_path]).problems
    assert (problem.path, problem.line, problem.reason) == (bad / "tape.csv", 3, "not UTF-8 text")


def test_broken_gzip_is_reported(
    tmp_path: Path, make_scenario: MakeScenario, good_toml: str
) -> None:
    toml = good_toml.replace('"tape.csv"', '"tape.csv.gz"')
    bad = make_scenario(tmp_path, "bad", toml=toml, tape_bytes=b"not gzip", tape_name="tape.csv.gz")
    (problem,) = load_catalog([tmp_path]).problems
    assert problem.path == bad / "tape.csv.gz"
    assert "cannot read the tape" in problem.reason


def test_a_gzip_bomb_of_one_endless_line_is_refused_without_holding_it(
    tmp_path: Path, make_scenario: MakeScenario, good_toml: str
) -> None:
    toml = good_toml.replace('"tape.csv"', '"tape.csv.gz"')
    bomb = gzip.compress(HEAD.encode() + b"9" * (96 << 20), compresslevel=9)  # ~100 kB
    bad = make_scenario(tmp_path, "bomb", toml=toml, tape_bytes=bomb, tape_name="tape.csv.gz")
    load_catalog([])  # the shipped scenarios, read once per process, before measuring
    tracemalloc.start()
    try:
        (problem,) = load_catalog([tmp_path]).problems
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (problem.path, problem.line) == (bad / "tape.csv.gz", None)
    assert problem.reason == "a line is longer than 1048576 bytes: not a tape"
    assert peak < 16 << 20  # a line of 96 MiB was held (twice) before


def test_gzip_tape_loads(tmp_path: Path, make_scenario: MakeScenario, good_toml: str) -> None:
    toml = good_toml.replace('"tape.csv"', '"tape.csv.gz"')
    data = gzip.compress((HEAD + ROW1 + ROW2).encode())
    make_scenario(tmp_path, "zipped", toml=toml, tape_bytes=data, tape_name="tape.csv.gz")
    loaded = load_catalog([tmp_path]).get("zipped")
    assert loaded is not None
    assert loaded.scenario.tape.root == root_of_bytes((HEAD + ROW1 + ROW2).encode())


def test_other_spellings_of_the_same_bars_share_the_canonical_root(
    tmp_path: Path, make_scenario: MakeScenario, good_toml: str
) -> None:
    canonical = HEAD + ROW1 + ROW2
    loose = "\ufeff" + (
        HEAD
        + "2024-01-02T00:00:00Z,FOO,10,10.5,9.9,10.20,01000\n"
        + "2024-01-03T00:00:00Z,FOO,10.2,10.400,10.00,10.1,800"
    ).replace("\n", "\r\n")
    make_scenario(tmp_path, "loose", tape=loose)
    loaded = load_catalog([tmp_path]).get("loose")
    assert loaded is not None
    assert loaded.scenario.tape.root == root_of_bytes(canonical.encode())
    assert tape_csv(loaded) == canonical


def test_symbols_at_one_time_may_come_in_any_order(
    tmp_path: Path, make_scenario: MakeScenario, good_toml: str
) -> None:
    toml = good_toml + '\n[[instruments]]\nsymbol = "BAR"\ntick = "0.05"\nlot = 10\n'
    tape = (
        HEAD
        + ROW1
        + "2024-01-02T00:00:00Z,BAR,5.00,5.10,4.95,5.05,10\n"
        + "2024-01-03T00:00:00Z,BAR,5.05,5.05,5.00,5.00,20\n"
        + ROW2
    )
    make_scenario(tmp_path, "pair", tape=tape, toml=toml)
    index = load_catalog([tmp_path])
    assert index.problems == []
    loaded = index.get("pair")
    assert loaded is not None
    assert loaded.tape.symbols == ("BAR", "FOO")
    assert [item.symbol for item in loaded.scenario.instruments] == ["FOO", "BAR"]
    assert loaded.tape.columns["BAR"].close.tolist() == [505, 500]
    assert loaded.tape.columns["FOO"].open.tolist() == [1000, 1020]
    assert tape_csv(loaded).splitlines()[1].split(",")[1] == "BAR"


def test_missing_bar_for_one_symbol_is_reported(
    tmp_path: Path, make_scenario: MakeScenario, good_toml: str
) -> None:
    toml = good_toml + '\n[[instruments]]\nsymbol = "BAR"\ntick = "0.01"\nlot = 1\n'
    tape = HEAD + ROW1 + "2024-01-02T00:00:00Z,BAR,5.00,5.10,4.95,5.05,10\n" + ROW2
    bad = make_scenario(tmp_path, "pair", tape=tape, toml=toml)
    (problem,) = load_catalog([tmp_path]).problems
    assert (problem.path, problem.line) == (bad / "tape.csv", 4)
    assert "no bar for BAR at 2024-01-03T00:00:00Z" in problem.reason


def test_price_off_a_coarse_tick_grid(
    tmp_path: Path, make_scenario: MakeScenario, good_toml: str
) -> None:
    toml = good_toml.replace('tick = "0.01"', 'tick = "0.05"')
    bad = make_scenario(tmp_path, "coarse", tape=HEAD + ROW1.replace("10.20", "10.22"), toml=toml)
    (problem,) = load_catalog([tmp_path]).problems
    assert (problem.path, problem.line) == (bad / "tape.csv", 2)
    assert "close 10.22 of FOO is not on its tick grid (0.05)" in problem.reason


def test_days_are_utc_date_ordinals(tmp_path: Path, make_scenario: MakeScenario) -> None:
    tape = (
        HEAD
        + "2024-01-02T23:59:00Z,FOO,10.00,10.50,9.90,10.20,1000\n"
        + "2024-01-03T00:00:00Z,FOO,10.20,10.40,10.00,10.10,800\n"
        + "2024-01-03T00:01:00Z,FOO,10.20,10.40,10.00,10.10,0\n"
    )
    make_scenario(tmp_path, "minutes", tape=tape)
    loaded = load_catalog([tmp_path]).get("minutes")
    assert loaded is not None
    first = loaded.tape.days[0]
    assert loaded.tape.days.tolist() == [first, first + 1, first + 1]
    assert loaded.tape.columns["FOO"].volume.tolist() == [1000, 800, 0]


def test_the_200k_minute_tape_parses_whole() -> None:
    root = Path(__file__).resolve().parents[4] / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"
    data = gzip.decompress((root / "minute-200k" / "tape.csv.gz").read_bytes())
    tape = parse_tape(data, {"ACME": "0.01"}, 2)
    assert not isinstance(tape, list)
    assert len(tape) == 200_000


Case = tuple[dict[str, str], int, int, list[str], dict[str, list[tuple[int, ...]]]]


@st.composite
def bar_sets(draw: st.DrawFn) -> Case:
    """Valid bars: ticks per symbol, the scale, the volumes' decimal places, times, and
    (o, h, l, c, v) per symbol (v in units of 10**-places)."""
    symbols = draw(
        st.lists(st.sampled_from(["A", "B.C", "ZZ9", "KAPPA"]), min_size=1, max_size=3, unique=True)
    )
    ticks = {
        symbol: draw(st.sampled_from(["0.01", "0.05", "0.5", "1", "0.001"])) for symbol in symbols
    }
    scale = max(len(t.split(".")[1].rstrip("0")) if "." in t else 0 for t in ticks.values())
    places = draw(st.integers(min_value=0, max_value=8))
    count = draw(st.integers(min_value=1, max_value=8))
    seconds = sorted(draw(st.sets(st.integers(0, 10**8), min_size=count, max_size=count)))
    times = [
        (datetime(2020, 1, 1, tzinfo=UTC) + timedelta(seconds=s)).strftime("%Y-%m-%dT%H:%M:%SZ")
        for s in seconds
    ]
    bars: dict[str, list[tuple[int, ...]]] = {}
    for symbol in symbols:
        unit = int(Decimal(ticks[symbol]) * 10**scale)
        rows: list[tuple[int, ...]] = []
        for _ in times:
            prices = sorted(draw(st.integers(1, 10**6)) * unit for _ in range(4))
            low, a, b, high = prices
            open_, close = draw(st.permutations([a, b]))
            rows.append((open_, high, low, close, draw(st.integers(0, 10**9))))
        bars[symbol] = rows
    return ticks, scale, places, times, bars


def spell(value: int, scale: int, extra_zeros: int) -> str:
    whole, frac = divmod(value, 10**scale)
    digits = (f"{frac:0{scale}d}" if scale else "") + "0" * extra_zeros
    return f"{whole}.{digits}" if digits else str(whole)


@settings(max_examples=60, deadline=None)
@given(case=bar_sets(), data=st.data())
def test_any_spelling_parses_to_the_same_bars_and_root(
    case: Case,
    data: st.DataObject,
) -> None:
    ticks, scale, places, times, bars = case
    lines = [HEAD.rstrip("\n")]
    for index, stamp in enumerate(times):
        order = data.draw(st.permutations(sorted(bars)))
        for symbol in order:
            *prices, volume = bars[symbol][index]
            texts = [spell(p, scale, data.draw(st.integers(0, 2))) for p in prices]
            zeros = "0" * data.draw(st.integers(0, 2))
            amount = spell(volume, places, data.draw(st.integers(0, 2)))
            lines.append(f"{stamp},{symbol},{','.join(texts)},{zeros}{amount}")
    ending = data.draw(st.sampled_from(["\n", "\r\n"]))
    loose = ending.join(lines) + data.draw(st.sampled_from(["", ending]))
    tape = parse_tape(loose.encode(), ticks, scale)
    assert not isinstance(tape, list), tape
    assert tape.times == tuple(times)
    assert tape.symbols == tuple(sorted(bars))
    for symbol, rows in bars.items():
        col = tape.columns[symbol]
        got = list(zip(col.open, col.high, col.low, col.close, strict=True))
        assert got == [row[:4] for row in rows]
        # each volume exactly, in its canonical text (no trailing zeros, no point if whole)
        volumes = [f"{Decimal(row[4]).scaleb(-places).normalize():f}" for row in rows]
        assert [tape.volume_text(value) for value in col.volume] == volumes
    canonical = render_tape(tape)
    assert root_of_bytes(canonical.encode()) == tape.root
    again = parse_tape(canonical.encode(), ticks, scale)
    assert not isinstance(again, list)
    assert again.root == tape.root
    assert render_tape(again) == canonical
