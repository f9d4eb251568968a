"""A disguise's bars carry no gap of its source's calendar (issue 48).

Moved by whole weeks, a disguised tape kept its source's holiday gaps: the weekdays
missing from GOOG's bars, searched over real first dates, gave 2004-08-19; BTCUSD's
month-end bars kept the months' lengths (2012-01-31 on). The bars are now laid on a
calendar of the disguise's own: every day with bars comes the same number of trading
weekdays after the one before, so the source's gaps are nowhere in the disguise. The
same source and secret lay the same dates in any process; a disguise laid by whole
weeks before still opens with its reveal, and with one rebuilt from its secret.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from datetime import date, timedelta
from itertools import pairwise
from pathlib import Path

import pytest
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.disguise import disguise_transform
from kestrel_sdk.runtime.catalog.model import LoadedScenario
from kestrel_sdk.runtime.catalog.reveal import check_reveal, rebuilt_transform, reveal_object
from kestrel_sdk.scenarios import disguise_scenario, scenario_from_file

from tests.kestrel_sdk.scenarios.twins import SECRET, backtesting_bars, disguised_twin

SOURCES = ("GOOG", "EURUSD", "BTCUSD")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("catalog")
    for name in SOURCES:
        scenario_from_file(backtesting_bars(name), name.lower()).write(root / name.lower())
    return root


def _source(catalog: Path, name: str) -> LoadedScenario:
    loaded = load_catalog([catalog]).get(name.lower())
    assert loaded is not None
    return loaded


def _gaps(times: tuple[str, ...] | list[str]) -> list[int]:
    """An agent's reading of a tape's calendar: between each two days with bars, how
    many of the weekdays it trades on (those with bars at least half as often as its
    busiest) it skips. A holiday is one more; a month of 28 to 31 days is 27 to 30."""
    days = sorted({date.fromisoformat(time[:10]) for time in times})
    counts = Counter(day.weekday() for day in days)
    trading = {weekday for weekday, count in counts.items() if 2 * count >= max(counts.values())}
    return [
        sum((a + timedelta(days=k)).weekday() in trading for k in range(1, (b - a).days))
        for a, b in pairwise(days)
    ]


@pytest.mark.parametrize("name", SOURCES)
def test_a_disguise_keeps_none_of_its_sources_calendar_gaps(
    catalog: Path, name: str, tmp_path: Path
) -> None:
    source = _source(catalog, name)
    twin = disguised_twin(source, tmp_path)
    gaps_source, gaps_twin = _gaps(source.tape.times), _gaps(twin.tape.times)
    assert len(set(gaps_source)) > 1  # holidays (GOOG 77, EURUSD 2) or month lengths
    # the attack: where the source skipped a trading weekday more than it does most
    # often, the disguise does too (a subsequence to search real calendars with)
    assert gaps_twin == [gaps_twin[0]] * len(gaps_twin), Counter(gaps_twin)
    usual = Counter(gaps_source).most_common(1)[0][0]
    assert any(gap != usual for gap in gaps_source)
    assert gaps_twin[0] == usual


def test_a_news_time_between_two_bars_stays_between_them() -> None:
    acme = load_catalog([]).get("acme-trend")  # any tape: the rule is the calendar's
    assert acme is not None
    days = [date(2004, 8, 23) + timedelta(days=k) for k in range(19)]
    open_days = [day for day in days if day.weekday() < 5 and day != date(2004, 9, 6)]
    times = [f"{day.isoformat()}T00:00:00Z" for day in open_days]  # Labor Day closed
    calendar = disguise_transform(acme.tape, SECRET).calendar_of(times)
    laid = dict(zip(times, calendar.bar_times(), strict=True))
    friday, tuesday = laid["2004-09-03T00:00:00Z"], laid["2004-09-07T00:00:00Z"]
    assert date.fromisoformat(tuesday[:10]) - date.fromisoformat(friday[:10]) == timedelta(3)
    labor_day = calendar.time("2004-09-06T15:00:00Z")  # its day is closed up
    assert friday < labor_day < tuesday
    assert calendar.time("2004-09-07T00:00:00Z") == tuesday
    assert tuesday < calendar.time("2004-09-07T00:00:01Z")
    # in a gap the disguise keeps (the weekend before), a time keeps its time of day
    saturday = calendar.time("2004-08-28T15:00:00Z")
    after = date.fromisoformat(laid["2004-08-27T00:00:00Z"][:10]) + timedelta(days=1)
    assert saturday == f"{after.isoformat()}T15:00:00Z"


_ROOT_IN_A_PROCESS = """
import sys
from pathlib import Path
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.scenarios import disguise_scenario
source = load_catalog([Path(sys.argv[1])]).get(sys.argv[2])
print(disguise_scenario(source, "tape-z9", bytes(range(32))).scenario.tape.root)
"""


@pytest.mark.parametrize("name", ["goog", "eurusd"])  # days; weeks laid on sessions
def test_the_same_source_and_secret_lay_the_same_dates_in_any_process(
    catalog: Path, name: str
) -> None:
    here = disguise_scenario(_source(catalog, name), "tape-z9", SECRET).scenario.tape.root
    for seed in ("1", "2"):
        made = subprocess.run(
            [sys.executable, "-c", _ROOT_IN_A_PROCESS, str(catalog), name],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        assert made.stdout.strip() == here


def test_a_disguise_laid_by_whole_weeks_before_still_opens(
    catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _source(catalog, "goog")
    monkeypatch.setattr(
        "kestrel_sdk.scenarios.disguised.disguise_transform",
        lambda tape, secret: replace(disguise_transform(tape, secret), calendar=None),
    )
    made = disguise_scenario(source, "tape-z9", SECRET)
    monkeypatch.undo()
    assert "calendar" not in made.reveal["transform"]
    made.write(tmp_path / "tape-z9")
    twin = load_catalog([tmp_path]).get("tape-z9")
    assert twin is not None
    assert len(set(_gaps(twin.tape.times))) > 1  # its holidays, as it was made
    check_reveal(twin, made.reveal, source)  # raises naming what differs
    rebuilt = rebuilt_transform(twin, source, SECRET)  # `reveal --secret-file`
    again = reveal_object("tape-z9", source.scenario, rebuilt, SECRET)
    assert again["commitment"] == made.reveal["commitment"]
    # and a disguise made now is rebuilt as laid on its own calendar
    current = disguised_twin(source, tmp_path / "now")
    now = reveal_object(
        "tape-z9", source.scenario, rebuilt_transform(current, source, SECRET), SECRET
    )
    check_reveal(current, now, source)
    assert now["transform"]["calendar"] == "sessions"
