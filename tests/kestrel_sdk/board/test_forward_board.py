"""Forward runs on the board (issue 47): a session a door says traded a forward tape is
shown with its window (the first bar a forward decision traded into, the session's last
bar, how many decisions) and ranked apart from replays of the same tape, never counted
overall with them.

Alice and Bob trade ``acme-chop`` through a door that treats it as forward (every bar
after bar 0 published after they decided); Carol trades the same scenario through the
same door's keys as an ordinary replay. Under ``--trust`` the board shows two rankings
of ``acme-chop``: the forward one (Alice and Bob, with their windows) and Carol's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import kestrel_sdk
from click.testing import CliRunner
from kestrel_door import DoorStore
from kestrel_door.arrivals import Stamps
from kestrel_door.attest import Attestor, attesting
from kestrel_door.keys import DoorKeys
from kestrel_sdk.board import build_board, render_board
from kestrel_sdk.cli import cli as kestrel_cli
from kestrel_sdk.forward_edge import statement_predicate
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.kestrel_sdk.board.proofs import write
from tests.kestrel_sdk.runtime.forward.scenarios import SCENARIO_ID as FORWARD_ID
from tests.kestrel_sdk.runtime.forward.scenarios import bars as forward_bars
from tests.kestrel_sdk.runtime.forward.scenarios import forward_catalog

SCENARIO = "acme-chop"
ISSUER = "https://door.test"
PUBLISHED = "2999-01-01T00:00:00.000000Z"
TRADES = {
    "alice": ("advance 1", "buy 5 ACME\nadvance 1", "sell 5 ACME\nadvance 2", "advance 3000"),
    "bob": ("advance 4", "buy 20 ACME\nadvance 3000"),
    "carol": ("buy 10 ACME", "advance 3000"),
}


class Feeds:
    """``SCENARIO`` is forward, bar 0 its prefix, every later bar published at ``PUBLISHED``
    (after every decision), its window ``closed`` (the feed frozen) when a grade is signed
    or still open."""

    def __init__(self, closed: bool = True) -> None:
        self.closed = closed

    def is_forward(self, scenario_id: str) -> bool:
        return scenario_id == SCENARIO

    def published(self, scenario_id: str) -> Mapping[int, Stamps]:
        return {bar: ("", "") if bar == 0 else (PUBLISHED, PUBLISHED) for bar in range(2600)}

    def edge(self, scenario_id: str) -> tuple[int, str]:
        tape = load_catalog().get(SCENARIO).tape  # type: ignore[union-attr]
        return len(tape), tape.root  # its whole tape published

    def frozen(self, scenario_id: str) -> bool:
        return self.closed


def _proofs(tmp_path: Path, *, closed: bool = True) -> tuple[Path, dict[str, Any]]:
    """Each principal's signed proof, written under its name, the forward ones signed
    with the window ``closed`` or open; the door's key set."""
    keys = DoorKeys(DoorStore(tmp_path / "door.db"))
    owner = kestrel_sdk.local_transport(home=tmp_path / "runtime", store="memory:")
    runtime: Any = getattr(owner, "runtime", None)

    def transport_for(principal: str) -> Any:
        return kestrel_sdk.local_transport(principal=principal, runtime=runtime)

    async def trade(principal: str) -> dict[str, Any]:
        attestor = Attestor(keys, ISSUER, feeds=None if principal == "carol" else Feeds(closed))
        attestor.pseudonyms.load()
        async with kestrel_sdk.create_sdk(attesting(transport_for, attestor)(principal)) as sdk:
            opened = await sdk.open_session(SCENARIO)
            assert opened.session is not None
            for source in TRADES[principal]:
                await opened.session.submit(source)
            proof: dict[str, Any] = (await sdk.proof(opened.session.id)).to_json()
        return proof

    async def run() -> None:
        try:
            for principal in TRADES:
                write(tmp_path / "proofs" / f"{principal}.json", await trade(principal))
        finally:
            await owner.aclose()

    anyio.run(run)
    return tmp_path / "proofs", keys.jwks()


