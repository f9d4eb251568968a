"""Pseudonyms that stay pseudonymous (issue 45): the attacker holds an attested proof and
a list of candidate names, not the door's store.

Two door replicas on one PostgreSQL store serve alice. The attacker tries every
candidate name against every field of her proof and its signed statement: the name
itself, a session id (``session_id(name, root, label)`` for every root and label the
proof carries), an operation id. None of them links the statement's ``p_…`` (or the
session) to a name; the replicas agree on the session id and the pseudonym. The
pseudonym is keyed by a secret of its own, no signing key, and stays the same after the
key that signed, and the oldest, are revoked.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
from click.testing import CliRunner
from kestrel_door import open_door_store
from kestrel_door.cli import door_group
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.runtime.ids import operation_id, session_id

from tests.doors import serve_door

SCENARIO = "acme-chop"
NAMES = ("admin", "agent", "alice", "bob", "evaluated-agent", "local", "operator", "root")
"""The attacker's candidates (alice's name among them)."""


def _statement(proof: dict[str, Any]) -> dict[str, Any]:
    statement: dict[str, Any] = json.loads(base64.b64decode(proof["attestation"]["payload"]))
    return statement


def _strings(data: Any) -> Iterator[str]:
    """Every string value in ``data``."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for value in data.values():
            yield from _strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from _strings(value)


def recovered(proof: dict[str, Any], names: tuple[str, ...]) -> set[str]:
    """The candidate names that something in ``proof`` (or its statement) derives from."""
    seen = {*_strings(proof), *_strings(_statement(proof))}
    roots = {s for s in seen if s.startswith("sha256:")}
    labels = {s for s in seen if len(s) <= 64 and not s.startswith("sha256:")}
    found = set()
    for name in names:
        if name in seen:
            found.add(name)
        for root in roots:
            if operation_id(name, root) in seen:
                found.add(name)
            if any(session_id(name, root, label) in seen for label in labels):
                found.add(name)
    return found


def _open(http: httpx.Client, base: str, label: str) -> str:
    opened = http.post(base + "/v1/sessions", json={"scenario": SCENARIO, "label": label})
    assert opened.status_code == 200, opened.text
    sid: str = opened.json()["sessionId"]
    return sid


def _proof(http: httpx.Client, base: str, sid: str) -> dict[str, Any]:
    ran = http.post(f"{base}/v1/sessions/{sid}/submit", json={"source": "buy 5 ACME\nadvance 3"})
    assert ran.status_code == 200, ran.text
    proof: dict[str, Any] = http.get(f"{base}/v1/sessions/{sid}/proof").json()
    return proof


