"""One display name, many signed identities (issue 48): a board credits a row to the name
it was run or published under (``-T agent=NAME``, ``kestrel-door board publish --agent``)
before the principal the door's statement names. Two entrants who pick the same name
were one cell, their runs averaged; an entrant who names its own runs after a rival
(its name, or its ``p_…``) padded or sank the rival's cell. Under trust, a name that rows
of more than one signed identity carry is now kept apart: ``NAME (p_…)`` for each
identity but the one the name is."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from kestrel_sdk import published_board, published_document

from tests.doors import issue_token, serve_door
from tests.kestrel_sdk.board.proofs import door_proof

METADATA = "/.well-known/oauth-protected-resource"
GOOD = ("buy 100 ACME", "advance 40", "sell 100 ACME", "advance 3000")
POOR = ("buy 600 ACME", "advance 200", "sell 600 ACME", "advance 3000")


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """alice's run and mallory's (each its own principal) on acme-trend, and the door's keys."""
    root = tmp_path_factory.mktemp("names")
    with serve_door(root / "door", principal="alice") as served:
        alice = door_proof(served.url, served.token, "acme-trend", GOOD)
        mallory = door_proof(served.url, issue_token(served.home, "mallory"), "acme-trend", POOR)
        keys_uri = httpx.get(served.url + METADATA).json()["kestrel_grade_keys_uri"]
        jwks = httpx.get(keys_uri).json()
    return {"alice": alice, "mallory": mallory, "jwks": jwks}


def _board(door: dict[str, Any], items: list[tuple[str | None, str]]) -> dict[str, Any]:
    document = published_document([(agent, door[who]) for agent, who in items])
    board: dict[str, Any] = json.loads(published_board(document, door["jwks"]).json)
    return board


def _cells(board: dict[str, Any]) -> dict[str, int]:
    [trend] = board["scenarios"]
    return {c["agent"]: c["n"] for c in trend["cells"]}


def _pseudonym(door: dict[str, Any], who: str) -> str:
    [row] = _board(door, [(None, who)])["rows"]
    agent: str = row["agent"]
    assert agent.startswith("p_")
    return agent


def test_a_rivals_name_does_not_merge_two_entrants(door: dict[str, Any]) -> None:
    alice, mallory = _pseudonym(door, "alice"), _pseudonym(door, "mallory")
    board = _board(door, [("alice", "alice"), ("alice", "mallory")])
    assert _cells(board) == {f"alice ({alice})": 1, f"alice ({mallory})": 1}


def test_a_rivals_pseudonym_does_not_merge_either(door: dict[str, Any]) -> None:
    alice, mallory = _pseudonym(door, "alice"), _pseudonym(door, "mallory")
    board = _board(door, [(None, "alice"), (alice, "mallory")])
    assert _cells(board) == {alice: 1, f"{alice} ({mallory})": 1}
    assert [s["agent"] for s in board["overall"]] != [alice]


def test_one_identity_under_its_own_name_stays_one_cell(door: dict[str, Any]) -> None:
    board = _board(door, [("alice", "alice"), ("bob", "mallory")])
    assert _cells(board) == {"alice": 1, "bob": 1}


def test_a_copy_under_another_name_is_credited_to_its_signed_identity(
    door: dict[str, Any],
) -> None:
    """mallory files alice's proof under a name that sorts before alice's: the copy that
    came first was ranked under mallory's name."""
    alice = _pseudonym(door, "alice")
    board = _board(door, [("alice", "alice"), ("a-thief", "alice")])
    assert _cells(board) == {alice: 1}
    assert {r["agent"] for r in board["rows"]} == {alice, "alice"}


def test_a_proof_of_another_principals_session_shows_whose_it_was(
    door: dict[str, Any],
) -> None:
    """mallory publishes alice's proof alone under her own name (no row of alice's on the
    board to be a copy of): the row was credited to "mallory" and nothing on the board
    said the session was alice's. Now the row carries the signed identity, in JSON and
    on the page beside the name."""
    alice = _pseudonym(door, "alice")
    document = published_document([("mallory", door["alice"])])
    built = published_board(document, door["jwks"])
    [row] = json.loads(built.json)["rows"]
    assert (row["agent"], row["identity"]) == ("mallory", alice)
    assert f"mallory (signed identity {alice})" in built.html
    [own] = _board(door, [("mallory", "mallory")])["rows"]  # its own run: the same name
    assert own["identity"] != alice
