"""The signed order of events of a forward session, and ``kestrel verify --trust``'s
check of it (issue 47).

The door notes when each submission to a session on a forward scenario arrived (its
clock, before the runtime call); the statement it signs about the session's grade says
``forward: true`` and, per submission, when it arrived and when the bar it traded into
was published. ``verify --trust`` passes a session whose every decision preceded its bar
and says so; it names the first submission that did not. An altered statement (times
swapped) fails on its signature, naming the submission its order gets wrong; re-signed
with the door's own key, the order check alone names it. Every other session's
statement is unchanged (no ``forward``, no ``submissions``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import kestrel_sdk
import pytest
from click.testing import CliRunner
from kestrel_door import DoorStore
from kestrel_door.arrivals import Stamps, door_time
from kestrel_door.attest import Attestor, attesting
from kestrel_door.feeds import RuntimeFeeds
from kestrel_door.keys import DoorKeys
from kestrel_protocol import (
    PAYLOAD_TYPE,
    KestrelError,
    RefusalCode,
    canonical_json,
    pae,
    root_of_bytes,
)
from kestrel_sdk.board import build_board, forward_window
from kestrel_sdk.cli import cli as kestrel_cli
from kestrel_sdk.cli.proofs import proof_verification
from kestrel_sdk.trust import NotAttested, check_attestation

from tests.doors import attested_proof
from tests.forward_door import HEADER, PREFIX, ROWS, bars, forward_catalog
from tests.forward_door import SCENARIO as FORWARD

SCENARIO = "acme-chop"
ISSUER = "https://door.test"
SOURCES = ("buy 5 ACME", "advance 1", "sell 5 ACME\nadvance 2")
ANCIENT = "2001-01-01T00:00:00.000000Z"
"""A publication time before every submission."""
LATER = "2999-01-01T00:00:00.000000Z"
"""A time after every submission."""


class Feeds:
    """The runtime's forward feeds as the door asks them: ``SCENARIO`` is forward, each
    of its bars after ``prefix`` published at ``at`` (its clock read before the commit)
    and visible by ``visible`` (read after it; ``at`` too by default), its window open."""

    def __init__(self, at: str, prefix: int = 0, visible: str = "") -> None:
        self.at, self.prefix, self.visible = at, prefix, visible or at

    def is_forward(self, scenario_id: str) -> bool:
        return scenario_id == SCENARIO

    def published(self, scenario_id: str) -> Mapping[int, Stamps]:
        stamps = (self.at, self.visible)
        return {bar: ("", "") if bar <= self.prefix else stamps for bar in range(100)}

    def edge(self, scenario_id: str) -> tuple[int, str]:
        return 100, root_of_bytes((HEADER + "".join(ROWS[:100])).encode())

    def frozen(self, scenario_id: str) -> bool:
        return False  # the window is open


def _signed_proof(tmp_path: Path, feeds: Feeds | None) -> tuple[dict[str, Any], DoorKeys]:
    """A proof of alice's session (``SOURCES``) as a door with ``feeds`` signs it."""
    keys = DoorKeys(DoorStore(tmp_path / "door.db"))
    attestor = Attestor(keys, ISSUER, feeds=feeds)
    return attested_proof(tmp_path, attestor, "alice", SCENARIO, SOURCES), keys


