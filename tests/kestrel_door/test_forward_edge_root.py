"""The door's signed forward edge binds the published tape, not only its length (issue 48,
session 15).

A forward scenario's terms count its declared prefix alone: no frame or root covers the
bars published after it. The door's statement said only how many bars the tape held when
it signed (``edge.bars``), so a bar after the session's last one could be swapped for
another in the proof's embedded tape (its proof root recomputed: the statement is outside
it) and ``kestrel verify --trust``, the SDK's trusted verification and ``kestrel board``
passed it. The statement now carries the tape root of the bars up to the edge
(``edge.root``), and every face refuses an embedded tape whose bars up to the edge do not
hash to it, in the same words. A door serves on 127.0.0.1; the operator feeds it over
``/v1/feeds``; alice trades over ``/v1`` and stops at bar 3 of 9.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from kestrel_door.cli import door_group
from kestrel_protocol import (
    PAYLOAD_TYPE,
    VerificationReport,
    canonical_json,
    pae,
    root_of,
    root_of_bytes,
)
from kestrel_protocol.surface import FEED_TAPE_PATH
from kestrel_sdk import create_sdk, remote_transport
from kestrel_sdk.cli import cli
from kestrel_sdk.cli.proofs import proof_verification
from kestrel_sdk.published_tape import PublishedTapes, fetch_published
from kestrel_sdk.trust import NotAttested, check_attestation, load_trusted_keys

from tests.doors import Door, issue_token, serve_door
from tests.forward_door import HEADER, PREFIX, ROWS, SCENARIO, bars, feed_token, forward_catalog
from tests.tape_reads import setup

EDGE = 10
"""Bars published when the grade is signed: the prefix's three and seven appended."""
SOURCE = "buy 3 ACME\nadvance 2\nsell 3 ACME\nadvance 1"
"""Alice's session: stops at bar 3 of 9."""
STOPPED = "stopped at bar 3 of 9: the session did not trade its whole window"
SIGNED = "the forward tape as the door signed it"


class Sealed:
    """What a verifier was told while the feed was frozen but still sealed (its tape
    published nowhere): the door's answer to a fetch of the tape, ``kestrel verify
    --trust`` of alice's bare proof and bob's, the SDK's report of bob's and the board's
    row of bob's (``--trust``)."""

    def __init__(self, fetch: httpx.Response, alice: Result, bob: Result) -> None:
        self.fetch, self.alice, self.bob = fetch, alice, bob
        self.report: VerificationReport | None = None
        self.row: dict[str, Any] = {}


class Served:
    """What the door served: its URL (its keys at its well-known address) and home (the
    requests for its tape counted there: :mod:`tests.tape_reads`), the forward
    scenario's directory (its declared prefix), alice's proof with the tape embedded
    (frozen and unsealed) and without (while sealed), and the proof (while sealed) of
    bob's session, which stopped at bar 1, inside the prefix; what a verifier was told
    while the tape was sealed."""

    def __init__(
        self, door: Door, catalog: Path, proofs: list[dict[str, Any]], sealed: Sealed
    ) -> None:
        self.url, self.catalog, self.home = door.url, catalog, door.home
        self.embedded, self.bare, self.short = proofs
        self.sealed = sealed
        self.jwks: Mapping[str, Any] = {}


def _while_sealed(door: Door, bare: dict[str, Any], short: dict[str, Any], where: Path) -> Sealed:
    """What a verifier is told of the tapeless proofs while the frozen feed is sealed."""
    where.mkdir()
    fetch = httpx.get(door.url + FEED_TAPE_PATH.format(id=SCENARIO))
    sealed = Sealed(fetch, _verify(where, bare, door.url), _verify(where, short, door.url))
    sealed.report = proof_verification(short, trusted_keys=load_trusted_keys(door.url))
    sealed.row = _board(where, short, "--trust", door.url)
    return sealed


