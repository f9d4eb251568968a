"""A disguise's clock tells no week of the year, no half day's close, no closed holiday.

Laid on open days (session 17), a disguised tape kept each bar's time of day: EURUSD's
weekly reopening moved from Sunday 21:00 to 22:00 UTC when US summer time ended (its
weekend 50 hours instead of 49 that once), an exchange's session from 13:30 to 14:30 UTC,
its half days closed three hours early, and after EURUSD's Christmas every weekday's
shape fell a day later (a Friday close on a Thursday: 12 gaps of 25 hours). Each attack
below reads the disguised tape's sessions as an agent would (``tests.exchange_hours``)
and fails on that calendar; the sessions calendar lays every session on one template.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import timedelta
from itertools import pairwise
from pathlib import Path

import pytest
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.disguise import OPEN_DAYS, disguise_transform
from kestrel_sdk.runtime.catalog.model import LoadedScenario
from kestrel_sdk.runtime.catalog.reveal import check_reveal, rebuilt_transform, reveal_object
from kestrel_sdk.scenarios import disguise_scenario, scenario_from_file

from tests.exchange_hours import HALF_DAYS, Session, read_sessions, write_exchange_bars

SECRET = bytes(range(32))


def _eurusd() -> Path:
    import backtesting.test  # type: ignore[import-untyped]

    return Path(backtesting.test.__file__).with_name("EURUSD.csv")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("catalog")
    scenario_from_file(_eurusd(), "eurusd").write(root / "eurusd")
    bars = write_exchange_bars(tmp_path_factory.mktemp("bars") / "ACME.csv")
    scenario_from_file(bars, "stock").write(root / "stock")
    return root


def _source(catalog: Path, name: str) -> LoadedScenario:
    loaded = load_catalog([catalog]).get(name)
    assert loaded is not None
    return loaded


def _twin(source: LoadedScenario, directory: Path) -> LoadedScenario:
    disguise_scenario(source, "tape-z9", SECRET).write(directory / "tape-z9")
    twin = load_catalog([directory]).get("tape-z9")
    assert twin is not None
    return twin


def _inner(sessions: list[Session]) -> list[Session]:
    """The sessions the tape's ends do not cut."""
    return sessions[1:-1]


def _clock(sessions: list[Session], end: str) -> Counter[str]:
    """The weekday and time of day each session opens or closes at."""
    return Counter(getattr(s, end).strftime("%a %H:%M") for s in sessions)


def _breaks(sessions: list[Session]) -> Counter[timedelta]:
    """The gaps after a session of the usual number of bars to the next one's first bar,
    past whole days (EURUSD's two weeks of 121 bars, an extra bar on a Friday, end later)."""
    usual = Counter(s.bars for s in sessions).most_common(1)[0][0]
    return Counter(
        (b.opens - a.closes) % timedelta(days=1) for a, b in pairwise(sessions) if a.bars == usual
    )


@pytest.mark.parametrize("name", ["eurusd", "stock"])
def test_a_session_opens_at_one_time_of_day_whatever_the_sources_clock_did(
    catalog: Path, name: str, tmp_path: Path
) -> None:
    source = _source(catalog, name)
    twin = _twin(source, tmp_path)
    ours, theirs = read_sessions(source.tape.times), read_sessions(twin.tape.times)
    opens = Counter(s.opens.strftime("%H:%M") for s in _inner(ours))
    assert len(opens) == 2, opens  # summer time and winter time: the week of the year
    assert len(_breaks(ours)) > 1, _breaks(ours)  # a night or weekend an hour short or long
    assert Counter(s.opens.strftime("%H:%M") for s in _inner(theirs)).keys() == {
        s.opens.strftime("%H:%M") for s in _inner(theirs)[:1]
    }
    assert len(_breaks(theirs)) == 1, _breaks(theirs)


