"""Trials withheld (issue 48): a board states which of an evaluator's trials it was not shown.

Each trial is its own principal, so an operator could mint several, run the agent once per
trial and publish only the best proof. The door numbers the trials it mints per parent
(1, 2, 3 ... in mint order, in the mint's own transaction) and signs the number beside
``trialOf``, with how many trials the parent had minted when it signed (``trialsMinted``);
``kestrel board --trust`` states, per parent, the numbers shown and the ones missing up to
the most minted, and asks the door how many the parent has minted since (a count the
door signs for anyone), saying so where it cannot. A real ``kestrel-door serve`` on
loopback; two replicas on one real PostgreSQL mint at once and never give one number
twice.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door import DoorStore, IssuedTokens
from kestrel_door.attest import Attestor
from kestrel_door.cli import door_group
from kestrel_door.keys import DoorKeys
from kestrel_protocol import Proof
from kestrel_sdk.board import BoardRow, build_board, render_board, trials_shown
from kestrel_sdk.cli import cli as kestrel_cli
from kestrel_sdk.trials_minted import fetch_trials_minted
from kestrel_sdk.trust import NotAttested, check_attestation, load_trusted_keys

from tests.doors import Door, attested_proof, issue_token, serve_door

SCENARIO = "acme-chop"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _mint(door: Door, name: str) -> dict[str, Any]:
    made = httpx.post(
        f"{door.url}/v1/trials", json={"trial": name}, headers=_auth(door.token), timeout=60
    )
    assert made.status_code == 201, made.text
    minted: dict[str, Any] = made.json()
    return minted


def _publish_whole_run(door: Door, token: str) -> None:
    """A session of ``token``'s traded past the tape's end, published on the door's board
    by ``kestrel-door board publish``."""
    with httpx.Client(timeout=120, headers=_auth(token)) as http:
        opened = http.post(f"{door.url}/v1/sessions", json={"scenario": SCENARIO})
        assert opened.status_code == 200, opened.text
        sid = opened.json()["sessionId"]
        done = http.post(f"{door.url}/v1/sessions/{sid}/submit", json={"source": "advance 3000"})
        assert done.status_code == 200, done.text
    published = CliRunner().invoke(
        door_group, ["--home", str(door.home), "board", "publish", sid, "--public-url", door.url]
    )
    assert published.exit_code == 0, published.output


def _run(door: Door, token: str) -> dict[str, Any]:
    """A short session of the trial's, and its proof as the door serves it (signed)."""
    with httpx.Client(timeout=120, headers=_auth(token)) as http:
        opened = http.post(f"{door.url}/v1/sessions", json={"scenario": SCENARIO})
        assert opened.status_code == 200, opened.text
        sid = opened.json()["sessionId"]
        done = http.post(f"{door.url}/v1/sessions/{sid}/submit", json={"source": "advance 20"})
        assert done.status_code == 200, done.text
        proof = http.get(f"{door.url}/v1/sessions/{sid}/proof")
        assert proof.status_code == 200, proof.text
        data: dict[str, Any] = proof.json()
    return data


def _predicate(proof: dict[str, Any]) -> dict[str, Any]:
    statement = json.loads(base64.b64decode(proof["attestation"]["payload"]))
    predicate: dict[str, Any] = statement["predicate"]
    return predicate


def _board(folder: Path, proofs: list[dict[str, Any]], door: Door) -> tuple[Any, str]:
    """The board (``--trust`` the door) of ``proofs`` published in ``folder``: its JSON
    and its page."""
    folder.mkdir()
    for n, proof in enumerate(proofs):
        (folder / f"run-{n}.json").write_text(json.dumps(proof))
    board = build_board([folder], trusted_keys=load_trusted_keys(door.url))
    return board.to_json(), render_board(board)


