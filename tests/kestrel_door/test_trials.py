"""Trial principals at a door (issue 50): the evaluator's harness gets a principal per run
of an agent; the agent cannot get one through anything it holds.

A real ``kestrel-door serve`` on loopback. The evaluator's token (``kestrel:trials``)
mints trials at ``POST /v1/trials``; the trial's token trades as ``PARENT/trial-NAME``
under its own horizon. The attacks: the agent's own kind of token (no
``kestrel:trials``), and a trial's token, try to mint a fresh principal (to scout a tape
under one and trade under another) and are refused; no tool of the agent's face takes a
principal or mints one; a parent cannot revoke another's trial; a revoked trial is dead.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner
from kestrel_door.cli import door_group
from kestrel_protocol.surface import TOOLS

from tests.doors import Door, serve_door

SCENARIO = "acme-chop"
AGENT_SCOPES = "kestrel:read kestrel:trade kestrel:grade"


def _cli(home: Path, *args: str) -> str:
    done = CliRunner().invoke(door_group, ["--home", str(home), *args])
    assert done.exit_code == 0, done.output
    return done.output


def _issue(door: Door, principal: str, scopes: str) -> str:
    return _cli(door.home, "token", "issue", "--principal", principal, "--scope", scopes).split()[
        -1
    ]


def _mint(door: Door, token: str, name: str) -> httpx.Response:
    return httpx.post(
        f"{door.url}/v1/trials",
        json={"trial": name},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _open_and_step(door: Door, token: str, bars: int) -> dict[str, Any]:
    opened = httpx.post(
        f"{door.url}/v1/sessions", json={"scenario": SCENARIO}, headers=_auth(token), timeout=60
    )
    assert opened.status_code == 200, opened.text
    sid = opened.json()["sessionId"]
    done = httpx.post(
        f"{door.url}/v1/sessions/{sid}/submit",
        json={"source": f"advance {bars}"},
        headers=_auth(token),
        timeout=60,
    )
    assert done.status_code == 200, done.text
    proof = httpx.get(f"{door.url}/v1/sessions/{sid}/proof", headers=_auth(token), timeout=120)
    assert proof.status_code == 200, proof.text
    data: dict[str, Any] = proof.json()
    return data


def _pseudonym(proof: dict[str, Any]) -> str:
    """The principal the door's signed statement about the grade names (a ``p_…``)."""
    statement = json.loads(base64.b64decode(proof["attestation"]["payload"]))
    return str(statement["predicate"]["principal"])


def _refused_for_scope(response: httpx.Response) -> None:
    assert response.status_code == 403, response.text
    refusal = response.json()["refusal"]
    assert refusal["code"] == "FORBIDDEN"
    assert refusal["detail"]["requiredScope"] == "kestrel:trials"
    assert 'scope="kestrel:trials"' in response.headers["www-authenticate"]


def test_only_the_evaluators_token_mints_trials_and_a_trial_cannot(tmp_path: Path) -> None:
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        agent = _issue(door, "evaluator", AGENT_SCOPES)
        # the agent's kind of token (every tool scope, no kestrel:trials) cannot mint
        _refused_for_scope(_mint(door, agent, "scout"))
        # the evaluator's can: a new principal, the parent's tool scopes, never trials
        made = _mint(door, door.token, "acme-chop-e1")
        assert made.status_code == 201, made.text
        trial = made.json()
        assert trial["principal"] == "evaluator/trial-acme-chop-e1"
        assert trial["scopes"] == ["kestrel:grade", "kestrel:read", "kestrel:trade"]
        assert trial["token"].startswith("kestrel_tok_")
        # a bearer token in the body: no cache or proxy may keep it (RFC 6749 5.1)
        assert made.headers["cache-control"] == "no-store"
        # the trial's own token trades, and cannot mint a fresh principal for itself
        _refused_for_scope(_mint(door, trial["token"], "scout"))
        # nor revoke its parent's other trials, nor itself
        other = _mint(door, door.token, "acme-chop-e2").json()
        gone = httpx.delete(
            f"{door.url}/v1/trials/{other['tokenId']}", headers=_auth(trial["token"]), timeout=30
        )
        _refused_for_scope(gone)
        # a bad name is refused, naming the rule
        bad = _mint(door, door.token, "../admin")
        assert bad.status_code == 400
        assert bad.json()["refusal"]["code"] == "INVALID_ARGUMENT"
        assert '{"trial": NAME}' in bad.json()["refusal"]["message"]
        # what the token list and the audit say: the trial's scopes, its parent
        listed = {r["principal"]: r for r in json.loads(_cli(door.home, "token", "list", "--json"))}
        assert listed["evaluator/trial-acme-chop-e1"]["scopes"] == trial["scopes"]
        assert listed["evaluator/trial-acme-chop-e1"]["label"] == "trial of evaluator"
        audit = json.loads(_cli(door.home, "audit", "--principal", "evaluator", "--json"))
        assert [r["tool"] for r in audit if r["tool"].startswith("trials.")] == [
            "trials.mint",
            "trials.mint",
        ]
    # the agent reaches Kestrel only through the face's tools: none takes a principal,
    # and none mints a trial (the mint is an HTTP route, for the evaluator's token)
    for tool in TOOLS:
        schema = json.dumps(tool.arguments.model_json_schema()).lower()
        assert "principal" not in schema, tool.name
        assert "trial" not in tool.name, tool.name
        assert "token" not in tool.name, tool.name


def test_a_trial_has_its_own_horizon_and_ends_when_revoked(tmp_path: Path) -> None:
    """The parent scouts acme-chop to bar 400; a trial of it opens acme-chop afresh and
    passes no-lookahead; a second session of the same trial past the first fails it (the
    horizon covers the trial as it covers any principal). Revoked, the trial is dead."""
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        scout = _open_and_step(door, door.token, 400)
        trial = _mint(door, door.token, "run-1").json()
        first = _open_and_step(door, trial["token"], 100)
        checks = {c["id"]: c for c in first["grade"]["conformance"]["checks"]}
        assert checks["no-lookahead"]["passed"], checks["no-lookahead"]
        # the door's statements name distinct pseudonyms for the parent and the trial
        assert _pseudonym(scout).startswith("p_")
        assert _pseudonym(scout) != _pseudonym(first)
        second = _open_and_step(door, trial["token"], 50)
        checks = {c["id"]: c for c in second["grade"]["conformance"]["checks"]}
        assert not checks["no-lookahead"]["passed"]
        assert "of the same principal had reached bar 100" in checks["no-lookahead"]["detail"]
        # revoked by its parent, the trial's token opens nothing more
        url = f"{door.url}/v1/trials/{trial['tokenId']}"
        assert httpx.delete(url, headers=_auth(door.token), timeout=30).status_code == 200
        again = httpx.post(
            f"{door.url}/v1/sessions",
            json={"scenario": SCENARIO},
            headers=_auth(trial["token"]),
            timeout=30,
        )
        assert again.status_code == 401
        # revoking it twice, or another parent's trial, is refused
        assert httpx.delete(url, headers=_auth(door.token), timeout=30).status_code == 404
        stranger = _issue(door, "stranger", AGENT_SCOPES + " kestrel:trials")
        theirs = _mint(door, door.token, "run-2").json()
        foreign = httpx.delete(
            f"{door.url}/v1/trials/{theirs['tokenId']}", headers=_auth(stranger), timeout=30
        )
        assert foreign.status_code == 404