def _statement(proof: Mapping[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(base64.b64decode(proof["attestation"]["payload"]))
    return found


def _with_statement(
    proof: Mapping[str, Any], statement: Mapping[str, Any], keys: DoorKeys | None = None
) -> dict[str, Any]:
    """``proof`` carrying ``statement`` in its envelope: the door's signature kept, or,
    with ``keys``, the statement re-signed with the door's own key."""
    payload = canonical_json(statement)
    envelope = {**proof["attestation"], "payload": base64.b64encode(payload).decode("ascii")}
    if keys is not None:
        kid, key = keys.signer()
        signature = base64.b64encode(key.sign(pae(PAYLOAD_TYPE, payload))).decode("ascii")
        envelope["signatures"] = [{"keyid": kid, "sig": signature}]
    return {**proof, "attestation": envelope}


def _verify(tmp_path: Path, proof: Mapping[str, Any], keys: DoorKeys) -> tuple[int, str]:
    """``kestrel verify PROOF --trust JWKS`` (the door's keys saved to a file)."""
    (tmp_path / "proof.json").write_bytes(canonical_json(dict(proof)))
    (tmp_path / "jwks.json").write_text(json.dumps(keys.jwks()))
    args = ["verify", str(tmp_path / "proof.json"), "--trust", str(tmp_path / "jwks.json")]
    result = CliRunner().invoke(kestrel_cli, args)
    return result.exit_code, result.output


def test_every_decision_before_its_bar_verifies_and_is_said(tmp_path: Path) -> None:
    proof, keys = _signed_proof(tmp_path, Feeds("2999-01-01T00:00:00.000000Z"))
    predicate = _statement(proof)["predicate"]
    assert predicate["forward"] is True
    submissions = predicate["submissions"]
    assert [s["seq"] for s in submissions] == [1, 2, 3]
    assert [s["bar"] for s in submissions] == [1, 1, 2]  # the clock at submission + 1
    assert all(s["arrivedAt"] < s["barPublishedAt"] for s in submissions)
    code, output = _verify(tmp_path, proof, keys)
    assert code == 0, output
    assert "forward: each of 3 decisions preceded its bar" in output


def test_a_decision_after_its_bar_is_named_by_seq(tmp_path: Path) -> None:
    proof, keys = _signed_proof(tmp_path, Feeds("2001-01-01T00:00:00.000000Z", prefix=0))
    code, output = _verify(tmp_path, proof, keys)
    assert code != 0
    assert "statement.predicate.submissions[seq 1]" in output, output
    assert "submission 1 arrived at" in output


def test_bars_of_the_prefix_are_not_forward_decisions(tmp_path: Path) -> None:
    """Bars 0 to 3 are the declared prefix, published before the window: every
    submission traded into some of them only (the last, ``advance 2`` from bar 1, to
    bar 3), so none is a forward decision (none carries a publication time, and none
    fails)."""
    proof, keys = _signed_proof(tmp_path, Feeds("2001-01-01T00:00:00.000000Z", prefix=3))
    submissions = _statement(proof)["predicate"]["submissions"]
    assert all("barPublishedAt" not in s for s in submissions)
    code, output = _verify(tmp_path, proof, keys)
    assert code == 0, output
    assert "forward: each of 0 decisions preceded its bar" in output


def test_a_decision_advancing_from_the_prefix_into_the_window_is_checked(
    tmp_path: Path,
) -> None:
    """Bars 0 to 2 are the declared prefix; submission 3 (``sell 5 ACME`` then ``advance
    2``, at bar 1) traded into bars 2 and 3, and bar 3 was published before it arrived:
    it is a decision about bar 3, named (was: counted as a decision into bar 2, of the
    prefix, so left unchecked, and ``--trust`` said every decision preceded its bar)."""
    proof, keys = _signed_proof(tmp_path, Feeds("2001-01-01T00:00:00.000000Z", prefix=2))
    submissions = _statement(proof)["predicate"]["submissions"]
    assert [s["bar"] for s in submissions] == [1, 1, 3]
    assert [s.get("barPublishedAt") for s in submissions] == [None, None, ANCIENT]
    code, output = _verify(tmp_path, proof, keys)
    assert code != 0
    assert "statement.predicate.submissions[seq 3]" in output, output
    assert "before its bar 3 was published" in output


def test_a_decision_arriving_while_its_bar_was_published_is_unconfirmed_on_every_face(
    tmp_path: Path,
) -> None:
    """Each bar stamped before every submission arrived (``barPublishedAt``) and visible
    by a time after them all (``barVisibleBy``): whether any decision preceded its bar
    is unknown. ``kestrel verify --trust``, the SDK's trusted verification and a board's
    row each pass it, counting none as on time and saying each order unconfirmed, in the
    same words (with the stamp alone, each was named late)."""
    proof, keys = _signed_proof(tmp_path, Feeds(ANCIENT, visible=LATER))
    submissions = _statement(proof)["predicate"]["submissions"]
    assert [(s["barPublishedAt"], s["barVisibleBy"]) for s in submissions] == [(ANCIENT, LATER)] * 3
    said = [
        f"; order unconfirmed: statement.predicate.submissions[seq {s['seq']}]: expected a "
        f"decision made before its bar {s['bar']} was published ({ANCIENT}), found "
        f"submission {s['seq']} arrived at {s['arrivedAt']}, while the bar was being "
        f"published ({ANCIENT}, visible by {LATER}): whether it could be seen then is unknown"
        for s in submissions
    ]
    code, output = _verify(tmp_path, proof, keys)
    assert code == 0, output
    assert "forward: each of 0 decisions preceded its bar" + "".join(said) in output, output
    report = proof_verification(proof, trusted_keys=keys.jwks())
    assert report.ok, report.mismatch
    assert report.attested_by is not None
    assert "forward: each of 0 decisions preceded its bar" + "".join(said) in report.attested_by
    (tmp_path / "proofs").mkdir()
    (tmp_path / "proofs" / "alice.json").write_bytes(canonical_json(proof))
    (row,) = build_board([tmp_path / "proofs"], trusted_keys=keys.jwks()).rows
    assert row.attested, row.reason
    assert f"attested by {ISSUER} (key " in row.reason
    assert "".join(said) in row.reason, row.reason


class _FrozenAfterBarOne(Feeds):
    """A frozen feed whose bar 1 was published after every submission, bar 2 on
    before: a session that made a decision in the window, then went on trading bars
    already published."""

    def published(self, scenario_id: str) -> Mapping[int, Stamps]:
        at = {bar: "2999-01-01T00:00:00.000000Z" if bar == 1 else ANCIENT for bar in range(100)}
        return {bar: (stamp, stamp) for bar, stamp in at.items()}

    def frozen(self, scenario_id: str) -> bool:
        return True


def test_a_forward_run_that_went_on_after_its_bars_is_no_replay(tmp_path: Path) -> None:
    """Submissions 1 and 2 preceded bar 1; submission 3 traded into bar 2, published
    before it arrived. The session decided while a bar was still to come, so it is a
    forward run (not a replay of the complete tape), and ``--trust`` names its late
    decision: a session cannot trade on time, wait for the tape to be complete and
    trade the rest knowing it, ranked as a forward run."""
    proof, keys = _signed_proof(tmp_path, _FrozenAfterBarOne("unused"))
    assert _statement(proof)["predicate"]["forward"] is True
    code, output = _verify(tmp_path, proof, keys)
    assert code != 0
    assert "statement.predicate.submissions[seq 3]" in output, output


def _swapped(statement: dict[str, Any], seq: int) -> dict[str, Any]:
    """The forger's edit: submission ``seq``'s arrival and its bar's publication swapped."""
    predicate = statement["predicate"]
    submissions = [dict(s) for s in predicate["submissions"]]
    entry = submissions[seq - 1]
    entry["arrivedAt"], entry["barPublishedAt"] = entry["barPublishedAt"], entry["arrivedAt"]
    entry["barVisibleBy"] = entry["barPublishedAt"]  # and the bar visible by then
    return {**statement, "predicate": {**predicate, "submissions": submissions}}


def test_a_tampered_order_fails_naming_the_submission(tmp_path: Path) -> None:
    proof, keys = _signed_proof(tmp_path, Feeds("2999-01-01T00:00:00.000000Z"))
    tampered = _with_statement(proof, _swapped(_statement(proof), 2))
    code, output = _verify(tmp_path, tampered, keys)
    assert code != 0
    assert "attestation.signatures[0].sig" in output, output  # the signature fails
    assert "statement.predicate.submissions[seq 2]" in output, output  # naming the submission

    # re-signed with the door's own key: the signature holds, the order check names it
    resigned = _with_statement(proof, _swapped(_statement(proof), 2), keys)
    with pytest.raises(NotAttested) as caught:
        check_attestation(resigned, keys.jwks())
    assert caught.value.field == "statement.predicate.submissions[seq 2]"
    code, output = _verify(tmp_path, resigned, keys)
    assert code != 0
    assert "statement.predicate.submissions[seq 2]" in output, output
    assert "attestation.signatures" not in output

    # a time changed (the arrival moved after its bar), re-signed: named too
    statement = _statement(proof)
    changed = [dict(s) for s in statement["predicate"]["submissions"]]
    changed[2]["arrivedAt"] = "3000-01-01T00:00:00.000000Z"
    moved = {**statement, "predicate": {**statement["predicate"], "submissions": changed}}
    with pytest.raises(NotAttested) as caught:
        check_attestation(_with_statement(proof, moved, keys), keys.jwks())
    assert caught.value.field == "statement.predicate.submissions[seq 3]"


def test_a_forward_statement_without_the_root_of_its_edge_is_not_attested(
    tmp_path: Path,
) -> None:
    """The edge's bars without their tape root (a statement as session 14's door signed
    it: never released, so no reader of it is kept), or no edge at all, re-signed with
    the door's own key: ``--trust`` names the edge, whatever the proof embeds."""
    proof, keys = _signed_proof(tmp_path, Feeds("2999-01-01T00:00:00.000000Z"))
    statement = _statement(proof)
    predicate = statement["predicate"]
    assert predicate["edge"]["root"].startswith("sha256:")
    check_attestation(proof, keys.jwks())
    for edge, found in (({"bars": 100}, '{"bars":100}'), (None, "none")):
        changed = {k: v for k, v in predicate.items() if k != "edge"}
        if edge is not None:
            changed["edge"] = edge
        resigned = _with_statement(proof, {**statement, "predicate": changed}, keys)
        with pytest.raises(NotAttested) as caught:
            check_attestation(resigned, keys.jwks())
        assert (caught.value.field, caught.value.found) == ("statement.predicate.edge", found)
        code, output = _verify(tmp_path, resigned, keys)
        assert code != 0
        assert "statement.predicate.edge" in output, output


def test_a_session_that_is_not_forward_has_the_statement_it_had(tmp_path: Path) -> None:
    proof, keys = _signed_proof(tmp_path, None)
    predicate = _statement(proof)["predicate"]
    assert "forward" not in predicate
    assert "submissions" not in predicate
    code, output = _verify(tmp_path, proof, keys)
    assert code == 0, output
    assert "forward" not in output


def test_a_statement_leaving_out_a_forward_scenario_s_order_fails(tmp_path: Path) -> None:
    """A proof embedding a forward scenario (its ``forward`` member) whose statement says
    nothing of the order of events (a door that did not keep it) is not attested."""
    proof, keys = _signed_proof(tmp_path, None)
    check_attestation(proof, keys.jwks())  # as it is: no forward scenario in it
    forward = {"bars": 3, "head": "sha256:" + "0" * 64}
    embedded = {**proof, "embedded": {"scenario": {"id": SCENARIO, "forward": forward}}}
    with pytest.raises(NotAttested) as caught:
        check_attestation(embedded, keys.jwks())
    assert caught.value.field == "statement.predicate.forward"


class _FailingRecords(Feeds):
    """Feeds whose store fails while the door notes arrivals (not when it signs)."""

    failing = True

    def is_forward(self, scenario_id: str) -> bool:
        if self.failing:
            raise KestrelError(RefusalCode.BACKEND_UNAVAILABLE, "store unavailable")
        return super().is_forward(scenario_id)


def test_a_submission_stands_when_its_arrival_cannot_be_kept(tmp_path: Path) -> None:
    """The runtime accepted it: the agent is answered; the statement then lacks the
    arrival, and ``--trust`` names the submission whose arrival was not kept."""
    feeds = _FailingRecords("2999-01-01T00:00:00.000000Z")
    keys = DoorKeys(DoorStore(tmp_path / "door.db"))
    attestor = Attestor(keys, ISSUER, feeds=feeds)
    owner = kestrel_sdk.local_transport(home=tmp_path, store="memory:")
    runtime: Any = getattr(owner, "runtime", None)

    async def run() -> dict[str, Any]:
        attestor.pseudonyms.load()
        make = attesting(
            lambda p: kestrel_sdk.local_transport(principal=p, runtime=runtime), attestor
        )
        try:
            async with kestrel_sdk.create_sdk(make("alice")) as sdk:
                opened = await sdk.open_session(SCENARIO)
                assert opened.session is not None
                answered = await opened.session.submit("advance 1")
                assert answered.pentad.seq == 1
                feeds.failing = False
                data: dict[str, Any] = (await sdk.proof(opened.session.id)).to_json()
                return data
        finally:
            await owner.aclose()

    proof = anyio.run(run)
    [entry] = _statement(proof)["predicate"]["submissions"]
    assert "arrivedAt" not in entry
    with pytest.raises(NotAttested) as caught:
        check_attestation(proof, keys.jwks())
    assert caught.value.field == "statement.predicate.submissions[seq 1]"
    assert caught.value.found == "none recorded"


def test_a_replay_after_the_freeze_is_said_and_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session opened once the forward tape was complete (its feed frozen, every bar
    published before any of its submissions) replays published bars: its statement says
    ``forward: false`` with the order it kept, and ``--trust`` passes saying so (was:
    ``forward: true``, every decision late, ``--trust`` failing on submission 1; the
    board then listed it failed rather than ranking it with the frozen tape's replays)."""
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(forward_catalog(tmp_path / "catalog")))
    owner = kestrel_sdk.local_transport(home=tmp_path / "home", store="memory:")
    runtime: Any = getattr(owner, "runtime", None)
    runtime.append_bars(FORWARD, bars(PREFIX, PREFIX + 4).encode(), clock=door_time)
    runtime.freeze_feed(FORWARD)
    runtime.unseal_feed(FORWARD)  # its proof then embeds the tape it grew to
    keys = DoorKeys(DoorStore(tmp_path / "door.db"))
    attestor = Attestor(keys, ISSUER, feeds=RuntimeFeeds(runtime))

    async def run() -> dict[str, Any]:
        attestor.pseudonyms.load()
        make = attesting(
            lambda p: kestrel_sdk.local_transport(principal=p, runtime=runtime), attestor
        )
        try:
            async with kestrel_sdk.create_sdk(make("alice")) as sdk:
                opened = await sdk.open_session(FORWARD)
                assert opened.session is not None
                for source in ("advance 3", "buy 5 ACME\nadvance 1", "advance 1"):
                    await opened.session.submit(source)
                proof = await sdk.proof(opened.session.id, embed_tape=True)
                data: dict[str, Any] = proof.to_json()
                return data
        finally:
            await owner.aclose()

    proof = anyio.run(run)
    code, output = _verify(tmp_path, proof, keys)
    assert code == 0, output
    assert "forward scenario replayed: each of 3 submissions was made after its bar" in output
    predicate = _statement(proof)["predicate"]
    assert predicate["forward"] is False
    submissions = predicate["submissions"]
    assert [s["bar"] for s in submissions] == [3, 4, 5]
    assert all(s["barPublishedAt"] < s["arrivedAt"] for s in submissions)
    assert forward_window(proof) is None  # a board ranks it with the replays, not forward

    # a submission the statement calls a replay though it preceded its bar: named
    earlier = [dict(s) for s in submissions]
    earlier[1]["arrivedAt"] = "2001-01-01T00:00:00.000000Z"
    statement = _statement(proof)
    moved = {**statement, "predicate": {**predicate, "submissions": earlier}}
    with pytest.raises(NotAttested) as caught:
        check_attestation(_with_statement(proof, moved, keys), keys.jwks())
    assert caught.value.field == "statement.predicate.submissions[seq 2]"