def test_a_board_names_the_trials_an_evaluator_did_not_publish(tmp_path: Path) -> None:
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        trials = [_mint(door, f"run-{n}") for n in (1, 2, 3)]
        assert [t["trialNumber"] for t in trials] == [1, 2, 3]  # in mint order
        again = _mint(door, "run-2")  # the same trial minted again keeps its number
        assert again["trialNumber"] == 2
        proofs = [_run(door, t["token"]) for t in trials]
        signed = [_predicate(p) for p in proofs]
        assert [s["trialNumber"] for s in signed] == [1, 2, 3]  # inside the signature
        assert [s["trialsMinted"] for s in signed] == [3, 3, 3]  # all three minted by then
        assert len({s["trialOf"] for s in signed}) == 1
        # the best two of three published: the board says trial 2 was not shown
        withheld, page = _board(tmp_path / "two", [proofs[0], proofs[2]], door)
        [seen] = withheld["trials"]
        assert seen["trialOf"] == signed[0]["trialOf"]
        assert seen["agents"] == [signed[0]["trialOf"]]
        assert (seen["shown"], seen["mintedAtLeast"], seen["missing"]) == ([1, 3], 3, [2])
        as_of = f"; the door's count as of {seen['doorCountAsOf']}"  # the door signed it then
        assert seen["said"] == "trials 1–3 minted at least; 2 not shown" + as_of
        assert 'data-missing="2"' in page
        assert "trials 1–3 minted at least; 2 not shown" in page
        assert {r["trial"]["number"] for r in withheld["rows"]} == {1, 3}
        # every trial published: none missing
        honest, page = _board(tmp_path / "three", proofs, door)
        [seen] = honest["trials"]
        assert (seen["shown"], seen["missing"]) == ([1, 2, 3], [])
        as_of = f"; the door's count as of {seen['doorCountAsOf']}"
        assert seen["said"] == "trials 1–3 minted at least; none missing" + as_of
        assert seen["allShown"] is True
        assert 'data-missing=""' in page
        # the ranking is the same either way: a missing run may have crashed
        assert [r["rank"] for r in withheld["rows"]] == [
            r["rank"] for r in honest["rows"] if r["trial"]["number"] != 2
        ]


def test_a_board_names_the_trials_minted_after_the_one_published(tmp_path: Path) -> None:
    """Mint three, run all, have only trial 1's proof signed after the third mint and
    publish it alone: its statement says three were minted, so 2 and 3 are missing."""
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        trials = [_mint(door, f"run-{n}") for n in (1, 2, 3)]
        with httpx.Client(timeout=120, headers=_auth(trials[0]["token"])) as http:
            opened = http.post(f"{door.url}/v1/sessions", json={"scenario": SCENARIO})
            assert opened.status_code == 200, opened.text
            sid = opened.json()["sessionId"]
            done = http.post(f"{door.url}/v1/sessions/{sid}/submit", json={"source": "advance 20"})
            assert done.status_code == 200, done.text
            for trial in trials[1:]:
                _run(door, trial["token"])
            fetched = http.get(f"{door.url}/v1/sessions/{sid}/proof")  # signed now
            assert fetched.status_code == 200, fetched.text
            best: dict[str, Any] = fetched.json()
        board, page = _board(tmp_path / "best", [best], door)
        [seen] = board["trials"]
        as_of = f"; the door's count as of {seen['doorCountAsOf']}"
        assert seen["said"] == "trials 1–3 minted at least; 2–3 not shown" + as_of
        assert (seen["shown"], seen["mintedAtLeast"], seen["missing"]) == ([1], 3, [2, 3])
        assert 'data-missing="2 3"' in page
        signed = _predicate(best)
        assert (signed["trialNumber"], signed["trialsMinted"]) == (1, 3)
        assert check_attestation(best, load_trusted_keys(door.url)).trials_minted == 3
        assert board["rows"][0]["trial"] == {"of": signed["trialOf"], "number": 1, "minted": 3}