async def _proofs(
    door: Door, operator: dict[str, str], where: Path
) -> tuple[list[dict[str, Any]], Sealed]:
    feed = f"{door.url}/v1/feeds/{SCENARIO}"
    bob_token = await anyio.to_thread.run_sync(issue_token, door.home, "bob")
    async with (
        create_sdk(remote_transport(door.url, door.token)) as sdk,
        create_sdk(remote_transport(door.url, bob_token)) as bob,
    ):
        alice = (await sdk.open_session(SCENARIO)).session
        short = (await bob.open_session(SCENARIO)).session
        assert alice is not None
        assert short is not None
        await alice.submit(SOURCE)
        await short.submit("advance 1")
        async with httpx.AsyncClient(headers=operator) as http:
            frozen = await http.post(f"{feed}/freeze")
            assert frozen.status_code == 200, frozen.text
        bare = (await sdk.proof(alice.id)).to_json()
        stopped = (await bob.proof(short.id)).to_json()
        sealed = await anyio.to_thread.run_sync(_while_sealed, door, bare, stopped, where)
        unseal = ["--home", str(door.home), "feed", "unseal", SCENARIO]
        unsealed = await anyio.to_thread.run_sync(CliRunner().invoke, door_group, unseal)
        assert unsealed.exit_code == 0, unsealed.output
        embedded = (await sdk.proof(alice.id, embed_tape=True)).to_json()
    return [embedded, bare, stopped], sealed


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("edge-root")
    catalog = forward_catalog(root / "catalog")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KESTREL_CATALOG_PATH", str(catalog))  # the door's
        with serve_door(root / "door", principal="alice", setup=setup(root / "door")) as door:
            operator = {"Authorization": f"Bearer {feed_token(door.home)}"}
            made = httpx.post(
                f"{door.url}/v1/feeds/{SCENARIO}/bars",
                content=bars(PREFIX, EDGE),
                headers={**operator, "Content-Type": "text/csv"},
            )
            assert made.status_code == 200, made.text
            proofs, sealed = anyio.run(_proofs, door, operator, root / "sealed")
            found = Served(door, catalog, proofs, sealed)
            found.jwks = load_trusted_keys(door.url)
            yield found


