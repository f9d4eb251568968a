"""A sealed scenario is served under a neutral id (issue 46): ``acme-crash`` tells an
agent what comes, so ``kestrel-door serve --seal acme-crash=tape-9`` serves it only as
``tape-9``, titled ``Sealed scenario``, whose description names nothing.

A door process seals ``acme-crash=tape-9``; an agent trades ``tape-9`` over ``/mcp`` and
``/v1``; every response of every face in that session (tools/list, the catalog, the
scenario, resources, prompts, completions, refusals, proofs, signed statements decoded)
holds neither ``acme-crash``, nor its title's words, nor its description; asking for
``acme-crash`` is refused exactly as for an id the catalog lacks. After the evaluation
the operator publishes the served copy (``kestrel scenario sealed-copy``) and the proof
verifies in an empty home with ``--require-catalog`` and ``--trust``. Scouting
``acme-crash`` and then trading ``tape-9`` fails ``no-lookahead`` naming the twin.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_door.attest import JWKS_PATH
from kestrel_protocol import GradeResult
from kestrel_protocol.surface import SURFACE
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog import load_catalog

from tests.doors import serve_door

SOURCE, SERVED = "acme-crash", "tape-9"


def _forbidden() -> list[str]:
    """What names the source: its id, its title, its description, and the words of them
    that tell what comes."""
    shipped = load_catalog([]).get(SOURCE)
    assert shipped is not None
    scenario = shipped.scenario
    told = ["crash", "recovery", "halves"]
    assert all(word in f"{scenario.title} {scenario.description}" for word in told)
    return [SOURCE, scenario.title, scenario.description, *told]


def _decoded(body: str) -> str:
    """``body`` with every signed statement it carries decoded beside it."""
    payloads = re.findall(r'"payload":\s*"([A-Za-z0-9+/=]+)"', body)
    return "\n".join([body, *(base64.b64decode(p).decode("utf-8") for p in payloads)])


def _kestrel(home: Path, catalog: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    """``kestrel`` in ``home`` (empty), with ``catalog`` as its only user catalog."""
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(home), "KESTREL_HOME": str(home / ".kestrel")}
    env.pop("KESTREL_CATALOG_PATH", None)
    if catalog is not None:
        env["KESTREL_CATALOG_PATH"] = str(catalog)
    command = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()"]
    return subprocess.run(
        [*command, *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_a_door_sealing_acme_crash_as_tape_9_names_it_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KESTREL_CATALOG_PATH", raising=False)
    bodies: list[tuple[str, str]] = []
    with serve_door(tmp_path / "door", "--seal", f"{SOURCE}={SERVED}") as door:
        auth = {"Authorization": f"Bearer {door.token}"}
        with httpx.Client(base_url=door.url, headers=auth, timeout=120) as http:

            def mcp(method: str, params: dict[str, Any]) -> Any:
                message = {"jsonrpc": "2.0", "id": len(bodies), "method": method, "params": params}
                response = http.post("/mcp", json=message)
                bodies.append((f"/mcp {method} {params}", response.text))
                return response.json()

            def v1(method: str, path: str, body: Any = None) -> httpx.Response:
                response = http.request(method, path, json=body)
                bodies.append((f"/v1 {method} {path}", response.text))
                return response

            def tool(name: str, **arguments: Any) -> Any:
                return mcp("tools/call", {"name": name, "arguments": arguments})

            info = {"name": "agent", "version": "1"}
            mcp(
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info},
            )
            mcp("tools/list", {})
            catalog = tool("kestrel_catalog")["result"]["structuredContent"]
            ids = [entry["id"] for entry in catalog["scenarios"]]
            assert SERVED in ids
            assert SOURCE not in ids
            tool("kestrel_scenario", scenario=SERVED)
            opened = tool("kestrel_session_open", scenario=SERVED, label="mcp")
            sid = opened["result"]["structuredContent"]["sessionId"]
            tool("kestrel_session_submit", sessionId=sid, source="buy 5 ACME\nadvance 40")
            tool("kestrel_session_submit", sessionId=sid, source="buy 1 NOPE\nadvance 1")
            tool("kestrel_session_history", sessionId=sid, bars=1000)
            # the source is unknown here, as an id the catalog never had
            refused = tool("kestrel_session_open", scenario=SOURCE)
            unknown = tool("kestrel_session_open", scenario="never-was")
            assert refused["result"]["isError"] is True
            assert json.dumps(refused["result"]).replace(SOURCE, "X") == json.dumps(
                unknown["result"]
            ).replace("never-was", "X")
            bodies.pop(-2)  # the refusal for the source names what was asked, as it must

            v1("GET", "/v1/catalog")
            v1("GET", f"/v1/catalog/scenarios/{SERVED}")
            assert v1("GET", f"/v1/catalog/scenarios/{SERVED}/tape").status_code == 403
            other = v1("POST", "/v1/sessions", {"scenario": SERVED, "label": "v1"}).json()
            step = v1("POST", f"/v1/sessions/{other['sessionId']}/submit", {"source": "advance 30"})
            assert step.status_code == 200, step.text
            assert step.json()["delivery"]["frame"]["scenario"]["id"] == SERVED
            known = {"id": SERVED, "scenario": SERVED, "sessionId": sid}
            mcp("resources/list", {})
            mcp("resources/templates/list", {})
            for resource in SURFACE.resources:
                if set(resource.variables) <= set(known):
                    uri = resource.expand(**{v: known[v] for v in resource.variables})
                    mcp("resources/read", {"uri": uri})
                for variable in resource.complete:
                    ref = {"type": "ref/resource", "uri": resource.uri}
                    argument = {"name": variable, "value": ""}
                    mcp("completion/complete", {"ref": ref, "argument": argument})
            mcp("prompts/list", {})
            for prompt in SURFACE.prompts:
                given = {a.name: known.get(a.name, "") for a in prompt.arguments if a.required}
                mcp("prompts/get", {"name": prompt.name, "arguments": given})
                for prompt_argument in prompt.arguments:
                    if prompt_argument.complete is not None:
                        ref = {"type": "ref/prompt", "name": prompt.name}
                        argument = {"name": prompt_argument.name, "value": ""}
                        mcp("completion/complete", {"ref": ref, "argument": argument})
            tool("kestrel_grade", sessionId=sid)
            proof = v1("GET", f"/v1/sessions/{sid}/proof")
            assert proof.status_code == 200, proof.text
            jwks = http.get(JWKS_PATH).json()

    forbidden = [word.lower() for word in _forbidden()]
    for where, body in bodies:
        text = _decoded(body).lower()
        found = [word for word in forbidden if word in text]
        assert not found, (where, found, body[:300])
    joined = "\n".join(_decoded(body) for _, body in bodies)
    assert "SCENARIO_SEALED" in joined  # the tape was asked for, and refused
    assert "unknown symbol 'NOPE'" in joined  # refusals were seen
    assert "https://in-toto.io/Statement/v1" in joined  # the proof was signed
    assert f'"id":"{SERVED}"' in joined.replace(" ", "")
    assert len(bodies) > 25

    # after the evaluation: the operator publishes the served copy; a verifier with it
    # (and nothing else) replays the proof, and trusts the door's signature
    (tmp_path / "proof.json").write_text(proof.text)
    (tmp_path / "jwks.json").write_text(json.dumps(jwks))
    args = ("verify", str(tmp_path / "proof.json"), "--require-catalog")
    trust = ("--trust", str(tmp_path / "jwks.json"))
    without = _kestrel(tmp_path / "verifier", None, *args)
    assert without.returncode != 0
    assert SERVED in without.stderr + without.stdout
    operator = _kestrel(tmp_path / "operator", None, "scenario", "sealed-copy", SOURCE)
    assert operator.returncode != 0  # --as is required
    published = tmp_path / "published"
    made = _kestrel(
        tmp_path / "operator",
        None,
        *("scenario", "sealed-copy", SOURCE, "--as", SERVED, "--out", str(published / SERVED)),
    )
    assert made.returncode == 0, made.stderr
    verified = _kestrel(tmp_path / "verifier", published, *args, *trust)
    assert verified.returncode == 0, verified.stderr
    assert f"scenario {SERVED}" in verified.stdout
    assert "attested by" in verified.stdout


def _traded_proof(runtime: Runtime, principal: str) -> dict[str, Any]:
    sid = runtime.open_session(principal, SERVED).session_id
    assert sid is not None
    runtime.submit(principal, sid, "advance 5")
    runtime.submit(principal, sid, "buy 3 ACME\nadvance 20")
    assert isinstance(runtime.grade(principal, sid), GradeResult)
    proof: dict[str, Any] = runtime.proof(principal, sid).to_json()
    return proof


def test_scouting_acme_crash_then_trading_tape_9_fails_no_lookahead_naming_it(
    tmp_path: Path,
) -> None:
    """The same principal on one store: a local runtime serves ``acme-crash`` unsealed,
    a door's runtime seals it as ``tape-9``; the copy shares the source's lineage."""
    scout = Runtime(tmp_path / "home")
    scout.tape("mallory", SOURCE)  # the labelled tape, read whole
    scout.shutdown()
    sealing = Runtime(tmp_path / "home", sealed=[f"{SOURCE}={SERVED}"])
    proof = _traded_proof(sealing, "mallory")
    check = {c["id"]: c for c in proof["grade"]["conformance"]["checks"]}["no-lookahead"]
    assert check["passed"] is False, check
    assert check["detail"].startswith(f"tape {SOURCE} read before submission 1"), check
    assert proof["scenario"]["id"] == SERVED
    honest = _traded_proof(sealing, "alice")  # another principal passes
    assert {c["id"]: c for c in honest["grade"]["conformance"]["checks"]}["no-lookahead"][
        "passed"
    ] is True
    sealing.shutdown()


def test_a_served_id_naming_the_scenario_is_refused(tmp_path: Path) -> None:
    """``acme-crash=acme-crash-2`` would serve an id telling what comes, the thing the
    neutral id is for: refused by a runtime (the door's ``--seal`` reads it so too) and by
    ``kestrel scenario sealed-copy``, naming it, nothing written; ``tape-9`` is served."""
    with pytest.raises(ValueError, match=r"the served id 'acme-crash-2' names the scenario"):
        Runtime(tmp_path / "home", sealed=[f"{SOURCE}=acme-crash-2"])
    out = tmp_path / "copy"
    made = _kestrel(
        tmp_path / "operator",
        None,
        *("scenario", "sealed-copy", SOURCE, "--as", "acme-crash-2", "--out", str(out)),
    )
    assert made.returncode == 1, made
    assert "the served id 'acme-crash-2' names the scenario (acme-crash)" in made.stderr
    assert not out.exists()
    runtime = Runtime(tmp_path / "home", sealed=[f"{SOURCE}={SERVED}"])
    assert runtime.sealed(SERVED)
    runtime.shutdown()
