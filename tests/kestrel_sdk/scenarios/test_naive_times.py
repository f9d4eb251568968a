"""Times of day without an offset are taken as UTC, and the import says so (issue 48:
it said nothing, so local exchange times became UTC ones unseen)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from kestrel_sdk.cli import cli
from kestrel_sdk.scenarios import scenario_from_file

HEADER = "timestamp,open,high,low,close,volume\n"
BAR = ",10,11,9,10,5\n"


def _file(tmp_path: Path, *times: str) -> Path:
    path = tmp_path / "ACME.csv"
    path.write_text(HEADER + "".join(time + BAR for time in times), encoding="utf-8")
    return path


def test_naive_intraday_times_are_noted_as_taken_as_utc(tmp_path: Path) -> None:
    source = _file(tmp_path, "2024-03-01 09:30:00", "2024-03-01T09:35:00", "2024-03-01T09:40:00Z")
    note = (
        "2 times without an offset taken as UTC: 2024-03-01 09:30:00 (row 2) is "
        "2024-03-01T09:30:00Z (give local times their offset, e.g. 2024-03-01T09:30:00-05:00)"
    )
    assert note in scenario_from_file(source, "acme").notes
    result = CliRunner().invoke(
        cli, ["scenario", "new", "acme", "--from", str(source), "--out", str(tmp_path / "acme")]
    )
    assert result.exit_code == 0, result.output
    assert f"  note: {note}" in result.stdout.splitlines()


@pytest.mark.parametrize(
    "times",
    [
        ("2024-03-01T09:30:00Z", "2024-03-01T09:35:00+00:00"),  # offsets given
        ("2024-03-01T09:30:00-05:00", "2024-03-01T09:35:00-05:00"),
        ("1709285400", "1709285700"),  # epoch seconds are UTC by definition
        ("2024-03-01", "2024-03-04"),  # dates: a day in any zone
        ("2024-03-01 00:00:00", "2024-03-04 00:00:00"),  # a daily tape dates bars by day
    ],
    ids=["utc", "offset", "epoch", "dates", "daily"],
)
def test_times_whose_zone_is_known_or_irrelevant_get_no_note(
    tmp_path: Path, times: tuple[str, ...]
) -> None:
    notes = scenario_from_file(_file(tmp_path, *times), "acme").notes
    assert not [note for note in notes if "offset" in note], notes
