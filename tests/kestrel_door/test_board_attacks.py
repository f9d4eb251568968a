"""The board attacked by a submitter who wants to rank higher (issue 48, session 18): the
attacks other suites did not show on a board, each against a real door on loopback.

- Two tokens of one principal: one signed identity, one cell; the second run of the
  scenario fails ``no-lookahead`` (the horizon is the principal's), so a best of two
  cannot be picked.
- A proof signed by a door whose keys are not trusted: a failed row naming the key,
  never ranked; the door's own board refuses to publish it.
- Stale keys: a key the door revoked after signing. The door's ``/board`` is rebuilt
  with the revocation and fails the row naming it, and so does a board trusting the
  door's URL; a board trusting a JWKS file saved before the revocation still passes it,
  saying which file it trusted (the file is the reader's word: trust the URL).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from kestrel_door.cli import door_group

from tests.doors import issue_token, serve_door
from tests.forward_door import PREFIX, bars, feed_token, forward_catalog
from tests.forward_door import SCENARIO as FORWARD
from tests.kestrel_sdk.board.proofs import door_proof, write
from tests.kestrel_sdk.board.test_board import BOLD, CAUTIOUS, kestrel

METADATA = "/.well-known/oauth-protected-resource"


def _board(*args: str) -> dict[str, Any]:
    done = kestrel("board", "--allow-failed", *args, "--json")
    assert done.returncode == 0, done.stderr
    board: dict[str, Any] = json.loads(done.stdout)
    return board


def _keys(url: str, path: Path) -> Path:
    uri = httpx.get(url + METADATA, timeout=30).json()["kestrel_grade_keys_uri"]
    path.write_text(httpx.get(uri, timeout=30).text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("attacks")
    found: dict[str, Any] = {"root": root}
    with serve_door(root / "other", principal="mallory") as other:
        found["foreign"] = door_proof(other.url, other.token, "acme-trend", BOLD)
    with serve_door(root / "door", principal="alice") as door:
        second = issue_token(door.home, "alice")  # a second token of the same principal
        found["first"] = door_proof(door.url, door.token, "acme-trend", CAUTIOUS)
        found["again"] = door_proof(door.url, second, "acme-trend", BOLD)
        found["stale"] = _keys(door.url, root / "saved-keys.json")  # saved before the revoke
        files = root / "files"
        write(files / "foreign.json", found["foreign"])
        write(files / "first.json", found["first"])
        refused = CliRunner().invoke(
            door_group,
            ["--home", str(door.home), "board", "publish", str(files / "foreign.json")],
        )
        found["refused"] = refused
        published = CliRunner().invoke(
            door_group,
            ["--home", str(door.home), "board", "publish", str(files / "first.json")],
        )
        assert published.exit_code == 0, published.output
        found["before"] = httpx.get(door.url + "/board.json", timeout=120).json()
        kid = found["first"]["attestation"]["signatures"][0]["keyid"]
        revoked = CliRunner().invoke(
            door_group, ["--home", str(door.home), "keys", "revoke", "--", kid]
        )
        assert revoked.exit_code == 0, revoked.output
        found["after"] = httpx.get(door.url + "/board.json", timeout=120).json()
        found["kid"], found["url"] = kid, door.url
        found["keys"] = _keys(door.url, root / "keys-now.json")
        folder = root / "proofs"
        write(folder / "first.json", found["first"])
        found["fresh"] = _board(str(folder), "--trust", door.url)
    found["from-file"] = _board(str(folder), "--trust", str(found["stale"]))
    return found


def test_two_tokens_of_one_principal_are_one_identity_and_one_honest_run(
    attacked: dict[str, Any], tmp_path: Path
) -> None:
    folder = tmp_path / "proofs"
    write(folder / "token-1" / "trend.json", attacked["first"])
    write(folder / "token-2" / "trend.json", attacked["again"])
    board = _board(str(folder), "--trust", str(attacked["stale"]))
    rows = {Path(r["source"]).parent.name: r for r in board["rows"]}
    first, again = rows["token-1"], rows["token-2"]
    assert first["identity"] == again["identity"]  # one pseudonym, whichever token
    assert first["agent"] == again["agent"] == first["identity"]
    assert (first["badge"], first["rank"]) == ("replayed-only", 1)  # acme-trend: not sealed
    assert again["badge"] == "failed"
    lookahead = again["checks"]["no-lookahead"]
    assert lookahead.startswith("failed: session ks_")
    assert "of the same principal had reached bar" in lookahead
    assert again["rank"] is None
    [trend] = board["scenarios"]
    assert [(c["agent"], c["n"]) for c in trend["cells"]] == [(first["identity"], 1)]


def test_a_proof_signed_by_a_door_not_trusted_fails_and_is_not_published(
    attacked: dict[str, Any], tmp_path: Path
) -> None:
    write(tmp_path / "proofs" / "mallory" / "trend.json", attacked["foreign"])
    board = _board(str(tmp_path / "proofs"), "--trust", str(attacked["keys"]))
    [row] = board["rows"]
    kid = attacked["foreign"]["attestation"]["signatures"][0]["keyid"]
    assert (row["badge"], row["rank"], row["identity"]) == ("failed", None, None)
    assert row["reason"].startswith("verification failed: attestation.signatures[0].keyid")
    assert kid in row["reason"]
    assert board["overall"] == []
    refused = attacked["refused"]
    assert refused.exit_code != 0
    assert "not published: verification failed: attestation.signatures[0].keyid" in refused.output


def test_a_key_revoked_after_signing_fails_the_row_on_the_doors_board_and_by_url(
    attacked: dict[str, Any],
) -> None:
    kid = attacked["kid"]
    [before] = attacked["before"]["rows"]
    assert (before["badge"], before["rank"]) == ("replayed-only", 1)
    [after] = attacked["after"]["rows"]  # the page rebuilt with the door's keys now
    assert (after["badge"], after["rank"]) == ("failed", None)
    revoked = f"expected a key the trusted keys do not revoke, found key {kid}, revoked at "
    assert revoked in after["reason"]
    [fresh] = attacked["fresh"]["rows"]
    assert fresh["badge"] == "failed"
    assert revoked in fresh["reason"]
    # a file saved before the revocation is the reader's word: it passes, naming the file
    [stale] = attacked["from-file"]["rows"]
    assert stale["rank"] == 1
    assert f"keys trusted from file {attacked['stale']}" in stale["attestation"]


def test_a_forward_proof_signed_before_its_window_closed_is_failed_and_not_published(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent trades a forward tape to its edge, stops there while the window is still
    open (a lucky stretch) and has its proof signed; the operator then appends more
    bars, freezes and unseals the feed. The early proof stopped at the edge its door
    signed, so it passed whole-window and ranked; now ``kestrel board --trust`` fails it
    saying the window was still open, and ``kestrel-door board publish`` refuses it."""
    catalog = forward_catalog(tmp_path / "catalog")  # its declared prefix alone
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(catalog))
    home = tmp_path / "home"
    with serve_door(home) as door:
        operator = {"Authorization": f"Bearer {feed_token(home)}", "Content-Type": "text/csv"}
        appends = f"{door.url}/v1/feeds/{FORWARD}/bars"
        with httpx.Client(timeout=60, headers={"Authorization": f"Bearer {door.token}"}) as agent:
            made = agent.post(f"{door.url}/v1/sessions", json={"scenario": FORWARD})
            assert made.status_code == 200, made.text
            sid = made.json()["sessionId"]
            submit = f"{door.url}/v1/sessions/{sid}/submit"
            assert agent.post(submit, json={"source": f"advance {PREFIX - 1}"}).status_code == 200
            waited: list[httpx.Response] = []  # a decision made before its bar is out
            source = {"source": "advance 1 wait 30s"}  # flat: every other check passes
            waiter = threading.Thread(target=lambda: waited.append(agent.post(submit, json=source)))
            waiter.start()
            try:
                for _ in range(3):  # as test_forward_door: the door answers meanwhile
                    asked = httpx.get(f"{door.url}/v1/catalog", headers=agent.headers)
                    assert asked.status_code == 200, asked.text
                assert waiter.is_alive()  # its bar is not out: it waits
                appended = httpx.post(appends, content=bars(PREFIX, PREFIX + 1), headers=operator)
                assert appended.status_code == 200, appended.text
            finally:
                waiter.join(timeout=60)
            assert waited[0].status_code == 200, waited[0].text  # at the edge: bar PREFIX
            early = agent.get(f"{door.url}/v1/sessions/{sid}/proof")  # signed, window open
            assert early.status_code == 200, early.text
            more = httpx.post(appends, content=bars(PREFIX + 2, PREFIX + 40), headers=operator)
            assert more.status_code == 200, more.text
            frozen = httpx.post(f"{door.url}/v1/feeds/{FORWARD}/freeze", headers=operator)
            assert frozen.status_code == 200, frozen.text
        unsealed = CliRunner().invoke(door_group, ["--home", str(home), "feed", "unseal", FORWARD])
        assert unsealed.exit_code == 0, unsealed.output
        proof = write(tmp_path / "proofs" / "early.json", early.json())
        done = kestrel(
            *("--catalog-path", str(catalog.parent), "board", "--allow-failed", "--json"),
            *(str(proof.parent), "--trust", door.url),
        )
        assert done.returncode == 0, done.stderr
        board = json.loads(done.stdout)
        refused = CliRunner().invoke(
            door_group, ["--home", str(home), "board", "publish", str(proof)]
        )
    [row] = board["rows"]
    why = (
        f"stopped at the edge of its forward tape ({PREFIX + 1} bars published) while its "
        "window was still open: its door signed the grade before the feed was frozen"
    )
    assert row["checks"].get("whole-window") == f"failed: {why}", row["reason"]
    assert (row["badge"], row["rank"]) == ("failed", None)
    assert [k for k, v in row["checks"].items() if v != "passed"] == ["whole-window"]
    assert refused.exit_code != 0
    assert "not published: " in refused.output
    assert why in refused.output
