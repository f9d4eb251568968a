"""The operator's feed through the door (issue 47): ``kestrel-door feed`` and
``/v1/feeds``.

A forward scenario (``forward = true``, a three-bar prefix) grows by the operator's
appends. ``kestrel-door feed append`` accepts a bar once (the same bar again is counted
as already published), refuses a different bar at a published time naming the time,
refuses a malformed row naming its line, and never loses what is stored. ``/v1/feeds``
needs ``kestrel:feed``: an agent's token is refused ``FORBIDDEN`` and appends nothing.
SIGKILL of ``feed replay`` or of ``serve`` in the middle of appends loses no bar either
acknowledged.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result
from kestrel_door.cli import door_group

from tests.doors import serve_door
from tests.forward_door import HEADER, PREFIX, ROWS, SCENARIO, bars, feed_token, forward_catalog


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The forward scenario, named by ``KESTREL_CATALOG_PATH``."""
    directory = forward_catalog(tmp_path / "catalog")
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(directory))
    return directory


def _feed(home: Path, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(door_group, ["--home", str(home), "feed", *args], input=stdin)


def _published(home: Path) -> list[str]:
    """The times of the bars the forward tape holds after its prefix, in order."""
    status = _feed(home, "status", SCENARIO, "--json")
    assert status.exit_code == 0, status.output
    bars = json.loads(status.output)["bars"]
    return [row.split(",", 1)[0] for row in ROWS[PREFIX:bars]]


def test_cli_append_is_once_refuses_conflicts_and_bad_rows_and_loses_nothing(
    tmp_path: Path, catalog: Path
) -> None:
    home = tmp_path / "home"
    first = _feed(home, "append", SCENARIO, stdin=bars(PREFIX, PREFIX + 3))
    assert first.exit_code == 0, first.output
    assert "appended 3 bar(s), 0 already published; the tape has 6 bar(s)" in first.output

    (tmp_path / "more.csv").write_text(bars(PREFIX, PREFIX + 4))  # 3 again, and one new
    again = _feed(home, "append", SCENARIO, "--file", str(tmp_path / "more.csv"))
    assert again.exit_code == 0, again.output
    assert "appended 1 bar(s), 3 already published; the tape has 7 bar(s)" in again.output

    # a different bar at a published time: refused naming the time, nothing written
    *fields, volume = ROWS[PREFIX + 1].strip().split(",")
    time = fields[0]
    changed = ",".join([*fields, str(int(volume) + 100)]) + "\n"  # its volume differs
    conflict = _feed(home, "append", SCENARIO, stdin=HEADER + changed)
    assert conflict.exit_code != 0
    assert time in conflict.output, conflict.output

    # a malformed row (line 3 of the body): refused naming the line; the good row before
    # it is not written either (an append is atomic)
    bad = HEADER + ROWS[PREFIX + 4] + ROWS[PREFIX + 5].replace(",", ",x", 3)
    malformed = _feed(home, "append", SCENARIO, stdin=bad)
    assert malformed.exit_code != 0
    assert "line 3" in malformed.output, malformed.output

    assert _published(home) == [row.split(",", 1)[0] for row in ROWS[PREFIX : PREFIX + 4]]
    status = _feed(home, "status", SCENARIO)
    assert status.exit_code == 0, status.output
    assert "7 bar(s)" in status.output
    assert "window open" in status.output


def test_replay_names_the_line_of_the_file_a_bad_row_is_on(tmp_path: Path, catalog: Path) -> None:
    """``feed replay`` appends a recorded file one bar at a time; a malformed row on line 6
    of the file is refused naming the file and that line (was: "line 2", the line of the
    one bar's CSV the replay made of it), the bars before it published."""
    home = tmp_path / "home"
    rows = list(ROWS[PREFIX : PREFIX + 6])
    rows[4] = rows[4].replace(",", ",x", 3)  # line 6: the header is line 1
    recorded = tmp_path / "day.csv"
    recorded.write_text(HEADER + "".join(rows))
    replayed = _feed(home, "replay", SCENARIO, str(recorded), "--every", "1ms")
    assert replayed.exit_code != 0
    assert f"{recorded} line 6: " in replayed.output, replayed.output
    assert "line 2" not in replayed.output
    assert _published(home) == [row.split(",", 1)[0] for row in rows[:4]]


def test_replay_reads_its_pace_as_kestrel_run_reads_a_wait(tmp_path: Path, catalog: Path) -> None:
    """``--every`` takes the durations ``kestrel run --wait`` takes (one reader), and a pace
    it cannot read is refused naming the forms, before any bar is appended."""
    home = tmp_path / "home"
    recorded = tmp_path / "day.csv"
    recorded.write_text(HEADER + "".join(ROWS[PREFIX : PREFIX + 2]))
    refused = _feed(home, "replay", SCENARIO, str(recorded), "--every", "soon")
    assert refused.exit_code == 2
    assert "'soon' is not a duration such as 30s, 500ms, 10m or 2h" in refused.output
    assert _published(home) == []
    paced = _feed(home, "replay", SCENARIO, str(recorded), "--every", "0.001")  # seconds
    assert paced.exit_code == 0, paced.output
    assert _published(home) == [row.split(",", 1)[0] for row in ROWS[PREFIX : PREFIX + 2]]


def test_only_a_kestrel_feed_token_appends(tmp_path: Path, catalog: Path) -> None:
    home = tmp_path / "home"
    with serve_door(home) as door:
        agent = {"Authorization": f"Bearer {door.token}", "Content-Type": "text/csv"}
        body = bars(PREFIX, PREFIX + 2)
        url = f"{door.url}/v1/feeds/{SCENARIO}"
        for method, path in (("POST", "/bars"), ("POST", "/freeze"), ("GET", "")):
            refused = httpx.request(method, url + path, content=body, headers=agent)
            assert refused.status_code == 403, refused.text
            refusal = refused.json()["refusal"]
            assert refusal["code"] == "FORBIDDEN"
            assert refusal["detail"]["requiredScope"] == "kestrel:feed"
            assert "bars" not in refused.text  # nothing of the feed is said
        operator = {"Authorization": f"Bearer {feed_token(home)}", "Content-Type": "text/csv"}
        assert _published(home) == []  # the agent appended nothing, froze nothing
        made = httpx.post(url + "/bars", content=body, headers=operator)
        assert made.status_code == 200, made.text
        assert made.json()["accepted"] == 2
        seen = httpx.get(url, headers=operator).json()
        assert seen["bars"] == PREFIX + 2
        assert seen["frozen"] is False
        # the operator's token runs no tool
        tools = httpx.get(f"{door.url}/v1/catalog", headers=operator)
        assert tools.status_code == 403, tools.text


def _door_command(home: Path, *args: str) -> list[str]:
    return [
        *(sys.executable, "-c", "from kestrel_door.cli import main; main()"),
        *("--home", str(home), *args),
    ]


def test_sigkill_of_a_replay_loses_no_acknowledged_bar(tmp_path: Path, catalog: Path) -> None:
    home = tmp_path / "home"
    recorded = tmp_path / "day.csv"
    recorded.write_text(bars(PREFIX, PREFIX + 60))
    replay = subprocess.Popen(
        _door_command(home, "feed", "replay", SCENARIO, str(recorded), "--every", "50ms"),
        env=os.environ.copy(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    acknowledged: list[str] = []
    try:
        assert replay.stdout is not None
        for line in replay.stdout:
            assert line.startswith("published "), line
            acknowledged.append(line.split()[1].rstrip(":"))
            if len(acknowledged) == 8:
                os.kill(replay.pid, signal.SIGKILL)
                break
    finally:
        replay.kill()
        replay.wait(timeout=30)
    assert replay.returncode == -signal.SIGKILL
    stored = _published(home)
    assert stored[: len(acknowledged)] == acknowledged  # every bar it said, kept
    assert len(stored) < 60

    again = subprocess.run(
        _door_command(home, "feed", "replay", SCENARIO, str(recorded), "--every", "1ms"),
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already published") == len(stored)  # each accepted once
    assert _published(home) == [row.split(",", 1)[0] for row in ROWS[PREFIX : PREFIX + 60]]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_sigkill_of_the_door_during_appends_loses_no_acknowledged_bar(
    tmp_path: Path,
    catalog: Path,
    kind: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The door on its home's SQLite file, or a PostgreSQL store (every replica's)."""
    if kind == "postgresql":
        monkeypatch.setenv("KESTREL_STORE", request.getfixturevalue("postgres_dsn"))
    home = tmp_path / "home"
    acknowledged: list[str] = []
    enough = threading.Event()
    with serve_door(home) as door:
        assert door.process is not None
        headers = {"Authorization": f"Bearer {feed_token(home)}", "Content-Type": "text/csv"}
        url = f"{door.url}/v1/feeds/{SCENARIO}/bars"

        def post_bars() -> None:
            with httpx.Client(timeout=30, headers=headers) as http:
                for n in range(PREFIX, PREFIX + 400):
                    try:
                        made = http.post(url, content=bars(n, n + 1))
                    except httpx.HTTPError:
                        return  # the door is gone
                    if made.status_code != 200:
                        return
                    acknowledged.append(ROWS[n].split(",", 1)[0])
                    if len(acknowledged) >= 10:
                        enough.set()

        poster = threading.Thread(target=post_bars)
        poster.start()
        try:
            assert enough.wait(120), "the door acknowledged no bar"
            door.process.send_signal(signal.SIGKILL)  # mid-stream, by pid
        finally:
            poster.join(timeout=60)
        door.process.wait(timeout=30)
        assert door.process.returncode == -signal.SIGKILL
    assert 10 <= len(acknowledged) < 400
    stored = _published(home)
    assert stored[: len(acknowledged)] == acknowledged
    assert len(stored) <= len(acknowledged) + 1  # at most the one in flight, unacknowledged