def _statement(proof: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(base64.b64decode(proof["attestation"]["payload"]))
    return found


def _with_tape(proof: dict[str, Any], tape: str) -> dict[str, Any]:
    """``proof`` embedding ``tape``, its root remade (the statement is outside it)."""
    data = {k: v for k, v in proof.items() if k != "root"}
    data["embedded"] = {**proof["embedded"], "tape": tape}
    return data | {"root": root_of({k: v for k, v in data.items() if k != "attestation"})}


def _edited(proof: dict[str, Any], bar: int) -> dict[str, Any]:
    """``proof`` with bar ``bar`` of its embedded tape given another volume (every other
    bar, and its count, as published)."""
    lines = proof["embedded"]["tape"].splitlines(keepends=True)
    time, symbol, o, h, low, c, volume = lines[1 + bar].rstrip("\n").split(",")
    lines[1 + bar] = ",".join((time, symbol, o, h, low, c, str(int(volume) + 1))) + "\n"
    return _with_tape(proof, "".join(lines))


def _extended(proof: dict[str, Any]) -> dict[str, Any]:
    """``proof`` with one more bar embedded than the door published (the tape's next)."""
    return _with_tape(proof, proof["embedded"]["tape"] + ROWS[EDGE])


def _altered(bar: int, proof: dict[str, Any]) -> str:
    """What every face says of ``proof`` whose tape has ``bar`` edited."""
    tape = _edited(proof, bar)["embedded"]["tape"]
    signed = _statement(proof)["predicate"]["edge"]["root"]
    return (
        f"the embedded tape's first {EDGE} bars have root {root_of_bytes(tape.encode())}; "
        f"the door's statement says the {EDGE} published when the grade was signed have "
        f"root {signed}: the tape was altered"
    )


def _verify(tmp_path: Path, proof: dict[str, Any], url: str) -> Result:
    """``kestrel verify PROOF --trust URL`` in an empty home."""
    (tmp_path / "proof.json").write_bytes(canonical_json(proof))
    args = ["--home", str(tmp_path / "elsewhere"), "verify", str(tmp_path / "proof.json")]
    return CliRunner().invoke(cli, [*args, "--trust", url])


def _board(tmp_path: Path, proof: dict[str, Any], *trust: str) -> dict[str, Any]:
    """The row ``kestrel board`` (``trust``: ``--trust URL``) makes of ``proof``."""
    folder = tmp_path / "board"
    folder.mkdir(exist_ok=True)
    (folder / "alice.json").write_bytes(canonical_json(proof))
    args = ["--home", str(tmp_path / "elsewhere"), "board", "--allow-failed", str(folder)]
    done = CliRunner().invoke(cli, [*args, *trust, "--json"])
    assert done.exit_code == 0, done.output
    [row] = json.loads(done.stdout)["rows"]
    found: dict[str, Any] = row
    return found


def _attested(row: dict[str, Any]) -> bool:
    """Whether the board's row says the door's statement held (``--trust``)."""
    return str(row["attestation"]).startswith("attested by ")


def test_the_statement_carries_the_root_of_the_published_tape(served: Served) -> None:
    edge = _statement(served.embedded)["predicate"]["edge"]
    published = HEADER + "".join(ROWS[:EDGE])
    assert edge == {"bars": EDGE, "root": root_of_bytes(published.encode())}
    assert served.embedded["embedded"]["tape"] == published
    assert _statement(served.bare)["predicate"]["edge"] == edge
    assert _statement(served.short)["predicate"]["edge"] == edge


def test_a_bar_swapped_after_the_session_s_last_bar_is_refused_on_every_face(
    served: Served, tmp_path: Path
) -> None:
    """Bar 7 (after alice's last, bar 3; before the edge) given another volume: the replay
    passes (no frame covers it), the count is right; was: attested, whole-window failed
    only as stopped at bar 3."""
    forged = _edited(served.embedded, 7)
    with pytest.raises(NotAttested) as refused:
        check_attestation(forged, served.jwks)
    said = _altered(7, served.embedded)
    assert (refused.value.field, refused.value.expected) == ("embedded.tape", SIGNED)
    assert refused.value.found == said
    report = proof_verification(forged, trusted_keys=served.jwks)
    assert report.mismatch is not None
    assert (report.mismatch.field, report.mismatch.found) == ("embedded.tape", said)
    cli_said = _verify(tmp_path, forged, served.url)
    assert cli_said.exit_code != 0, cli_said.output
    assert f"verification failed: embedded.tape: expected {SIGNED}, found {said}" in cli_said.stderr
    row = _board(tmp_path, forged, "--trust", served.url)
    assert row["badge"] == "failed", row
    assert row["reason"] == f"verification failed: embedded.tape: expected {SIGNED}, found {said}"
    unchecked = _board(tmp_path, forged)  # the statement unchecked: the board's own check
    assert unchecked["badge"] == "failed", unchecked
    assert f"whole-window failed: {said}" in unchecked["reason"]


@pytest.mark.parametrize("bar", [1, 3, EDGE - 1])
def test_a_bar_edited_anywhere_up_to_the_edge_is_refused(
    served: Served, tmp_path: Path, bar: int
) -> None:
    """Before alice's last bar, at it, or the edge's last: never attested."""
    forged = _edited(served.embedded, bar)
    report = proof_verification(forged, trusted_keys=served.jwks)
    assert not report.ok
    assert report.mismatch is not None, report
    cli_said = _verify(tmp_path, forged, served.url)
    assert cli_said.exit_code != 0, cli_said.output
    assert "attested by" not in cli_said.stdout
    row = _board(tmp_path, forged, "--trust", served.url)
    assert row["badge"] == "failed", row
    assert not _attested(row), row


def test_a_cut_tape_is_refused_and_a_longer_one_binds_nothing_past_the_edge(
    served: Served, tmp_path: Path
) -> None:
    cut = _with_tape(served.embedded, HEADER + "".join(ROWS[:4]))
    with pytest.raises(NotAttested) as refused:
        check_attestation(cut, served.jwks)
    assert refused.value.found.endswith(
        f"says {EDGE} were published when the grade was signed: the tape was cut"
    )
    # a bar past the edge is no door's word: the window still ends at the edge
    longer = _extended(served.embedded)
    assert check_attestation(longer, served.jwks).issuer == served.url
    assert check_attestation(_edited(longer, EDGE), served.jwks).issuer == served.url
    row = _board(tmp_path, longer, "--trust", served.url)
    assert _attested(row), row
    assert row["checks"]["whole-window"] == f"failed: {STOPPED}"
    honest = _verify(tmp_path, served.embedded, served.url)
    assert honest.exit_code == 0, honest.output
    assert f"attested by {served.url}" in honest.stdout


def _resigned(proof: dict[str, Any], statement: dict[str, Any], kid: str) -> dict[str, Any]:
    """``proof`` carrying ``statement`` signed by a key of the forger's own, as ``kid``."""
    payload = canonical_json(statement)
    signature = Ed25519PrivateKey.generate().sign(pae(PAYLOAD_TYPE, payload))
    envelope = {
        **proof["attestation"],
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [{"keyid": kid, "sig": base64.b64encode(signature).decode("ascii")}],
    }
    return {**proof, "attestation": envelope}


def test_a_statement_re_signed_to_the_altered_tape_with_another_key_is_refused(
    served: Served, tmp_path: Path
) -> None:
    """The forger edits bar 7 and the statement's root to match, and signs with a key of
    their own: under the door's key id the signature fails; under another id the key is
    not the door's."""
    forged = _edited(served.embedded, 7)
    statement = _statement(served.embedded)
    tape = forged["embedded"]["tape"]
    statement["predicate"]["edge"] = {"bars": EDGE, "root": root_of_bytes(tape.encode())}
    door_kid = served.embedded["attestation"]["signatures"][0]["keyid"]
    for kid in (door_kid, "forger"):
        resigned = _resigned(forged, statement, kid)
        with pytest.raises(NotAttested) as refused:
            check_attestation(resigned, served.jwks)
        assert refused.value.field.startswith("attestation.signatures"), refused.value
        said = _verify(tmp_path, resigned, served.url)
        assert said.exit_code != 0, said.output
        row = _board(tmp_path, resigned, "--trust", served.url)
        assert not _attested(row), row
        assert row["badge"] == "failed", row


def _edge_said(proof: dict[str, Any], bars_said: int) -> dict[str, Any]:
    """``proof`` whose statement says ``bars_said`` were published, with those bars' root
    (its signature, over the door's payload, no longer holds)."""
    statement = _statement(proof)
    root = root_of_bytes((HEADER + "".join(ROWS[:bars_said])).encode())
    statement["predicate"]["edge"] = {"bars": bars_said, "root": root}
    payload = base64.b64encode(canonical_json(statement)).decode("ascii")
    return {**proof, "attestation": {**proof["attestation"], "payload": payload}}


def test_a_proof_without_its_tape_takes_its_window_end_from_the_signed_edge(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob's session stopped at bar 1 (inside the declared prefix), its proof made while
    the tape was sealed: it embeds no tape, and elsewhere the catalog holds the prefix
    alone (3 bars) while the door signed 10. It verifies under ``--trust`` and the board
    ends its window at the signed edge (bar 9), beyond what the verifier's tape holds. Its
    statement edited to say 2 bars (the session would have traded them all) fails its
    signature; unchecked, the board never says the window was traded whole."""
    short = served.short
    assert "embedded" not in short
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(served.catalog))
    checked = _verify(tmp_path, short, served.url)
    assert checked.exit_code == 0, checked.output
    assert f"attested by {served.url}" in checked.stdout
    stopped = "stopped at bar 1 of 9: the session did not trade its whole window"
    row = _board(tmp_path, short, "--trust", served.url)
    assert _attested(row), row["reason"]
    assert row["window"] == [1, EDGE - 1]
    assert row["checks"]["no-lookahead"] == "passed"
    assert row["checks"]["whole-window"] == f"failed: {stopped}"
    forged = _edge_said(short, 2)
    refused = _verify(tmp_path, forged, served.url)
    assert refused.exit_code != 0, refused.output
    assert "attestation.signatures[0].sig" in refused.stderr, refused.output
    row = _board(tmp_path, forged, "--trust", served.url)
    assert not _attested(row), row
    assert row["badge"] == "failed", row
    unchecked = _board(tmp_path, forged)
    assert "whole-window" not in unchecked["checks"], unchecked
    assert unchecked["badge"] == "replayed-only", unchecked  # ranked, never said whole
    unconfirmed = "whole-window unconfirmed: the forward tape's end is the proof's own word"
    assert unconfirmed in unchecked["reason"], unchecked
    honest = _board(tmp_path, short)
    assert honest["checks"]["whole-window"] == f"failed: {stopped}"


def test_a_proof_without_its_tape_past_the_verifier_s_tape_is_refused_saying_so(
    served: Served,
) -> None:
    """While the feed is sealed (its tape published nowhere): alice reached bar 3; the
    verifier's catalog holds bars 0 to 2 (the signed edge, 10 bars, brings none): the
    verification says so, and why no tape was fetched, never that the proof is forged or
    attested."""
    said = served.sealed.alice
    assert said.exit_code != 0, said.output
    assert "attested by" not in said.stdout
    reach = "its session traded forward scenario acme-forward to bar 3, and this verifier holds 3"
    assert reach in said.stderr, said.output
    assert f"; forward tape unconfirmed: {_tape_url(served)} does not publish it yet" in said.stderr


def _tape_url(served: Served) -> str:
    return served.url + FEED_TAPE_PATH.format(id=SCENARIO)


def test_a_proof_without_its_tape_is_replayed_over_the_tape_its_door_publishes(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the feed is unsealed the door serves its tape to anyone: alice's proof made
    while it was sealed (no tape; she reached bar 3, past the 3 bars the verifier's
    catalog holds) verifies under ``--trust`` on every face, replayed over the 10 bars the
    door publishes, whose root is the signed edge's. Was: refused, ``UNKNOWN_SCENARIO``."""
    published = httpx.get(_tape_url(served))  # no credential
    assert published.status_code == 200, published.text
    assert published.text == HEADER + "".join(ROWS[:EDGE])
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(served.catalog))
    replayed = (
        f"forward tape: replayed over the {EDGE} bar(s) {_tape_url(served)} publishes, up to "
        f"the edge its door signed ({PREFIX} of them the declared prefix)"
    )
    report = proof_verification(served.bare, trusted_keys=served.jwks)
    assert report.ok, report.mismatch
    assert report.provenance is not None
    assert replayed in report.provenance.detail
    assert report.attested_by is not None
    assert "unconfirmed" not in report.attested_by
    said = _verify(tmp_path, served.bare, served.url)
    assert said.exit_code == 0, said.output
    assert f"attested by {served.url}" in said.stdout
    assert replayed in said.stdout
    row = _board(tmp_path, served.bare, "--trust", served.url)
    assert _attested(row), row
    assert "unconfirmed" not in row["reason"], row
    assert row["checks"]["whole-window"] == f"failed: {STOPPED}"


def test_where_the_door_does_not_publish_the_tape_every_face_says_it_is_unconfirmed(
    served: Served,
) -> None:
    """While the feed is sealed, bob's proof (no tape, inside the declared prefix) still
    verifies by replay and its statement holds, but nothing checked its tape against the
    signed root: every face says so, in the same words. Was: attested, silently."""
    assert served.sealed.fetch.status_code == 403, served.sealed.fetch.text
    assert served.sealed.fetch.json()["refusal"]["code"] == "SCENARIO_SEALED"
    unconfirmed = f"; forward tape unconfirmed: {_tape_url(served)} does not publish it yet"
    report = served.sealed.report
    assert report is not None
    assert report.ok, report.mismatch
    assert report.attested_by is not None
    assert unconfirmed in report.attested_by
    said = served.sealed.bob
    assert said.exit_code == 0, said.output
    assert f"attested by {served.url}" in said.stdout
    assert unconfirmed in said.stdout
    assert unconfirmed in served.sealed.row["reason"], served.sealed.row
    assert unconfirmed in served.sealed.row["attestation"], served.sealed.row


def _forging(served: Served, bar: int) -> httpx.Client:
    """A client to which the door's tape comes with bar ``bar`` given another volume."""
    real = httpx.HTTPTransport()

    def handle(request: httpx.Request) -> httpx.Response:
        answer = real.handle_request(request)
        answer.read()
        if request.url.path != FEED_TAPE_PATH.format(id=SCENARIO):
            return answer
        forged = _edited({"embedded": {"tape": answer.text}}, bar)["embedded"]["tape"]
        return httpx.Response(200, text=forged, headers={"Content-Type": "text/csv"})

    return httpx.Client(transport=httpx.MockTransport(handle))


@pytest.mark.parametrize("bar", [2, 3, EDGE - 1])
def test_a_published_tape_that_is_not_the_one_signed_is_not_attested(
    served: Served, bar: int
) -> None:
    """The tape comes back with a bar of the prefix, alice's last or the edge's last
    changed: its root is not the signed one, and nothing is replayed over it."""
    with _forging(served, bar) as client:
        fetched = fetch_published(served.bare, served.jwks, PublishedTapes(client))
    assert fetched is not None
    assert fetched.tape is None
    assert fetched.mismatch is not None
    assert fetched.mismatch.field == "statement.predicate.edge.root"
    signed = _statement(served.bare)["predicate"]["edge"]["root"]
    assert fetched.mismatch.found == f"{signed} (signed)"
    assert fetched.mismatch.expected.startswith(
        f"the root of the first {EDGE} bars {_tape_url(served)} publishes, sha256:"
    )
    assert signed not in fetched.mismatch.expected


def test_without_a_credential_the_door_serves_no_other_tape(served: Served) -> None:
    """The public route serves an unsealed forward tape alone: an unknown id is 404, a
    scenario that is not forward (the shipped acme-chop) is refused naming it."""
    unknown = httpx.get(served.url + FEED_TAPE_PATH.format(id="no-such"))
    assert unknown.status_code == 404, unknown.text
    assert unknown.json()["refusal"]["code"] == "UNKNOWN_SCENARIO"
    other = httpx.get(served.url + FEED_TAPE_PATH.format(id="acme-chop"))
    assert other.status_code == 400, other.text
    assert "acme-chop is not a forward scenario" in other.json()["refusal"]["message"]