def test_forward_runs_show_their_window_and_rank_apart_from_replays(tmp_path: Path) -> None:
    folder, jwks = _proofs(tmp_path)
    board = build_board([folder], trusted_keys=jwks)
    rows = {Path(row.source).stem: row for row in board.rows}
    times = load_catalog().get(SCENARIO).tape.times  # type: ignore[union-attr]
    for name, decisions in (("alice", 4), ("bob", 2)):
        row = rows[name]
        assert row.attested, row.reason
        assert row.badge != "failed", row.reason
        assert row.forward is not None, row.reason
        # the first bar a forward decision traded into is bar 1; the last, the tape's end
        assert (row.forward.first, row.forward.last) == (times[1], times[-1])
        assert row.forward.decisions == decisions
        shown = {"forward": True, "first": times[1], "last": times[-1], "decisions": decisions}
        assert row.to_json()["forward"] == shown
        assert f"forward window {times[1]} to {times[-1]}" in row.reason
    replay = rows["carol"]
    assert replay.attested, replay.reason
    assert replay.badge != "failed", replay.reason
    assert replay.forward is None
    assert "forward" not in replay.to_json()  # absent, not null: old rows keep their text

    # two rankings of acme-chop: the forward runs apart, not counted overall
    rankings = [(r.scenario, r.forward, sorted(c.agent for c in r.cells)) for r in board.scenarios]
    forward_agents = sorted(rows[n].agent for n in ("alice", "bob"))
    assert rankings == [(SCENARIO, False, [replay.agent]), (SCENARIO, True, forward_agents)]
    assert [r.counted for r in board.scenarios] == [True, False]
    assert [s.agent for s in board.overall] == [replay.agent]
    data = board.to_json()
    assert [s.get("forward") for s in data["scenarios"]] == [None, True]
    assert json.dumps(data).count('"forward": true') == 3  # two rows and one ranking
    page = render_board(board)
    assert page.count("data-forward") == 1
    assert f"forward window {times[1]} to {times[-1]}" in page


def test_a_forward_run_graded_before_its_window_closed_fails_whole_window(
    tmp_path: Path,
) -> None:
    """Alice and Bob stop at the edge of the forward tape and have the door grade them
    while its window is still open (a lucky stretch, then stop): each passed
    ``whole-window`` on the edge its door signed and was ranked beside runs that traded
    to the freeze. The statement now says the window was open (``windowClosed: false``):
    under ``--trust`` both fail ``whole-window`` saying so, on the SDK's board and on
    ``kestrel board``'s; Carol's replay is untouched."""
    folder, jwks = _proofs(tmp_path, closed=False)
    board = build_board([folder], trusted_keys=jwks)
    rows = {Path(row.source).stem: row for row in board.rows}
    why = (
        "stopped at the edge of its forward tape (2520 bars published) while its window was "
        "still open: its door signed the grade before the feed was frozen"
    )
    for name in ("alice", "bob"):
        assert (
            statement_predicate(json.loads((folder / f"{name}.json").read_text()))["windowClosed"]
            is False
        )
        assert rows[name].checks["whole-window"] == f"failed: {why}", rows[name].reason
        assert (rows[name].badge, rows[name].rank) == ("failed", None)
    assert rows["carol"].badge != "failed", rows["carol"].reason
    assert [(r.forward, len(r.cells)) for r in board.scenarios] == [(False, 1)]
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(jwks), encoding="utf-8")
    done = CliRunner().invoke(
        kestrel_cli,
        ["--home", str(tmp_path / "home"), "board", str(folder), "--trust", str(keys), "--json"],
    )
    assert done.exit_code != 0  # failed rows: exit 1, naming the first
    said = {Path(r["source"]).stem: r for r in json.loads(done.stdout)["rows"]}
    assert said["alice"]["checks"]["whole-window"] == f"failed: {why}"
    assert said["alice"]["badge"] == "failed"


def test_a_run_of_a_grown_forward_tape_that_stops_early_fails_whole_window(
    tmp_path: Path,
) -> None:
    """A forward scenario declared with a two-bar prefix grew to 62 bars before its
    freeze; its tape unsealed, each proof embeds it. Alice stopped at bar 3, Bob traded
    to the end: Alice's row fails ``whole-window`` against the tape as it grew (was:
    against the two-bar prefix its terms count, so that a run of three bars passed)."""
    runtime = Runtime(
        tmp_path / "home",
        [forward_catalog(tmp_path, prefix=2)],
        store=open_runtime_store("memory:"),
    )
    runtime.append_bars(FORWARD_ID, forward_bars(2, 60), clock=lambda: PUBLISHED)
    trades = {
        "alice": ("buy 5 ACME\nadvance 2\nsell 5 ACME\nadvance 1",),
        "bob": ("buy 5 ACME\nadvance 30\nsell 5 ACME\nadvance 31",),
    }
    sessions = {}
    for principal, sources in trades.items():
        sid = runtime.open_session(principal, FORWARD_ID).session_id
        assert sid is not None
        for source in sources:
            runtime.submit(principal, sid, source)
        sessions[principal] = sid
    runtime.freeze_feed(FORWARD_ID)
    runtime.submit("bob", sessions["bob"], "advance 1")  # past the frozen tape's end
    runtime.unseal_feed(FORWARD_ID)
    for principal, sid in sessions.items():
        proof = runtime.proof(principal, sid, embed_tape=True).to_json()
        assert "remaining" not in proof["head"]["clock"]  # its frames were served sealed
        write(tmp_path / "proofs" / f"{principal}.json", proof)
    rows = {Path(row.source).stem: row for row in build_board([tmp_path / "proofs"]).rows}
    stopped = "stopped at bar 3 of 61: the session did not trade its whole window"
    assert rows["alice"].checks["whole-window"] == f"failed: {stopped}"
    assert rows["alice"].badge == "failed"
    assert "whole-window" not in rows["bob"].checks, rows["bob"].reason
    assert rows["bob"].badge != "failed", rows["bob"].reason