def _door_cli(*args: str) -> str:
    result = CliRunner().invoke(door_group, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_no_candidate_name_recovers_the_principal_of_an_attested_proof(
    shared_store: str, tmp_path: Path
) -> None:
    with (
        serve_door(tmp_path / "a", principal="alice") as a,
        serve_door(tmp_path / "b", principal="alice") as b,
        httpx.Client(timeout=120) as http,
    ):
        http.headers["Authorization"] = f"Bearer {a.token}"
        sid = _open(http, a.url, "t")
        http.headers["Authorization"] = f"Bearer {b.token}"
        assert _open(http, b.url, "t") == sid  # the replicas agree on alice's session
        proof = _proof(http, b.url, sid)
        other = _proof(http, b.url, _open(http, b.url, "u"))
        http.headers["Authorization"] = f"Bearer {a.token}"
        from_a = http.get(f"{a.url}/v1/sessions/{sid}/proof").json()

    pseudonym = _statement(proof)["predicate"]["principal"]
    assert pseudonym.startswith("p_")
    assert _statement(from_a)["predicate"]["principal"] == pseudonym  # one per store
    assert _statement(other)["predicate"]["principal"] == pseudonym
    assert proof["record"]["label"] == "t"  # the attacker has the label and the roots
    assert recovered(proof, NAMES) == set()
    assert recovered(other, NAMES) == set()
    # the search finds what it seeks: a session id derived from a name is recovered
    named = {**proof, "session": session_id("alice", proof["scenario"]["root"], "t")}
    assert recovered(named, NAMES) == {"alice"}


def test_the_pseudonym_has_its_own_secret_and_outlives_every_signing_key(
    shared_store: str, tmp_path: Path
) -> None:
    with serve_door(tmp_path / "door", principal="bob") as door, httpx.Client(timeout=120) as http:
        http.headers["Authorization"] = f"Bearer {door.token}"
        first = _proof(http, door.url, _open(http, door.url, "1"))
        pseudonym = _statement(first)["predicate"]["principal"]
        store = open_door_store(shared_store)
        try:
            keys = store.signing_keys()
        finally:
            store.close()
        assert keys
        for _, private, _ in keys:  # no signing key is the HMAC's key
            mac = hmac.new(private, b"kestrel principal\0bob", hashlib.sha256)
            assert "p_" + mac.hexdigest()[:32] != pseudonym

        signer = first["attestation"]["signatures"][0]["keyid"]
        _door_cli("keys", "rotate")
        _door_cli("keys", "revoke", "--", signer)  # the oldest key, which signed the first proof
        later = _proof(http, door.url, _open(http, door.url, "2"))
    assert later["attestation"]["signatures"][0]["keyid"] != signer
    assert _statement(later)["predicate"]["principal"] == pseudonym


def test_a_voucher_bound_to_a_principal_pays_for_its_pseudonymous_open(tmp_path: Path) -> None:
    """The runtime's gate sees the pseudonym; a voucher names the principal: alice's pays
    for alice's gated open, bob's does not."""
    with (
        serve_door(tmp_path / "home", "--daily-quota", "0", principal="alice") as door,
        httpx.Client(timeout=120, headers={"Authorization": f"Bearer {door.token}"}) as http,
    ):
        gated = http.post(door.url + "/v1/sessions", json={"scenario": SCENARIO, "label": "v"})
        assert gated.status_code == 402, gated.text
        offer_id = gated.json()["offerId"]
        paid = {}
        for principal in ("bob", "alice"):
            out = _door_cli("--home", str(door.home), "voucher", "issue", "--principal", principal)
            payment = {"offerId": offer_id, "voucher": out.strip().splitlines()[-1]}
            paid[principal] = http.post(
                door.url + "/v1/sessions",
                json={"scenario": SCENARIO, "label": "v", "payment": payment},
            )
    assert "the voucher was issued to another principal" in paid["bob"].text
    assert paid["alice"].status_code == 200, paid["alice"].text
    assert paid["alice"].json()["sessionId"].startswith("ks_")


def test_a_session_opened_under_the_name_stays_stored_but_is_not_served(tmp_path: Path) -> None:
    """A store from before pseudonyms: alice's session, opened under her name (as a door
    did then), is kept intact; the door, which knows her by her pseudonym, does not
    serve it to her (``UNKNOWN_SESSION``), and her new sessions are new."""
    home = tmp_path / "home"

    async def by_name() -> str:
        async with create_sdk(local_transport(home=home, principal="alice")) as sdk:
            opened = (await sdk.open_session(SCENARIO, "old")).session
            assert opened is not None
            await opened.submit("buy 5 ACME\nadvance 3")
            return opened.id

    old = anyio.run(by_name)
    with serve_door(home, principal="alice") as door, httpx.Client(timeout=120) as http:
        http.headers["Authorization"] = f"Bearer {door.token}"
        refused = http.get(f"{door.url}/v1/sessions/{old}/proof")
        assert refused.status_code == 404, refused.text
        assert refused.json()["refusal"]["code"] == "UNKNOWN_SESSION"
        assert _open(http, door.url, "old") != old

    async def kept() -> int:
        async with create_sdk(local_transport(home=home, principal="alice")) as sdk:
            proof = await sdk.proof(old)
            return len(proof.pentads)

    assert anyio.run(kept) == 1  # the submission is all there, and proves
