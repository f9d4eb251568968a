"""Attested grades through real doors (issue 32).

Two door processes (replicas A and B) on one PostgreSQL store, ``acme-chop`` sealed.
Alice opens a trading session on A, a scout session on B which she runs to the tape's
end, then trades on A: the trading session's ``no-lookahead`` fails naming the scout,
and the statement A signs about the grade says so. The proof verifies with
``kestrel verify --trust`` pointed at A's JWKS URL or address (the issuer it names), and
with B's JWKS saved to a file (one key set for every replica), in an empty home, once
both doors are stopped. Changing
one byte of the proof anywhere fails it. Re-rooting a ``lookahead`` edit (the record
says sealed and read nothing, every root recomputed) verifies by replay alone but fails
``--trust``, naming the statement's subject. ``kestrel-door keys rotate`` adds a key that
signs from then on and keeps the old one published.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door import JWKS_PATH
from kestrel_door.cli import door_group
from kestrel_protocol import (
    GradeResult,
    KestrelError,
    Pentad,
    Proof,
    SessionRecord,
    canonical_json,
)
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.engine import compute_grade
from kestrel_sdk.runtime.verify import verify_proof
from kestrel_sdk.trust import NotAttested, check_attestation

from tests.loopback import free_port, wait_for_http

SCENARIO = "acme-chop"
SCOPES = ("--scope", "kestrel:read", "--scope", "kestrel:trade", "--scope", "kestrel:grade")


def _door_cli(store: str, home: Path, *args: str) -> str:
    result = CliRunner().invoke(door_group, ["--home", str(home), "--store", store, *args])
    assert result.exit_code == 0, result.output
    return result.output


def _start(store: str, home: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [sys.executable, "-c", "from kestrel_door.cli import main; main()"]
    command += ["--home", str(home), "--store", store, "serve", "--port", str(port)]
    command += ["--seal", SCENARIO]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    wait_for_http(base + "/.well-known/oauth-protected-resource", proc)
    return proc, base


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a door by its pid (once; again is a no-op)."""
    if proc.returncode is None:
        proc.terminate()
        proc.communicate(timeout=20)


class Replicas:
    """Doors A and B on one store, alice's token, and a way to stop both."""

    def __init__(self, store: str, home: Path) -> None:
        token = _door_cli(store, home, "token", "issue", "--principal", "alice", *SCOPES)
        self.token = token.strip().splitlines()[-1]
        self.procs: list[subprocess.Popen[bytes]] = []
        try:
            self.a = self._start(store, home / "a")
            self.b = self._start(store, home / "b")
        except BaseException:
            self.stop()
            raise

    def _start(self, store: str, home: Path) -> str:
        proc, base = _start(store, home)
        self.procs.append(proc)
        return base

    def stop(self) -> None:
        for proc in self.procs:
            _stop(proc)


