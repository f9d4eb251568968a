"""``kestrel verify`` of a signed proof without ``--trust`` says the signature went
unchecked (issue 50): replay checks the arithmetic, not who signed it, and a reader of
``ok: … verified by replay`` must not take the door's statement as checked.

A proof served by a real door carries an attestation: verified in an empty home without
``--trust`` it says ``attestation present, not checked`` (and ``--json`` says
``"attestation": "unchecked"``); with ``--trust URL`` it is checked and says who signed
it instead; a proof made locally (no attestation) says neither.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result
from kestrel_sdk.cli import cli

from tests.doors import serve_door
from tests.kestrel_sdk.board.proofs import door_proof, made_proof, write

UNCHECKED = "attestation present, not checked: pass --trust URL|JWKS-FILE to check it"


def _verify(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "verify", *args])


def test_a_signed_proof_verified_without_trust_says_its_signature_went_unchecked(
    tmp_path: Path,
) -> None:
    with serve_door(tmp_path / "door") as door:
        signed = write(tmp_path / "signed.json", door_proof(door.url, door.token))
        elsewhere = tmp_path / "elsewhere"
        plain = _verify(elsewhere, str(signed))
        assert plain.exit_code == 0, plain.stderr
        assert "verified by replay" in plain.stdout
        assert UNCHECKED in plain.stdout.splitlines()

        as_json = _verify(elsewhere, str(signed), "--json")
        assert as_json.exit_code == 0, as_json.stderr
        report = json.loads(as_json.stdout)
        assert report["ok"] is True
        assert report["attestation"] == "unchecked"
        assert "attestedBy" not in report

        trusted = _verify(elsewhere, str(signed), "--trust", door.url)
        assert trusted.exit_code == 0, trusted.stderr
        assert f"attested by {door.url}" in trusted.stdout
        assert "not checked" not in trusted.stdout
        checked = json.loads(_verify(elsewhere, str(signed), "--trust", door.url, "--json").stdout)
        assert "attestation" not in checked
        assert checked["attestedBy"].startswith(door.url)
        assert "trial" not in checked  # a statement naming no trial: no trial member

    local = write(tmp_path / "local.json", made_proof(tmp_path / "home"))
    unsigned = _verify(elsewhere, str(local))
    assert unsigned.exit_code == 0, unsigned.stderr
    assert "attestation" not in unsigned.stdout
    assert "attestation" not in json.loads(_verify(elsewhere, str(local), "--json").stdout)