def test_a_half_day_closes_when_a_full_day_does(catalog: Path, tmp_path: Path) -> None:
    source = _source(catalog, "stock")
    twin = _twin(source, tmp_path)
    ours, theirs = read_sessions(source.tape.times), read_sessions(twin.tape.times)
    closes = Counter(s.closes.strftime("%H:%M") for s in _inner(ours))
    assert len(closes) == 4, closes  # 19:30 and 20:30, and 16:30 and 17:30 on half days
    half = [index for index, s in enumerate(ours) if s.opens.date() in HALF_DAYS]
    assert {ours[index].bars for index in half} == {4}
    assert len(Counter(s.closes.strftime("%H:%M") for s in _inner(theirs))) == 1
    # each session keeps its bars (a day order lives as long); a half day's four are
    # spread over the full day's seven hours: two hours apart, not one
    assert [s.bars for s in theirs] == [s.bars for s in ours]
    for index in half:
        spread = theirs[index]
        assert spread.closes - spread.opens == timedelta(hours=6)


def test_a_closed_holiday_moves_no_weekday_on(catalog: Path, tmp_path: Path) -> None:
    source = _source(catalog, "eurusd")
    twin = _twin(source, tmp_path)
    ours, theirs = read_sessions(source.tape.times), read_sessions(twin.tape.times)
    # the source's Christmas and New Year weeks open on a Monday, the rest on a Sunday
    assert _clock(_inner(ours), "opens").keys() == {"Sun 21:00", "Sun 22:00", "Mon 22:00"}
    assert len(_clock(_inner(theirs), "opens")) == 1, _clock(_inner(theirs), "opens")
    # every week closes on one Friday hour (the two of 121 bars an hour later: their own)
    closes = _clock([s for s in _inner(theirs) if s.bars <= 120], "closes")
    assert len(closes) == 1, closes
    hours = Counter(twin.tape.times[k][11:13] for k in range(len(twin.tape.times)))
    assert len(hours) == 24  # an FX tape still trades round the clock
    assert [s.bars for s in theirs] == [s.bars for s in ours]


def test_a_disguise_laid_on_open_days_before_still_opens(
    catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _source(catalog, "eurusd")
    monkeypatch.setattr(
        "kestrel_sdk.scenarios.disguised.disguise_transform",
        lambda tape, secret: replace(disguise_transform(tape, secret), calendar=OPEN_DAYS),
    )
    made = disguise_scenario(source, "tape-z9", SECRET)
    monkeypatch.undo()
    assert made.reveal["transform"]["calendar"] == "open-days"
    made.write(tmp_path / "tape-z9")
    twin = load_catalog([tmp_path]).get("tape-z9")
    assert twin is not None
    assert len(_breaks(read_sessions(twin.tape.times))) > 1  # laid as it was made
    check_reveal(twin, made.reveal, source)  # raises naming what differs
    rebuilt = rebuilt_transform(twin, source, SECRET)  # `reveal --secret-file`
    again = reveal_object("tape-z9", source.scenario, rebuilt, SECRET)
    assert again["commitment"] == made.reveal["commitment"]
    current = _twin(source, tmp_path / "now")
    now = reveal_object(
        "tape-z9", source.scenario, rebuilt_transform(current, source, SECRET), SECRET
    )
    check_reveal(current, now, source)
    assert now["transform"]["calendar"] == "sessions"
    assert current.tape.times != twin.tape.times


def test_a_news_time_in_a_session_keeps_its_place_from_the_sessions_open() -> None:
    acme = load_catalog([]).get("acme-trend")  # any tape: the rule is the calendar's
    assert acme is not None
    days = [("2019-03-07", 14), ("2019-03-08", 14), ("2019-03-11", 13), ("2019-03-12", 13)]
    times = [f"{day}T{hour + k:02d}:30:00Z" for day, hour in days for k in range(7)]
    calendar = disguise_transform(acme.tape, SECRET).calendar_of(times)
    laid = calendar.bar_times()
    assert {time[10:] for time in laid[::7]} == {"T14:30:00Z"}  # summer time: no trace
    monday = laid[14]
    item = calendar.time("2019-03-11T15:45:00Z")  # 2h15 after Monday's (summer) open
    assert item == f"{monday[:10]}T16:45:00Z"
    weekend = calendar.time("2019-03-09T12:00:00Z")  # between Friday's close and Monday
    assert laid[13] < weekend < monday
