"""Keys an operator can revoke, and a trusted source that must be the issuer (issue 45).

``kestrel-door keys revoke KID`` withdraws the key that signed a proof: the door's JWKS
lists it as revoked, and ``kestrel verify --trust`` fails the proof naming the
revocation, with the keys fetched from the live door and with them saved to a file. The
door still signs (a new key). A statement claiming the issuer ``https://a`` fails
against keys fetched from ``https://b`` (two doors on one store: one key set), and
``verify --trust`` says the source it trusted beside the issuer claimed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner, Result
from kestrel_door import JWKS_PATH, DoorStore
from kestrel_door.cli import door_group
from kestrel_protocol import canonical_json
from kestrel_sdk.cli import cli as kestrel_cli

from tests.doors import Door, serve_door

SCENARIO = "acme-chop"


def _proof(door: Door, label: str, path: Path) -> dict[str, Any]:
    """A proof of a new session of ``door``'s principal, written to ``path``."""
    with httpx.Client(timeout=120, headers={"Authorization": f"Bearer {door.token}"}) as http:
        opened = http.post(door.url + "/v1/sessions", json={"scenario": SCENARIO, "label": label})
        sid = opened.json()["sessionId"]
        ran = http.post(f"{door.url}/v1/sessions/{sid}/submit", json={"source": "advance 2"})
        assert ran.status_code == 200, ran.text
        proof: dict[str, Any] = http.get(f"{door.url}/v1/sessions/{sid}/proof").json()
    path.write_bytes(canonical_json(proof) + b"\n")
    return proof


def _verify(path: Path, trust: str) -> Result:
    return CliRunner().invoke(kestrel_cli, ["verify", str(path), "--trust", trust])


def _door_cli(home: Path, *args: str) -> Result:
    return CliRunner().invoke(door_group, ["--home", str(home), *args])


def test_a_revoked_key_fails_verify_trust_naming_the_revocation(tmp_path: Path) -> None:
    with serve_door(tmp_path / "home") as door:
        proof = _proof(door, "before", tmp_path / "proof.json")
        kid = proof["attestation"]["signatures"][0]["keyid"]
        trusted = _verify(tmp_path / "proof.json", door.url)
        assert trusted.exit_code == 0, trusted.output
        assert f"attested by {door.url} (key {kid}); keys trusted from URL {door.url}" in (
            trusted.output
        )

        revoked = _door_cli(door.home, "keys", "revoke", "--", kid)
        assert revoked.exit_code == 0, revoked.output
        assert f"revoked {kid}" in revoked.output
        assert "signing with " in revoked.output  # it was the only key: a new one signs
        jwks = httpx.get(door.url + JWKS_PATH).json()
        assert kid not in [k["kid"] for k in jwks["keys"]]
        [entry] = jwks["revoked"]
        assert entry["kid"] == kid
        (tmp_path / "jwks.json").write_text(json.dumps(jwks))

        for source in (door.url, door.url + JWKS_PATH, str(tmp_path / "jwks.json")):
            refused = _verify(tmp_path / "proof.json", source)
            assert refused.exit_code != 0, (source, refused.output)
            assert (
                f"attestation.signatures[0].keyid: expected a key the trusted keys do not "
                f"revoke, found key {kid}, revoked at {entry['revokedAt']}"
            ) in refused.output, refused.output

        later = _proof(door, "after", tmp_path / "later.json")  # the door still signs
        assert later["attestation"]["signatures"][0]["keyid"] != kid
        assert _verify(tmp_path / "later.json", door.url).exit_code == 0

    again = _door_cli(door.home, "keys", "revoke", "--", kid)
    assert again.exit_code != 0
    assert f"INVALID_INPUT: no live signing key {kid}" in again.output


def test_a_statement_from_another_issuer_fails_against_the_trusted_source(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"  # two doors on one store: one key set, two issuers
    with serve_door(home) as a, serve_door(home) as b:
        proof = _proof(a, "t", tmp_path / "proof.json")
        jwks = httpx.get(b.url + JWKS_PATH).json()
        assert jwks == httpx.get(a.url + JWKS_PATH).json()
        (tmp_path / "jwks.json").write_text(json.dumps(jwks))
        kid = proof["attestation"]["signatures"][0]["keyid"]

        for source in (b.url, b.url + JWKS_PATH):
            refused = _verify(tmp_path / "proof.json", source)
            assert refused.exit_code != 0, (source, refused.output)
            assert (
                f"statement.predicate.issuer: expected the door the keys were trusted from "
                f"(URL {source}), found {a.url} (claimed by the statement)"
            ) in refused.output, refused.output

        for source in (a.url, a.url + JWKS_PATH):
            trusted = _verify(tmp_path / "proof.json", source)
            assert trusted.exit_code == 0, trusted.output
            assert f"attested by {a.url} (key {kid}); keys trusted from URL {source}" in (
                trusted.output
            )
    # a file names no door: its path is said beside the issuer the statement claims
    from_file = _verify(tmp_path / "proof.json", str(tmp_path / "jwks.json"))
    assert from_file.exit_code == 0, from_file.output
    assert (
        f"attested by {a.url} (key {kid}); keys trusted from file {tmp_path / 'jwks.json'}"
    ) in from_file.output


def test_a_kid_that_begins_with_a_dash_is_revoked(tmp_path: Path) -> None:
    """A thumbprint is base64url: one in 64 begins with "-" (one that begins with "-h"
    goes after "--", "-h" being help)."""
    store = DoorStore(tmp_path / "door.db")
    for n, kid in enumerate(("-tXYZ", "-hXYZ", "newest")):
        store.add_signing_key(kid, bytes([n]) * 32, f"2026-01-0{n + 1}T00:00:00Z")
    store.close()
    for args in (["-tXYZ"], ["--", "-hXYZ"]):
        done = _door_cli(tmp_path, "keys", "revoke", *args)
        assert done.exit_code == 0, done.output
        assert done.output == f"revoked {args[-1]}\n"
    listed = json.loads(_door_cli(tmp_path, "keys", "list").output)
    assert [k["kid"] for k in listed["keys"]] == ["newest"]
    assert sorted(r["kid"] for r in listed["revoked"]) == ["-hXYZ", "-tXYZ"]
