"""A trial's token ends with the issued token that minted it.

A real ``kestrel-door serve`` on loopback. The operator revokes the evaluator's token
(leaked, or the run over, its harness crashed before it revoked its trials): every trial
that token minted is refused from its next request on ``/mcp`` and ``/v1``, in the same
revoke; a trial another evaluator token of the same principal minted keeps working.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from click.testing import CliRunner
from kestrel_door.cli import door_group

from tests.doors import SCOPES, Door, answers, serve_door


def _cli(home: Path, *args: str) -> str:
    done = CliRunner().invoke(door_group, ["--home", str(home), *args])
    assert done.exit_code == 0, done.output
    return done.output


def _mint(door: Door, parent: str, name: str) -> dict[str, str]:
    made = httpx.post(
        f"{door.url}/v1/trials",
        json={"trial": name},
        headers={"Authorization": f"Bearer {parent}"},
        timeout=30,
    )
    assert made.status_code == 201, made.text
    trial: dict[str, str] = made.json()
    return trial


def _answers(door: Door, token: str) -> tuple[int, int]:
    """The status of ``GET /v1/catalog`` and of an MCP ``tools/list`` with ``token``."""
    v1, mcp = answers(door, token)
    return v1.status_code, mcp.status_code


def test_revoking_the_evaluators_token_revokes_every_trial_it_minted(tmp_path: Path) -> None:
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        issued = _cli(door.home, "token", "issue", "--principal", "evaluator", "--scope", SCOPES)
        second, other = issued.split()[1], issued.split()[-1]  # another evaluator token
        mine = [_mint(door, door.token, f"run-{n}") for n in range(2)]
        theirs = _mint(door, other, "run-9")
        for trial in [*mine, theirs]:
            assert _answers(door, trial["token"]) == (200, 200)
        listed = json.loads(_cli(door.home, "token", "list", "--json"))
        parents = {r["principal"]: r.get("parent") for r in listed}
        (first,) = (r["id"] for r in listed if r["principal"] == "evaluator" and r["id"] != second)
        assert parents == {
            "evaluator": None,
            "evaluator/trial-run-0": first,
            "evaluator/trial-run-1": first,
            "evaluator/trial-run-9": second,
        }
        assert f"parent {first}" in _cli(door.home, "token", "list")

        revoked = _cli(door.home, "token", "revoke", first)
        assert revoked == f"revoked {first} and 2 trials it minted\n"

        assert _answers(door, door.token) == (401, 401)
        for trial in mine:  # a trade token no longer: refused on every face
            assert _answers(door, trial["token"]) == (401, 401)
            gone = httpx.delete(
                f"{door.url}/v1/trials/{trial['tokenId']}",
                headers={"Authorization": f"Bearer {other}"},
                timeout=30,
            )
            assert gone.status_code == 404  # nothing live left to revoke
        assert _answers(door, theirs["token"]) == (200, 200)  # another parent's trial
        assert _answers(door, other) == (200, 200)
        states = {
            r["id"]: r["revokedAt"] for r in json.loads(_cli(door.home, "token", "list", "--json"))
        }
        assert [states[t["tokenId"]] is not None for t in [*mine, theirs]] == [True, True, False]

        # revoked by its parent first (its run scored), a trial is not counted again
        url = f"{door.url}/v1/trials/{theirs['tokenId']}"
        done = httpx.delete(url, headers={"Authorization": f"Bearer {other}"}, timeout=30)
        assert done.status_code == 200, done.text
        assert (
            _cli(door.home, "token", "revoke", second)
            == f"revoked {second} and 0 trials it minted\n"
        )
