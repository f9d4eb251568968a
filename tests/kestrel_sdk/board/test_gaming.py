"""The board played by a cheater (issue 45, item 2): a proof copied into a second agent's
folder, invented scenarios, a door's proof stripped of its statement and re-rooted, and
files written to break the run. Each attack ranked, or crashed the board, before."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_sdk.board import MAX_DEPTH, MAX_FILE_BYTES

from tests.doors import issue_token, serve_door
from tests.kestrel_sdk.board.proofs import (
    door_proof,
    invented_proof,
    made_proof,
    stripped_and_rerooted,
    write,
)
from tests.kestrel_sdk.board.test_board import BOLD, CAUTIOUS, kestrel

METADATA = "/.well-known/oauth-protected-resource"
SCOPES = "kestrel:read kestrel:trade kestrel:grade"
BRAVE = ("buy 500 ACME", "advance 2000", "sell 500 ACME", "advance 3000")


def _principal(proof: dict[str, Any]) -> str:
    statement = json.loads(base64.b64decode(proof["attestation"]["payload"]))
    principal: str = statement["predicate"]["principal"]
    assert principal.startswith("p_")
    return principal


@pytest.fixture(scope="module")
def trusted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """alice's two attested proofs (acme-chop sealed, acme-trend not), mallory's folder
    holding a copy of alice's acme-chop proof, and the forger's acme-trend proof: traded
    through the same door while reading the whole tape, then stripped of its statement and
    re-rooted to say it saw nothing. The door's keys in a file; alice's principal."""
    root = tmp_path_factory.mktemp("gamed")
    folder = root / "proofs"
    with serve_door(root / "door", "--seal", "acme-chop", principal="alice") as door:
        chop = door_proof(door.url, door.token, "acme-chop", CAUTIOUS)
        trend = door_proof(door.url, door.token, "acme-trend", BOLD)
        peeked = door_proof(
            door.url, issue_token(door.home, "forger", SCOPES), "acme-trend", BRAVE, peek=True
        )
        keys_uri = httpx.get(door.url + METADATA).json()["kestrel_grade_keys_uri"]
        jwks = root / "door-keys.json"
        jwks.write_text(httpx.get(keys_uri).text, encoding="utf-8")
    write(folder / "alice" / "chop.json", chop)
    write(folder / "alice" / "trend.json", trend)
    write(folder / "mallory" / "chop.json", chop)  # the stolen copy
    write(folder / "forger" / "trend.json", stripped_and_rerooted(peeked))
    return folder, jwks, _principal(chop)


def _board(*args: str) -> dict[str, Any]:
    done = kestrel("board", "--allow-failed", *args, "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _by_place(board: dict[str, Any], folder: Path) -> dict[str, dict[str, Any]]:
    return {str(Path(r["source"]).relative_to(folder)): r for r in board["rows"]}


def test_a_copied_proof_ranks_once_credited_to_its_principal_and_flagged(
    trusted: tuple[Path, Path, str],
) -> None:
    folder, jwks, alice = trusted
    board = _board(str(folder), "--trust", str(jwks))
    rows = _by_place(board, folder)
    original, copy = rows["alice/chop.json"], rows["mallory/chop.json"]
    places = [str(folder / "alice" / "chop.json"), str(folder / "mallory" / "chop.json")]
    assert (original["rank"], copy["rank"]) == (1, None)
    for row in (original, copy):
        assert row["badge"] == "attested-and-sealed"
        assert row["agent"] == alice  # the statement's principal, not the folder
        assert row["duplicates"] == places  # every place it appeared
    assert copy["filedUnder"] == "mallory"
    assert copy["unranked"].startswith(f"a copy: the same proof as {places[0]} (ranked once")
    [chop] = [s for s in board["scenarios"] if s["scenario"] == "acme-chop"]
    assert [r["source"] for r in chop["ranking"]] == [places[0]]
    # overall: alice once, with her two scenarios; mallory is nowhere
    assert [(s["agent"], s["scenarios"], s["proofs"]) for s in board["overall"]] == [(alice, 2, 2)]


def test_a_copy_without_trust_is_ranked_once_too(
    trusted: tuple[Path, Path, str], tmp_path: Path
) -> None:
    folder, _, _ = trusted
    proof = json.loads((folder / "alice" / "trend.json").read_bytes())
    write(tmp_path / "alice" / "trend.json", proof)
    write(tmp_path / "thief" / "trend.json", proof)
    rows = _by_place(_board(str(tmp_path)), tmp_path)
    assert [rows[p]["rank"] for p in ("alice/trend.json", "thief/trend.json")] == [1, None]
    assert rows["thief/trend.json"]["duplicates"] == [
        str(tmp_path / "alice" / "trend.json"),
        str(tmp_path / "thief" / "trend.json"),
    ]


def test_under_trust_a_stripped_and_rerooted_proof_is_listed_apart_unranked(
    trusted: tuple[Path, Path, str], tmp_path: Path
) -> None:
    folder, jwks, alice = trusted
    forged = folder / "forger" / "trend.json"
    # replay alone passes it (its grade passes, and beats alice's); --trust rejects it
    assert kestrel("verify", str(forged)).returncode == 0
    assert kestrel("verify", str(forged), "--trust", str(jwks)).returncode != 0
    page = tmp_path / "board.html"
    done = kestrel(
        "board", "--allow-failed", str(folder), "--trust", str(jwks), "--json", "-o", str(page)
    )
    assert done.returncode == 0, done.stderr
    board = json.loads(done.stdout)
    row = _by_place(board, folder)["forger/trend.json"]
    assert (row["badge"], row["passed"], row["rank"]) == ("replayed-only", True, None)
    assert board["ranks"] == "attested"
    assert row["unranked"].startswith("not attested: under --trust only proofs whose grade")
    [trend] = [s for s in board["scenarios"] if s["scenario"] == "acme-trend"]
    assert [r["agent"] for r in trend["ranking"]] == [alice]  # attested, though not sealed
    assert {"source": str(forged), "agent": "forger", "why": row["unranked"]} in board["unranked"]
    html = page.read_text(encoding="utf-8")
    apart = html[html.index('id="unranked"') : html.index('id="proofs"')]
    assert f'data-unranked="{forged}"' in apart
    assert "not attested" in apart
    # without --trust the same proof is ranked: the board ranks what replay proves
    plain = _by_place(_board(str(folder)), folder)["forger/trend.json"]
    assert plain["rank"] == 1


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return made_proof(tmp_path_factory.mktemp("honest"), "acme-chop", CAUTIOUS)


def test_invented_scenarios_do_not_count_overall(honest: dict[str, Any], tmp_path: Path) -> None:
    write(tmp_path / "honest" / "chop.json", honest)
    for name in ("moonshot", "rocket"):  # two groups of one, each won by its inventor
        write(tmp_path / "inventor" / f"{name}.json", invented_proof(tmp_path / name, name))
    board = _board(str(tmp_path))
    assert [(s["rank"], s["agent"], s["scenarios"]) for s in board["overall"]] == [(1, "honest", 1)]
    counted = {s["scenario"]: s["countsOverall"] for s in board["scenarios"]}
    assert counted == {"acme-chop": True, "moonshot": False, "rocket": False}
    rows = _by_place(board, tmp_path)
    for name in ("moonshot", "rocket"):
        row = rows[f"inventor/{name}.json"]
        assert (row["badge"], row["provenance"], row["rank"]) == ("replayed-only", "embedded", 1)
    # --require-catalog fails them outright
    strict = _by_place(_board(str(tmp_path), "--require-catalog"), tmp_path)
    assert strict["inventor/moonshot.json"]["badge"] == "failed"


def test_bad_files_are_rows_and_the_board_is_still_written(
    honest: dict[str, Any], tmp_path: Path
) -> None:
    folder = tmp_path / "proofs"
    write(folder / "honest" / "chop.json", honest)
    bad = folder / "saboteur"
    bad.mkdir()
    (bad / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    nested: Any = {}
    for _ in range(MAX_DEPTH * 4):
        nested = {"x": nested}
    (bad / "nested.json").write_text(json.dumps({**honest, "grade": nested}), encoding="utf-8")
    with (bad / "huge.json").open("wb") as huge:
        huge.truncate(MAX_FILE_BYTES + 1)  # sparse: never read
    (bad / "latin.json").write_bytes('{"kind": "kestrel.proof", "name": "Zoë"}'.encode("latin-1"))
    (bad / "nan.json").write_text('{"kind": "kestrel.proof", "pnl": NaN}', encoding="utf-8")
    (bad / os.fsdecode(b"\xff.json")).write_text("{}", encoding="utf-8")  # not a UTF-8 name
    lone = '{"kind": "kestrel.proof", "scenario": {"id": "\\ud800", "root": "sha256:0"}}'
    (bad / "surrogate.json").write_text(lone, encoding="utf-8")  # JSON may spell one
    garbage = bad / "garbage"
    garbage.mkdir()
    for i in range(3):
        (garbage / f"{i}.json").write_bytes(bytes(range(256)) * (i + 1))
    (garbage / "log.eval").write_bytes(b"PK\x03\x04 not a zip")
    page = tmp_path / "board.html"
    done = kestrel("board", "--allow-failed", str(folder), "--json", "-o", str(page))
    assert done.returncode == 0, done.stderr
    rows = _by_place(json.loads(done.stdout), folder)
    assert rows["honest/chop.json"]["rank"] == 1
    why = {name: row["reason"] for name, row in rows.items() if name.startswith("saboteur/")}
    assert why["saboteur/deep.json"] == (
        f"nested deeper than {MAX_DEPTH} levels: not a Kestrel proof"
    )
    assert why["saboteur/nested.json"] == why["saboteur/deep.json"]
    assert why["saboteur/huge.json"] == (
        f"too large: {MAX_FILE_BYTES + 1} bytes (a board reads files of at most "
        f"{MAX_FILE_BYTES} bytes)"
    )
    assert why["saboteur/latin.json"] == "not UTF-8 text: byte 0xeb at offset 37"
    assert why["saboteur/nan.json"].startswith("not readable JSON: NaN is not JSON")
    for i in range(3):
        assert why[f"saboteur/garbage/{i}.json"].startswith("not UTF-8 text: byte 0x80")
    assert "saboteur/garbage/log.eval" in why
    assert why["saboteur/\\xff.json"] == "not a Kestrel proof or an Inspect log"
    assert why["saboteur/surrogate.json"].startswith("UNKNOWN_SCENARIO: ")
    for name in why:
        assert (rows[name]["badge"], rows[name]["rank"]) == ("failed", None)
    html = page.read_text(encoding="utf-8")
    for name in why:
        assert f'data-source="{folder / name}"' in html