def test_a_board_asks_the_door_for_the_trials_minted_after_the_proof_it_shows(
    tmp_path: Path,
) -> None:
    """Trial 1 run and signed when it alone was minted, then four more minted: its
    statement says one, the door's signed count says five, and the board states five;
    with the door gone, the board says it could not ask."""
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        first = _mint(door, "run-1")
        assert (first["trialNumber"], first["trialsMinted"]) == (1, 1)
        proof = _run(door, first["token"])  # signed now: one trial minted
        later = [_mint(door, f"run-{n}") for n in (2, 3, 4, 5)]
        assert [(t["trialNumber"], t["trialsMinted"]) for t in later] == [
            (2, 2),
            (3, 3),
            (4, 4),
            (5, 5),
        ]
        again = _mint(door, "run-1")  # minted again: its number, the parent's count now
        assert (again["trialNumber"], again["trialsMinted"]) == (1, 5)
        signed = _predicate(proof)
        parent = signed["trialOf"]
        assert (signed["trialNumber"], signed["trialsMinted"]) == (1, 1)
        # anyone reads a parent's count, signed by the door; no credential
        counted = httpx.get(f"{door.url}/v1/trials/of/{parent}", timeout=30)
        assert counted.status_code == 200, counted.text
        answer = counted.json()
        assert (answer["trialOf"], answer["trialsMinted"]) == (parent, 5)
        said = json.loads(base64.b64decode(answer["attestation"]["payload"]))["predicate"]
        assert {k: said[k] for k in ("trialOf", "trialsMinted", "issuer")} == {
            "trialOf": parent,
            "trialsMinted": 5,
            "issuer": door.url,
        }
        # a principal that minted none and a pseudonym the door never knew: alike
        for other in (signed["principal"], "p_" + "0" * 32):
            nothing = httpx.get(f"{door.url}/v1/trials/of/{other}", timeout=30)
            assert nothing.status_code == 200, nothing.text
            assert (set(nothing.json()), nothing.json()["trialsMinted"]) == (set(answer), 0)
        bad = httpx.get(f"{door.url}/v1/trials/of/evaluator", timeout=30)
        assert bad.status_code == 400
        assert bad.json()["refusal"]["detail"]["where"] == "trialOf"
        keys = load_trusted_keys(door.url)
        # an answer altered on the way is no count: the board says why
        forged = {**answer, "trialsMinted": 2}
        fake = httpx.Client(
            transport=httpx.MockTransport(lambda _: httpx.Response(200, json=forged))
        )
        unread = fetch_trials_minted(door.url, parent, keys, fake).unread
        assert unread is not None
        assert "trialsMinted: expected 5 (signed), found 2" in unread
        board, page = _board(tmp_path / "one", [proof], door)
        [seen] = board["trials"]
        as_of = f"; the door's count as of {seen['doorCountAsOf']}"
        assert seen["said"] == "trials 1–5 minted at least; 2–5 not shown" + as_of
        assert (seen["mintedAtLeast"], seen["doorCount"], seen["missing"]) == (5, 5, [2, 3, 4, 5])
        assert 'data-missing="2 3 4 5"' in page
        # kestrel verify --trust prints the trial's number and its parent's count
        (tmp_path / "proof.json").write_text(json.dumps(proof))
        verified = CliRunner().invoke(
            kestrel_cli, ["verify", str(tmp_path / "proof.json"), "--trust", door.url]
        )
        assert verified.exit_code == 0, verified.output
        assert f"; trial 1 of {parent} (1 minted when signed)" in verified.output
        # and --json carries the trial as data, not only in attestedBy's words
        as_json = CliRunner().invoke(
            kestrel_cli, ["verify", str(tmp_path / "proof.json"), "--trust", door.url, "--json"]
        )
        assert as_json.exit_code == 0, as_json.output
        report = json.loads(as_json.output)
        assert report["trial"] == {"of": parent, "number": 1, "minted": 1}
    gone = build_board([tmp_path / "one"], trusted_keys=keys).to_json()  # the door stopped
    [seen] = gone["trials"]
    assert seen["doorCount"] is None
    assert seen["said"].startswith(
        "trial 1 minted at least; none missing of those signed; trials minted since unknown: "
        "cannot fetch "
        f"{door.url}/v1/trials/of/{parent}"
    )


@contextmanager
def _knocks(port: int) -> Iterator[list[int]]:
    """A listening socket on ``port`` of 127.0.0.1 that resets every connection at once
    (a door out of reach, answering nothing): the list holds one item per connection."""
    knocked: list[int] = []
    listener = socket.create_server(("127.0.0.1", port))

    def refuse() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # shut down: no more knocks
                return
            knocked.append(1)  # before the reset the knocker waits on
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    thread = threading.Thread(target=refuse, daemon=True)
    thread.start()
    try:
        yield knocked
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(timeout=10)


def test_a_board_asks_a_door_out_of_reach_once_for_all_its_parents(tmp_path: Path) -> None:
    """Three parents of one door each publish a trial's proof; the door stops before the
    board is built: every parent's row says the door could not be reached, and its
    address was tried once (not once per parent, each a timeout)."""
    with serve_door(tmp_path / "door", principal="evaluator-1") as door:
        bearers = [door.token, *(issue_token(door.home, f"evaluator-{n}") for n in (2, 3))]
        proofs = []
        for bearer in bearers:
            made = httpx.post(
                f"{door.url}/v1/trials", json={"trial": "run"}, headers=_auth(bearer), timeout=60
            )
            assert made.status_code == 201, made.text
            proofs.append(_run(door, made.json()["token"]))
        keys = load_trusted_keys(door.url)
    folder = tmp_path / "board"
    folder.mkdir()
    for n, proof in enumerate(proofs):
        (folder / f"run-{n}.json").write_text(json.dumps(proof))
    port = urlsplit(door.url).port
    assert port is not None
    with _knocks(port) as knocked:  # the door stopped by pid: its port answers nothing
        board = build_board([folder], trusted_keys=keys).to_json()
    assert len(knocked) == 1  # one connection attempt for the three parents
    parents = {_predicate(p)["trialOf"] for p in proofs}
    assert {seen["trialOf"] for seen in board["trials"]} == parents
    assert len(parents) == 3
    for seen in board["trials"]:
        assert seen["doorCount"] is None
        assert "trials minted since unknown: " in seen["said"]
        assert f"cannot fetch {door.url}/v1/trials/of/p_" in seen["said"]
    again = [s for s in board["trials"] if "not asked again" in s["said"]]
    assert len(again) == 2  # the door could not be reached: said on each of the others


