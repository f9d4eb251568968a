"""One horizon per principal across door replicas on one PostgreSQL store (issue 45).

The stale order: replica B serves a read of alice's scout session at bar 0 (B now holds
it in memory), the scout runs to the tape's end through replica A, then alice opens her
trading session through B and trades there. B must take the scout's clock from the
store, not from its own copy: the trader's grade fails ``no-lookahead`` naming the
scout, and the statement B signs says so.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from kestrel_protocol import GradeResult, canonical_json

from tests.kestrel_door.test_attested import SCENARIO, Replicas, _statement, _verify

END = 2519  # acme-chop's last bar


def test_a_scout_cached_by_one_replica_and_run_on_another_fails_the_trader(
    replicas: Replicas, tmp_path: Path
) -> None:
    a, b = replicas.a, replicas.b
    with httpx.Client(headers={"Authorization": f"Bearer {replicas.token}"}, timeout=120) as http:
        opened = http.post(a + "/v1/sessions", json={"scenario": SCENARIO, "label": "scout"})
        scout = opened.json()["sessionId"]
        peek = http.get(f"{b}/v1/sessions/{scout}/frame")
        assert peek.json()["frame"]["clock"]["bar"] == 0, peek.text  # B holds it at bar 0
        ran = http.post(f"{a}/v1/sessions/{scout}/submit", json={"source": f"advance {END}"})
        assert ran.json()["delivery"]["frame"]["clock"]["bar"] == END, ran.text
        opened = http.post(b + "/v1/sessions", json={"scenario": SCENARIO, "label": "trade"})
        trader = opened.json()["sessionId"]
        traded = http.post(
            f"{b}/v1/sessions/{trader}/submit", json={"source": "buy 10 ACME\nadvance 1"}
        )
        assert traded.status_code == 200, traded.text
        proof = http.get(f"{b}/v1/sessions/{trader}/proof").json()

    grade = GradeResult.parse(proof["grade"])
    check = next(c for c in grade.conformance.checks if c.id == "no-lookahead")
    assert not check.passed
    assert check.detail.startswith(
        f"session {scout} of the same principal had reached bar {END} before submission 1 at bar 0"
    )
    assert not grade.passed
    predicate = _statement(proof)["predicate"]
    assert predicate["session"] == trader
    assert predicate["noLookahead"] == {"passed": False, "detail": check.detail}

    path = tmp_path / "proof.json"
    path.write_bytes(canonical_json(proof) + b"\n")
    # trusted from B, the replica that signed it (each replica here is its own issuer URL)
    done = _verify(tmp_path, str(path), "--trust", b, "--require-catalog")
    assert done.returncode == 0, done.stderr  # a genuine statement, of the failure above
