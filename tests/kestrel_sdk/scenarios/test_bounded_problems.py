"""An import whose every row is bad keeps the first 100 problems, counts all by kind
(issue 48): it kept every one (500,000 bad rows of five faults: 800 MB)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner
from kestrel_sdk.cli import cli
from kestrel_sdk.scenarios import ScenarioImportError, scenario_from_file

HEADER = "Date,Open,High,Low,Close,Volume\n"
DAY = 86_400
START = 1_704_153_600  # 2024-01-02


def _bad_file(path: Path, rows: int, row: str = "x,9,11,10,-1") -> Path:
    """``rows`` rows, each ``row`` after its own epoch time."""
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        out.writelines(f"{START + index * DAY},{row}\n" for index in range(rows))
    return path


def test_the_first_100_problems_are_listed_and_all_are_counted_by_kind(tmp_path: Path) -> None:
    source = _bad_file(tmp_path / "ACME.csv", 1000)  # each row: Open 'x', Volume -1
    with pytest.raises(ScenarioImportError) as caught:
        scenario_from_file(source, "acme")
    error = caught.value
    assert error.total == 2000
    assert error.counts == {"Open … is not a number": 1000, "Volume … is negative": 1000}
    assert error.lines[:3] == [
        "ACME.csv: row 2: Open 'x' is not a number",
        "ACME.csv: row 2: Volume -1 is negative",
        "ACME.csv: row 3: Open 'x' is not a number",
    ]
    assert len(error.lines) == 100
    assert error.lines[-1] == "ACME.csv: row 51: Volume -1 is negative"
    more = (
        "... and 1900 more; all 2000 by kind: Open … is not a number (1000), "
        "Volume … is negative (1000)"
    )
    assert error.more == more
    assert str(error).splitlines() == [*error.lines, more]

    result = CliRunner().invoke(cli, ["scenario", "new", "acme", "--from", str(source)])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        *error.lines,
        more,
        f"kestrel: INVALID_ARGUMENT: 2000 problems in {source}; nothing written",
    ]


def test_the_first_problems_are_those_of_the_first_rows_whichever_check_found_them(
    tmp_path: Path,
) -> None:
    """A bad price is found as the file is read, a duplicate time once all of it is: the
    100 listed are the first by row all the same (rows 3, 4, 6, 7, ...)."""
    source = tmp_path / "ACME.csv"
    lines = [HEADER]
    for block in range(150):  # a bar, the same time again, then a bar with High < Low
        time = START + block * DAY
        lines += [f"{time},10,11,9,10,5\n"] * 2 + [f"{time + 3600},10,9,11,10,5\n"]
    source.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ScenarioImportError) as caught:
        scenario_from_file(source, "acme")
    error = caught.value
    rows = [row for block in range(50) for row in (3 * block + 3, 3 * block + 4)]
    assert [line.split(": ")[1] for line in error.lines] == [f"row {row}" for row in rows]
    assert error.lines[:2] == [
        "ACME.csv: row 3: duplicate time 2024-01-02T00:00:00Z for ACME (also row 2)",
        "ACME.csv: row 4: High 9 < Low 11",
    ]
    assert error.total == 300


def test_memory_stays_bounded_however_many_rows_are_bad(tmp_path: Path) -> None:
    """10,000 rows of five faults each: 50,000 problems, kept in under 1 MB (every one of
    them kept took about 16 MB)."""
    source = _bad_file(tmp_path / "ACME.csv", 10_000, "x,x,x,x,x")
    tracemalloc.start()
    try:
        with pytest.raises(ScenarioImportError) as caught:
            scenario_from_file(source, "acme")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.total == 50_000
    assert peak < 4 * 2**20, f"peak {peak / 2**20:.1f} MiB"