def test_a_trial_session_published_by_the_door_cli_is_signed_as_the_door_serves_it(
    tmp_path: Path,
) -> None:
    """``kestrel-door board publish ks_…`` of a trial's session signs its trial facts."""
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        trials = [_mint(door, f"run-{n}") for n in (1, 2)]
        _publish_whole_run(door, trials[1]["token"])
        [item] = httpx.get(f"{door.url}/board/proofs.json", timeout=30).json()["proofs"]
        served = _run(door, trials[0]["token"])  # as the door serves a trial's proof
    signed = _predicate(item["proof"])
    assert signed["trialOf"] == _predicate(served)["trialOf"]
    assert (signed["trialNumber"], signed["trialsMinted"]) == (2, 2)


def test_replicas_minting_at_once_never_give_one_number_twice(
    shared_store: str, tmp_path: Path
) -> None:
    with (
        serve_door(tmp_path / "a", principal="evaluator") as a,
        serve_door(tmp_path / "b", principal="evaluator") as b,
    ):
        asks = [(a if n % 2 else b, f"run-{n}") for n in range(24)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            numbers = list(pool.map(lambda ask: _mint(*ask)["trialNumber"], asks))
    assert sorted(numbers) == list(range(1, 25))


def _trial_proof(tmp_path: Path) -> tuple[dict[str, Any], Attestor]:
    """A proof of the trial ``ev/trial-a`` (the first ``ev`` minted) as a door signs it,
    and the door's attestor."""

    store = DoorStore(tmp_path / "door.db")
    IssuedTokens(store).issue_trial("ev", "a", ["kestrel:read", "kestrel:trade"])
    attestor = Attestor(DoorKeys(store), "https://door.test")
    proof = attested_proof(tmp_path, attestor, "ev/trial-a", SCENARIO, ("advance 3",))
    return proof, attestor


def test_verify_trust_checks_the_trial_number_and_a_statement_without_one_is_unnumbered(
    tmp_path: Path,
) -> None:

    proof, attestor = _trial_proof(tmp_path)
    jwks = attestor.keys.jwks()
    attested = check_attestation(proof, jwks)
    assert (attested.trial_of, attested.trial_number) == (_predicate(proof)["trialOf"], 1)
    unsigned = Proof.parse({k: v for k, v in proof.items() if k != "attestation"})
    parent, pseudonym = attested.trial_of, _predicate(proof)["principal"]
    for trial_of, number in ((parent, 0), (None, 2)):  # no trial 0; a number of no trial
        bad = attestor.attest(unsigned, pseudonym, trial_of, number).to_json()
        with pytest.raises(NotAttested) as refused:
            check_attestation(bad, jwks)
        assert refused.value.field == "statement.predicate.trialNumber"
    assert attested.trials_minted == 1  # signed: one trial minted
    overclaims: list[tuple[int | None, int]] = [(3, 2), (None, 4)]
    for numbered, minted in overclaims:  # fewer minted than its number; no number
        bad = attestor.attest(unsigned, pseudonym, parent, numbered, minted).to_json()
        with pytest.raises(NotAttested) as refused:
            check_attestation(bad, jwks)
        assert refused.value.field == "statement.predicate.trialsMinted"
    kept = attestor.attest(unsigned, pseudonym, parent, 2, 2).to_json()
    assert check_attestation(kept, jwks).trials_minted == 2
    # a trial's statement without a number verifies: a trial with no number
    plain = attestor.attest(unsigned, pseudonym, parent).to_json()
    assert check_attestation(plain, jwks).trial_number is None
    rows = [
        BoardRow(f"r{n}", "agent", "failed", "", issuer="https://door.test", trial_of=parent)
        for n in range(2)
    ]
    rows[0].trial = 2
    [seen] = trials_shown(rows)
    assert (seen.shown, seen.missing, seen.unnumbered) == ((2,), (1,), 1)
    assert str(seen) == "trials 1–2 minted at least; 1 not shown; 1 trial row(s) without a number"
    rows[0].trial, rows[0].minted = 7, 10  # the largest signed count: 1–6, 8–10 missing
    [seen] = trials_shown(rows)
    assert (seen.shown, seen.highest, seen.missing) == ((7,), 10, (1, 2, 3, 4, 5, 6, 8, 9, 10))
    assert str(seen).startswith("trials 1–10 minted at least; 1–6, 8–10 not shown")
