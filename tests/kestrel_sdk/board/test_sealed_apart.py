"""A scenario sealed for some entrants and not for one (issue 48): alice is graded on
acme-chop by a door that seals it; the same door, unsealed and restarted, grades
mallory on it (its frames told mallory the tape's length). Both statements hold under
the door's keys, and the board ranked them in one ranking, counted overall. Now the
unsealed run is ranked apart (``unsealed``), not counted overall, and the page says why."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door.cli import door_group
from kestrel_sdk import published_board, published_document

from tests.doors import SCOPES, serve_door
from tests.kestrel_sdk.board.proofs import door_proof

METADATA = "/.well-known/oauth-protected-resource"
GOOD = ("buy 100 ACME", "advance 40", "sell 100 ACME", "advance 3000")
POOR = ("buy 600 ACME", "advance 200", "sell 600 ACME", "advance 3000")


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    """The door's board of alice's sealed run and mallory's unsealed one (JSON, page)."""
    root = tmp_path_factory.mktemp("apart")
    with serve_door(root / "door", "--seal", "acme-chop", principal="alice") as door:
        alice = door_proof(door.url, door.token, "acme-chop", GOOD)
        keys_uri = httpx.get(door.url + METADATA).json()["kestrel_grade_keys_uri"]
        jwks = httpx.get(keys_uri).json()
    issued = CliRunner().invoke(
        door_group,
        ["--home", str(door.home), "token", "issue", "--principal", "mallory", "--scope", SCOPES],
    )
    mallory_token = issued.output.strip().splitlines()[-1]
    unseal = CliRunner().invoke(door_group, ["--home", str(door.home), "unseal", "acme-chop"])
    assert unseal.exit_code == 0, unseal.output  # the store keeps --seal: every door seals
    with serve_door(root / "door", principal="alice") as unsealed:
        mallory = door_proof(unsealed.url, mallory_token, "acme-chop", POOR)
    document = published_document([("alice", alice), ("mallory", mallory)])
    built = published_board(document, jwks)
    data: dict[str, Any] = json.loads(built.json)
    return data, built.html


def test_an_unsealed_run_is_ranked_apart_and_not_counted(
    board: tuple[dict[str, Any], str],
) -> None:
    data, html = board
    rows = {r["agent"]: r for r in data["rows"]}
    assert rows["alice"]["badge"] == "attested-and-sealed"
    assert rows["mallory"]["attestation"].endswith("; not sealed")
    sealed, unsealed = data["scenarios"]
    assert [c["agent"] for c in sealed["cells"]] == ["alice"]
    assert sealed["countsOverall"] is True
    assert "unsealed" not in sealed
    assert [c["agent"] for c in unsealed["cells"]] == ["mallory"]
    assert unsealed["unsealed"] is True
    assert unsealed["countsOverall"] is False
    assert [s["agent"] for s in data["overall"]] == ["alice"]
    assert rows["alice"]["rank"] == rows["mallory"]["rank"] == 1  # each in its own ranking
    assert "not sealed: graded while the scenario was not sealed, ranked apart" in html