def _verify(tmp_path: Path, *args: str, offline: bool = False) -> subprocess.CompletedProcess[str]:
    """``kestrel verify`` in a new, empty home; ``offline``: every proxy points nowhere,
    so any fetch it made would fail."""
    home = tmp_path / "empty-home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "KESTREL_HOME": str(home / ".kestrel")}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        env.pop(name, None)
        env.pop(name.lower(), None)
    if offline:
        nowhere = "http://127.0.0.1:9"
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[name] = env[name.lower()] = nowhere
    command = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()", "verify"]
    return subprocess.run(
        [*command, *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _statement(proof: dict[str, Any]) -> dict[str, Any]:
    payload = base64.b64decode(proof["attestation"]["payload"])
    statement: dict[str, Any] = json.loads(payload)
    return statement


def _rerooted_as_sealed(proof: dict[str, Any]) -> dict[str, Any]:
    """The forger's edit: the record says sealed, nothing seen; every root recomputed
    (the grade by replay), the door's envelope kept."""
    loaded = load_catalog([]).get(proof["scenario"]["id"])
    assert loaded is not None
    record = SessionRecord.with_root(
        **{**proof["record"], "lookahead": {"sealed": True, "reads": []}}
    )
    pentads = [Pentad.parse(p) for p in proof["pentads"]]
    grade = compute_grade(loaded, record, pentads)
    members = {**proof, "record": record.to_json(), "grade": grade.to_json()}
    members.pop("attestation")
    forged = Proof.with_root(**members).to_json()
    return {**forged, "attestation": proof["attestation"]}


def test_a_scout_is_named_signed_and_verified_against_another_replica(
    replicas: Replicas, tmp_path: Path
) -> None:
    base_a, base_b, token = replicas.a, replicas.b, replicas.token
    auth = {"Authorization": f"Bearer {token}"}
    meta = httpx.get(base_a + "/.well-known/oauth-protected-resource").json()
    assert meta["kestrel_grade_keys_uri"] == base_a + JWKS_PATH
    with httpx.Client(headers=auth, timeout=120) as http:
        opened = http.post(base_a + "/v1/sessions", json={"scenario": SCENARIO, "label": "t"})
        trader = opened.json()["sessionId"]
        opened = http.post(base_b + "/v1/sessions", json={"scenario": SCENARIO, "label": "s"})
        scout = opened.json()["sessionId"]
        ran = http.post(f"{base_b}/v1/sessions/{scout}/submit", json={"source": "advance 2519"})
        assert ran.json()["delivery"]["frame"]["clock"]["bar"] == 2519, ran.text
        traded = http.post(
            f"{base_a}/v1/sessions/{trader}/submit", json={"source": "buy 10 ACME\nadvance 1"}
        )
        assert traded.status_code == 200, traded.text
        flat = http.post(
            f"{base_a}/v1/sessions/{trader}/submit", json={"source": "sell 10 ACME\nadvance 1"}
        )
        assert flat.status_code == 200, flat.text
        proof = http.get(f"{base_a}/v1/sessions/{trader}/proof").json()
        jwks_a = http.get(base_a + JWKS_PATH).json()
        jwks_b = http.get(base_b + JWKS_PATH).json()
    assert jwks_a == jwks_b  # one key set for every replica on the store
    [key] = jwks_b["keys"]
    assert (key["kty"], key["crv"], key["alg"]) == ("OKP", "Ed25519", "EdDSA")

    grade = GradeResult.parse(proof["grade"])
    check = next(c for c in grade.conformance.checks if c.id == "no-lookahead")
    expected = f"session {scout} of the same principal had reached bar 2519 before submission 1"
    assert not check.passed
    assert check.detail.startswith(expected + " at bar 0")
    statement = _statement(proof)
    predicate = statement["predicate"]
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["subject"][0]["digest"]["sha256"] == grade.root.removeprefix("sha256:")
    assert predicate["sealed"] is True
    assert predicate["noLookahead"] == {"passed": False, "detail": check.detail}
    assert predicate["session"] == trader
    assert predicate["issuer"] == base_a
    assert predicate["principal"].startswith("p_")
    assert "alice" not in json.dumps(statement)
    assert proof["attestation"]["signatures"][0]["keyid"] == key["kid"]

    path = tmp_path / "proof.json"
    path.write_bytes(canonical_json(proof) + b"\n")
    for trust in (base_a + JWKS_PATH, base_a):  # A's keys URL, or A's address alone
        done = _verify(tmp_path, str(path), "--trust", trust, "--require-catalog")
        assert done.returncode == 0, done.stderr
        assert f"attested by {base_a} (key {key['kid']})" in done.stdout
        assert f"provenance: catalog: scenario {SCENARIO}" in done.stdout
    (tmp_path / "jwks.json").write_text(json.dumps(jwks_b))

    forged = tmp_path / "forged.json"
    forged.write_bytes(canonical_json(_rerooted_as_sealed(proof)) + b"\n")
    replayed = _verify(tmp_path, str(forged), "--json")
    assert replayed.returncode == 0, replayed.stderr  # replay proves arithmetic only
    forged_grade = json.loads(forged.read_text())["grade"]
    assert forged_grade["passed"] is True
    trusted = _verify(tmp_path, str(forged), "--trust", base_a + JWKS_PATH)
    assert trusted.returncode != 0
    assert (
        f"verification failed: statement.subject: expected the replayed grade "
        f"{forged_grade['root']}, found {grade.root}"
    ) in trusted.stderr


def test_a_jwks_file_verifies_with_no_door_and_one_changed_byte_fails(
    replicas: Replicas, tmp_path: Path
) -> None:
    base_a, base_b, token = replicas.a, replicas.b, replicas.token
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
        sid = http.post(base_a + "/v1/sessions", json={"scenario": SCENARIO}).json()["sessionId"]
        http.post(f"{base_a}/v1/sessions/{sid}/submit", json={"source": "buy 5 ACME\nadvance 3"})
        proof = http.get(f"{base_a}/v1/sessions/{sid}/proof").json()
        jwks = http.get(base_b + JWKS_PATH).json()
    (tmp_path / "jwks.json").write_text(json.dumps(jwks))
    text = canonical_json(proof) + b"\n"
    (tmp_path / "proof.json").write_bytes(text)
    assert _statement(proof)["predicate"]["noLookahead"]["passed"] is True

    # both doors stopped; the keys from a file, in an empty home, every proxy pointing
    # nowhere (a fetch would fail)
    replicas.stop()
    with pytest.raises(httpx.TransportError):
        httpx.get(base_b + JWKS_PATH)
    trust = ("--trust", str(tmp_path / "jwks.json"))
    done = _verify(tmp_path, str(tmp_path / "proof.json"), *trust, offline=True)
    assert done.returncode == 0, done.stderr
    assert f"attested by {base_a} (key {jwks['keys'][0]['kid']})" in done.stdout

    index = load_catalog([])
    step = max(1, len(text) // 400)
    sig_at = text.index(b'"sig":"') + 8
    payload_at = text.index(b'"payload":"') + 12
    positions = sorted({*range(0, len(text), step), *range(sig_at, sig_at + 20)})
    positions += [payload_at + i for i in range(0, 400, 7)] + [len(text) - 2, len(text) - 1]
    sig_end = text.index(b'"', sig_at) - 1  # the signature's and payload's last characters
    payload_end = text.index(b'"', payload_at) - 1  # (padding bits: canonical base64 only)
    positions += [*range(sig_end - 3, sig_end + 1), *range(payload_end - 3, payload_end + 1)]
    for position in positions:
        changed = bytearray(text)
        changed[position] ^= 0x01
        assert not _holds(bytes(changed), index, jwks), position
    flipped = bytearray(text)
    flipped[sig_at + 5] ^= 0x01
    (tmp_path / "flipped.json").write_bytes(bytes(flipped))
    refused = _verify(
        tmp_path, str(tmp_path / "flipped.json"), "--trust", str(tmp_path / "jwks.json")
    )
    assert refused.returncode != 0
    assert "attestation.signatures[0].sig" in refused.stderr


def _holds(text: bytes, index: Any, jwks: dict[str, Any]) -> bool:
    """What ``kestrel verify --trust`` concludes of ``text``, in process."""
    try:
        data = json.loads(text)
        report = verify_proof(index, data)
        if not report.ok:
            return False
        check_attestation(data, jwks)
    except (ValueError, NotAttested, KeyError, TypeError, KestrelError):
        return False  # (UnicodeDecodeError is a ValueError; a refusal fails too)
    return True


def test_keys_rotate_adds_a_signer_and_keeps_the_old_key_published(
    postgres_dsn: str, tmp_path: Path
) -> None:
    token = _door_cli(postgres_dsn, tmp_path, "token", "issue", "--principal", "bob", *SCOPES)
    token = token.strip().splitlines()[-1]
    door, base = _start(postgres_dsn, tmp_path / "door")
    try:
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
            proofs = []
            for label in ("before", "after"):
                if label == "after":
                    out = _door_cli(postgres_dsn, tmp_path, "keys", "rotate")
                    assert out.startswith("signing with ")
                opened = http.post(
                    base + "/v1/sessions", json={"scenario": SCENARIO, "label": label}
                )
                sid = opened.json()["sessionId"]
                http.post(f"{base}/v1/sessions/{sid}/submit", json={"source": "advance 2"})
                proofs.append(http.get(f"{base}/v1/sessions/{sid}/proof").json())
            jwks = http.get(base + JWKS_PATH).json()
    finally:
        _stop(door)
    old, new = (p["attestation"]["signatures"][0]["keyid"] for p in proofs)
    assert old != new
    assert [k["kid"] for k in jwks["keys"]] == [old, new]
    assert json.loads(_door_cli(postgres_dsn, tmp_path, "keys", "list")) == jwks
    for proof in proofs:
        assert check_attestation(proof, jwks).kid in (old, new)
    with pytest.raises(NotAttested) as caught:
        check_attestation(proofs[0], {"keys": [k for k in jwks["keys"] if k["kid"] == new]})
    assert caught.value.field == "attestation.signatures[0].keyid"
