"""The catalog as a service sees it: shipped scenarios, user scenarios, problems."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from kestrel_protocol import Catalog, Scenario, kestrel_home, root_of_bytes
from kestrel_sdk.runtime.catalog import (
    CatalogProblem,
    check_catalog,
    load_catalog,
    tape_csv,
)
from kestrel_sdk.runtime.lang.kinds import STATEMENT_KINDS

MakeScenario = Callable[..., Path]

SHIPPED = {
    "acme-chop": ["ACME"],
    "acme-crash": ["ACME"],
    "acme-trend": ["ACME"],
    "basket-20": [
        *("ACRN", "ARBR", "BKLN", "BLTX", "CLDY", "DTWV", "GNMX", "HLIO", "IMNR", "INDEX"),
        *("JNPR", "MGMA", "NRTH", "OLVN", "PRSM", "SLVR", "TRST", "UNDR", "VLTA", "YRDL", "ZPHR"),
    ],
    "minute-200k": ["ACME"],
    "pairs-kx": ["KAPPA", "XI"],
}


def test_shipped_catalog_lists_the_six_scenarios_sorted_with_their_symbols() -> None:
    index = load_catalog([])
    assert index.problems == []
    assert index.ids() == sorted(SHIPPED)
    entries = {entry.id: entry for entry in index.catalog.scenarios}
    assert {key: entry.symbols for key, entry in entries.items()} == SHIPPED
    assert [entry.id for entry in index.catalog.scenarios] == sorted(SHIPPED)
    assert entries["minute-200k"].bars == 200_000
    assert entries["minute-200k"].interval == "1m"
    for scenario_id in ("acme-chop", "acme-crash", "acme-trend", "pairs-kx"):
        assert entries[scenario_id].interval == "1d"
        assert (entries[scenario_id].bars or 0) >= 2_500
    assert (entries["basket-20"].interval, entries["basket-20"].bars) == ("1d", 504)


def test_catalog_object_verifies_and_teaches_the_four_statement_kinds() -> None:
    catalog = load_catalog([]).catalog
    again = Catalog.parse(catalog.canonical())
    assert again.root == catalog.root
    assert [kind.kind for kind in catalog.statement_kinds] == [k.kind for k in STATEMENT_KINDS]
    for entry in catalog.scenarios:
        loaded = load_catalog([]).get(entry.id)
        assert loaded is not None
        assert entry.root == loaded.scenario.root


def test_scenario_objects_carry_the_shipped_terms_and_verify() -> None:
    index = load_catalog([])
    for scenario_id in index.ids():
        loaded = index.get(scenario_id)
        assert loaded is not None
        scenario = Scenario.parse(loaded.scenario.canonical())
        assert scenario.account.cash == "100000.00"
        assert scenario.fees.bps == "10"
        assert scenario.fees.minimum == "0.00"
        assert scenario.fill.participation == "1"
        assert scenario.fill.slippage_bps == "0"
        assert all(item.tick == "0.01" and item.lot == 1 for item in scenario.instruments)
        assert scenario.tape.bars_per_year == (98280 if scenario_id == "minute-200k" else 252)
        assert loaded.origin is None
    pairs = index.get("pairs-kx")
    crash = index.get("acme-crash")
    trend = index.get("acme-trend")
    assert pairs is not None
    assert crash is not None
    assert trend is not None
    assert pairs.scenario.account.shortable is True
    assert trend.scenario.account.shortable is False
    assert crash.scenario.account.max_drawdown == "0.25"
    assert "0.25" in crash.scenario.description
    assert trend.scenario.account.max_drawdown == "1.0"


def test_tape_root_is_the_sha256_of_the_canonical_csv() -> None:
    index = load_catalog([])
    for scenario_id in ("acme-trend", "pairs-kx"):
        loaded = index.get(scenario_id)
        assert loaded is not None
        text = tape_csv(loaded)
        assert text.startswith("time,symbol,open,high,low,close,volume\n")
        assert root_of_bytes(text.encode("utf-8")) == loaded.scenario.tape.root
        assert loaded.tape.root == loaded.scenario.tape.root
        assert len(loaded.tape) == loaded.scenario.tape.bars
        assert loaded.tape.times[0] == loaded.scenario.tape.start
        assert loaded.tape.times[-1] == loaded.scenario.tape.end


def test_every_session_shares_one_tape_per_process() -> None:
    first = load_catalog([]).get("acme-chop")
    second = load_catalog([]).get("acme-chop")
    assert first is not None
    assert second is not None
    assert first.tape is second.tape


def test_user_scenario_loads_next_to_the_shipped_ones(
    tmp_path: Path, make_scenario: MakeScenario, good_tape: str
) -> None:
    directory = make_scenario(tmp_path, "foo-daily")
    index = load_catalog([tmp_path])
    assert index.problems == []
    loaded = index.get("foo-daily")
    assert loaded is not None
    assert loaded.origin == directory
    assert loaded.scenario.account.cash == "5000.00"
    assert loaded.scenario.tape.bars == 2
    assert loaded.scenario.tape.start == "2024-01-02T00:00:00Z"
    assert loaded.tape.columns["FOO"].close.tolist() == [1020, 1010]
    assert loaded.tape.root == root_of_bytes(good_tape.encode())
    assert "foo-daily" in [entry.id for entry in index.catalog.scenarios]
    assert set(SHIPPED) <= set(index.ids())


def test_catalog_path_entry_may_be_a_scenario_directory_itself(
    tmp_path: Path, make_scenario: MakeScenario
) -> None:
    directory = make_scenario(tmp_path, "solo")
    index = load_catalog([directory])
    assert index.problems == []
    assert index.get("solo") is not None


def test_kestrel_catalog_path_with_several_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_scenario: MakeScenario
) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    make_scenario(first, "alpha")
    make_scenario(second, "beta")
    solo = make_scenario(tmp_path / "three", "gamma")
    monkeypatch.setenv(
        "KESTREL_CATALOG_PATH",
        os.pathsep.join([str(first), "", str(second), str(solo), str(first)]),
    )
    index = load_catalog()
    assert index.problems == []
    assert {"alpha", "beta", "gamma"} <= set(index.ids())
    assert check_catalog() == []


def test_user_scenario_may_not_shadow_a_shipped_id(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, make_scenario: MakeScenario
) -> None:
    make_scenario(tmp_path, "acme-trend")
    with caplog.at_level(logging.WARNING):
        index = load_catalog([tmp_path])
    assert index.problems == [
        CatalogProblem(
            tmp_path / "acme-trend" / "scenario.toml",
            1,
            "id 'acme-trend' is already taken by a shipped scenario",
        )
    ]
    loaded = index.get("acme-trend")
    assert loaded is not None
    assert loaded.origin is None
    assert "acme-trend" in caplog.text


def test_duplicate_user_ids_keep_the_first_in_path_order(
    tmp_path: Path, make_scenario: MakeScenario
) -> None:
    first = make_scenario(tmp_path / "a", "same")
    make_scenario(tmp_path / "b", "same")
    index = load_catalog([tmp_path / "a", tmp_path / "b"])
    loaded = index.get("same")
    assert loaded is not None
    assert loaded.origin == first
    assert [(p.path, p.line) for p in index.problems] == [
        (tmp_path / "b" / "same" / "scenario.toml", 1)
    ]
    assert str(first) in index.problems[0].reason


def test_missing_catalog_directory_is_reported_not_fatal(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    index = load_catalog([missing])
    assert index.problems == [
        CatalogProblem(missing, None, "catalog path entry is not a directory")
    ]
    assert set(index.ids()) == set(SHIPPED)


def test_a_damaged_shipped_scenario_is_reported_not_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_scenario: MakeScenario, good_tape: str
) -> None:
    """A broken install: one shipped tape lost its header, another is not canonical."""
    from kestrel_sdk.runtime.catalog import ShippedTapeError, shipped

    headless = make_scenario(tmp_path, "headless", tape=good_tape.split("\n", 1)[1])
    loose = make_scenario(tmp_path, "loose", tape=good_tape.replace("10.00", "10.0"))
    fine = make_scenario(tmp_path, "fine")
    monkeypatch.setattr(shipped, "_shipped_dirs", lambda: [headless, loose, fine])
    shipped.shipped_scenarios.cache_clear()
    try:
        index = load_catalog([])
        assert index.ids() == ["fine", "loose"]
        assert [(p.path, p.line) for p in index.problems] == [
            (Path("kestrel_sdk/catalog_data/headless"), None)
        ]
        assert "not in canonical form" in index.problems[0].reason
        loose_loaded = index.get("loose")
        assert loose_loaded is not None
        with pytest.raises(ShippedTapeError, match="shipped tape of loose is damaged"):
            _ = loose_loaded.tape
        problems = check_catalog([])
        assert [p.path for p in problems] == [
            Path("kestrel_sdk/catalog_data/loose"),
            Path("kestrel_sdk/catalog_data/headless"),
        ]
    finally:
        shipped.shipped_scenarios.cache_clear()


def test_catalog_path_expands_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_scenario: MakeScenario
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    make_scenario(tmp_path / "scenarios", "homely")
    monkeypatch.setenv("KESTREL_CATALOG_PATH", "~/scenarios")
    index = load_catalog()
    assert index.problems == []
    assert index.get("homely") is not None


def test_a_link_out_of_the_scenario_directory_is_not_read_nor_echoed(
    tmp_path: Path, make_scenario: MakeScenario, good_tape: str
) -> None:
    from click.testing import CliRunner
    from kestrel_sdk.cli import cli as kestrel_cli

    secret = tmp_path / "elsewhere" / "passwd"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n", "utf-8")
    catalog = tmp_path / "catalog"
    for name, target in (("linked-tape", "tape.csv"), ("linked-toml", "scenario.toml")):
        directory = make_scenario(catalog, name)
        (directory / target).unlink()
        (directory / target).symlink_to(secret)
    inside = make_scenario(catalog, "linked-inside")  # a link within the directory is fine
    (inside / "data").mkdir()
    (inside / "tape.csv").rename(inside / "data" / "bars.csv")
    (inside / "tape.csv").symlink_to(inside / "data" / "bars.csv")
    problems = check_catalog([catalog])
    assert sorted(str(p) for p in problems) == [
        f"{catalog / 'linked-tape' / 'tape.csv'}: tape.csv links outside the scenario directory",
        f"{catalog / 'linked-toml' / 'scenario.toml'}: scenario.toml links outside the scenario"
        " directory",
    ]
    index = load_catalog([catalog])
    assert index.get("linked-inside") is not None
    assert index.get("linked-tape") is None
    checked = CliRunner().invoke(
        kestrel_cli, ["catalog", "--check"], env={"KESTREL_CATALOG_PATH": str(catalog)}
    )
    assert "links outside the scenario directory" in checked.output
    assert "root:x" not in checked.output


_LIST_PROBLEMS = """
import json, sys
from kestrel_sdk.runtime.catalog import load_catalog
index = load_catalog([sys.argv[1]])
print(json.dumps([index.get("fine") is not None, sorted(str(p) for p in index.problems)]))
"""


def test_a_fifo_for_a_tape_or_news_is_a_problem_not_a_listing_that_never_ends(
    tmp_path: Path, make_scenario: MakeScenario
) -> None:
    catalog = tmp_path / "catalog"
    make_scenario(catalog, "fine")
    piped_tape = make_scenario(catalog, "piped-tape")
    (piped_tape / "tape.csv").unlink()
    os.mkfifo(piped_tape / "tape.csv")
    os.mkfifo(make_scenario(catalog, "piped-news") / "news.jsonl")
    listed = subprocess.run(  # in a process of its own: a read of a FIFO never returns
        [sys.executable, "-c", _LIST_PROBLEMS, str(catalog)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(listed.stdout) == [
        True,
        [
            f"{catalog / 'piped-news' / 'news.jsonl'}: news.jsonl is not a regular file",
            f"{catalog / 'piped-tape' / 'tape.csv'}: tape.csv is not a regular file",
        ],
    ]


def test_a_file_that_is_no_tape_is_not_echoed(tmp_path: Path, make_scenario: MakeScenario) -> None:
    make_scenario(tmp_path, "not-a-tape", tape="root:x:0:0:root:/root:/bin/bash\n")
    problems = check_catalog([tmp_path])
    assert [p.reason for p in problems] == [
        "the header must be exactly 'time,symbol,open,high,low,close,volume'"
    ]


def test_a_tape_validated_before_is_listed_from_its_remembered_shape(
    tmp_path: Path, make_scenario: MakeScenario, good_tape: str
) -> None:
    from kestrel_protocol import KestrelError
    from kestrel_sdk.runtime.catalog.shapes import remember_shape, remembered_shape
    from kestrel_sdk.runtime.catalog.tapes import TapeShape

    directory = make_scenario(tmp_path, "foo-daily")
    tape, toml = directory / "tape.csv", (directory / "scenario.toml").read_bytes()
    first = load_catalog([tmp_path]).get("foo-daily")  # validated in full, remembered
    assert first is not None
    info = first.scenario.tape
    assert remembered_shape(kestrel_home(), tape, toml) == TapeShape(
        info.bars, info.start, info.end, info.root
    )
    # Another process (no columns in memory) met a tape with the same identity but other
    # bytes, as `kestrel scenario new` would have remembered it: it is listed without
    # being read, and its first use refuses it.
    other = good_tape.replace("10.20,1000", "10.30,1000")
    stamp = tape.stat()
    tape.write_bytes(other.encode())
    os.utime(tape, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    claimed = TapeShape(2, info.start, info.end, root_of_bytes(b"not these bytes"))
    remember_shape(kestrel_home(), tape, toml, claimed)
    listed = load_catalog([tmp_path]).get("foo-daily")
    assert listed is not None
    assert listed.scenario.tape.root == claimed.root  # the tape was not read
    with pytest.raises(KestrelError, match="the tape of scenario foo-daily changed"):
        listed.tape  # noqa: B018 - its first use
    # Any change to its identity validates it again: a broken tape is then a problem.
    tape.write_bytes(good_tape.replace("10.50", "10.10").encode())
    problems = load_catalog([tmp_path]).problems
    assert [p.path for p in problems] == [tape]
    assert "low <= open, close <= high" in problems[0].reason
