"""The board a door serves (issue 50): ``kestrel-door board publish`` puts attested
proofs (files or sessions) on ``/board``; the page (HTML, or JSON) is built once per
change; ``/board/proofs.json`` is what anyone downloads, and ``kestrel board --from URL
--trust URL`` in another, empty home gives the door's page byte for byte.

While the door seals the scenario its proofs are withheld (issue 48, session 18): a
proof of a whole window carries every frame, so the tape's length and last prices, to
agents still trading it; the door unsealed (``kestrel-door unseal``) and restarted
serves them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from kestrel_door.board_page import BOARD_PATHS, BoardPage
from kestrel_door.board_records import SqlBoardRecords
from kestrel_door.cli import door_group
from kestrel_door.keys import DoorKeys
from kestrel_door.postgres import PostgresDoorStore
from kestrel_door.store import DoorStore
from kestrel_sdk import published_document
from kestrel_sdk.board import buy_and_hold, published_seals
from kestrel_sdk.runtime.catalog import load_catalog, tape_csv
from starlette.applications import Starlette
from starlette.testclient import TestClient

from tests.doors import SCOPES, serve_door
from tests.kestrel_sdk.board.proofs import door_proof, made_proof, write

FULL = ("buy 100 ACME", "advance 40", "sell 100 ACME", "advance 3000")
BOLD = ("buy 600 ACME", "advance 200", "sell 600 ACME", "advance 3000")
EARLY = ("buy 100 ACME", "advance 9", "sell 100 ACME", "advance 1")


def _door(home: Path, *args: str) -> Result:
    return CliRunner().invoke(door_group, ["--home", str(home), *args])


def _kestrel_in(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``kestrel`` in a new, empty home (HOME and KESTREL_HOME), run from inside it."""
    home.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env |= {"HOME": str(home), "KESTREL_HOME": str(home / ".kestrel")}
    return subprocess.run(
        [str(Path(sys.executable).parent / "kestrel"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=home,
        check=False,
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A door sealing acme-chop with two principals' sessions published (one as a proof
    file under --agent alice, one by session id), and what it served meanwhile."""
    root = tmp_path_factory.mktemp("door-board")
    found: dict[str, Any] = {"root": root}
    with serve_door(root / "door", "--seal", "acme-chop", principal="alice") as door:
        issued = _door(door.home, "token", "issue", "--principal", "bob", "--scope", SCOPES)
        bob = issued.output.strip().splitlines()[-1]
        alice_proof = door_proof(door.url, door.token, "acme-chop", FULL)
        bob_proof = door_proof(door.url, bob, "acme-chop", BOLD)
        early = door_proof(door.url, door.token, "acme-trend", EARLY)
        local = made_proof(root / "local", "acme-chop", FULL)
        found["empty"] = httpx.get(door.url + "/board/proofs.json").json()
        files = root / "files"
        published = _door(
            door.home,
            *("board", "publish", str(write(files / "alice.json", alice_proof))),
            "--agent",
            "alice",
        )
        assert published.exit_code == 0, published.output
        by_session = _door(
            door.home,
            *("board", "publish", bob_proof["grade"]["session"]),
            *("--public-url", door.url, "--seal", "acme-chop"),
        )
        assert by_session.exit_code == 0, by_session.output
        found["early"] = _door(door.home, "board", "publish", str(write(files / "e.json", early)))
        found["local"] = _door(door.home, "board", "publish", str(write(files / "l.json", local)))
        found["sealed"] = [httpx.get(door.url + path) for path in BOARD_PATHS]
        sealed_rebuild = ("board", "--from", door.url, "--trust", door.url, "--json")
        found["sealed rebuild"] = _kestrel_in(root / "sealed", *sealed_rebuild)
        port = int(door.url.rsplit(":", 1)[1])
    # the evaluation over, the operator unseals it and serves the door again at its URL
    unsealed = _door(root / "door", "unseal", "acme-chop")
    assert unsealed.exit_code == 0, unsealed.output
    with serve_door(root / "door", principal="alice", port=port) as door:
        found["html"] = httpx.get(door.url + "/board")
        found["json"] = httpx.get(door.url + "/board.json")
        found["accept"] = httpx.get(door.url + "/board", headers={"Accept": "application/json"})
        found["proofs"] = httpx.get(door.url + "/board/proofs.json")
        found["again"] = httpx.get(door.url + "/board")
        rebuild = ("board", "--from", door.url, "--trust", door.url)
        found["first"] = _kestrel_in(root / "first", *rebuild, "-o", "page.html")
        slash = door.url + "/"  # the door's URL spelt another way: the same bytes still
        again = ("board", "--from", slash, "--trust", slash, "--json")
        found["second"] = _kestrel_in(root / "second", *again)
        gone = _door(door.home, "board", "unpublish", str(files / "alice.json"))
        assert gone.exit_code == 0, gone.output
        found["after"] = httpx.get(door.url + "/board.json").json()
        found["url"], found["alice"], found["bob"] = door.url, alice_proof, bob_proof
    return found


def test_the_door_serves_the_published_proofs_ranked(served: dict[str, Any]) -> None:
    assert served["empty"] == {
        "kind": "kestrel.board.proofs",
        "proofs": [],
        "sealed": ["acme-chop"],
    }
    page = served["html"]
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    board = served["json"].json()
    assert served["accept"].content == served["json"].content  # JSON when asked for it
    rows = {r["roots"]["proof"]: r for r in board["rows"]}
    alice, bob = rows[served["alice"]["root"]], rows[served["bob"]["root"]]
    assert alice["agent"] == "alice"  # the name it was published under
    assert bob["agent"].startswith("p_")  # else the principal the door's statement names
    for row in (alice, bob):
        assert row["badge"] == "attested-and-sealed"
        assert row["attestation"].startswith(f"attested by {served['url']} (key ")
        assert row["rank"] is not None
    assert board["ranks"] == "attested"
    [chop] = board["scenarios"]
    assert chop["baseline"]["name"] == "buy-and-hold"
    assert published_seals(served["sealed"][2].json()) == {"acme-chop"}
    assert published_seals(served["proofs"].json()) == frozenset()  # restarted unsealed
    # the download: every published proof with the agent it was published under, in
    # the order of roots; the session's proof signed by the door as it serves
    published = served["proofs"].json()
    assert published["kind"] == "kestrel.board.proofs"
    items = {p["proof"]["root"]: p for p in published["proofs"]}
    assert [p["proof"]["root"] for p in published["proofs"]] == sorted(items)
    assert items[served["alice"]["root"]] == {"agent": "alice", "proof": served["alice"]}
    assert items[served["bob"]["root"]]["agent"] is None
    assert "attestation" in items[served["bob"]["root"]]["proof"]


def test_nothing_of_a_tape_the_door_seals_is_on_its_board(served: dict[str, Any]) -> None:
    """Published mid-evaluation, the proofs of acme-chop (sealed by ``--seal``) were
    served on ``/board``, ``/board.json`` and ``/board/proofs.json``: every frame of a
    run to the end, so the tape's length and last prices, and each grade's figures, to
    agents still trading it. Now none is served, nor rebuilt from the door; the download
    says how many are withheld. Was: both proofs served and ranked."""
    pages = served["sealed"]
    assert [page.status_code for page in pages] == [200, 200, 200]
    assert pages[2].json() == {
        "kind": "kestrel.board.proofs",
        "proofs": [],
        "sealed": ["acme-chop"],
        "withheld": [{"scenario": "acme-chop", "proofs": 2}],
    }
    table = pages[1].json()
    assert (table["rows"], table["scenarios"], table["overall"]) == ([], [], [])
    rebuilt = served["sealed rebuild"]
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert rebuilt.stdout.encode("utf-8") == pages[1].content
    shown = served["json"].json()  # once unsealed: the same proofs' rows
    [chop] = shown["scenarios"]
    hidden = buy_and_hold("acme-chop", chop["root"])  # this machine's catalog has the tape
    assert hidden.metrics is not None
    assert chop["baseline"]["metrics"] == hidden.metrics  # the baseline, traded now
    last = _last_bar("acme-chop").split(",")
    hints = [*last[1:], hidden.metrics["return"], hidden.metrics["sharpe"], str(hidden.grade)]
    for row in shown["rows"]:
        hints += [*row["roots"].values(), *(str(v) for v in row["metrics"].values())]
    for page in [*pages, rebuilt]:
        body = page.text if isinstance(page, httpx.Response) else page.stdout
        leaked = [hint for hint in hints if len(hint) > 4 and hint in body]
        assert leaked == []


def _last_bar(scenario: str) -> str:
    """The last line of ``scenario``'s tape (CSV: its time, then its prices)."""
    loaded = load_catalog().get(scenario)
    assert loaded is not None
    return tape_csv(loaded).strip().splitlines()[-1]


def test_another_home_rebuilds_the_same_bytes(served: dict[str, Any]) -> None:
    first, second = served["first"], served["second"]
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    page = (served["root"] / "first" / "page.html").read_bytes()
    assert page == served["html"].content
    assert second.stdout.encode("utf-8") == served["json"].content
    assert served["again"].content == served["html"].content
    html = served["html"].text
    assert str(served["root"]) not in html  # no path of any machine
    for row in served["json"].json()["rows"]:
        assert row["source"].startswith("proofs.json#")


def test_publishing_refuses_what_the_board_would_fail(served: dict[str, Any]) -> None:
    early, local = served["early"], served["local"]
    assert early.exit_code != 0
    assert "not published: " in early.output
    assert "stopped at bar 10 of 2519" in early.output  # a sealed door's proof too
    assert local.exit_code != 0
    assert "its grade is not signed by this door" in local.output


def test_unpublishing_rebuilds_the_page(served: dict[str, Any]) -> None:
    after = served["after"]
    assert [r["roots"]["proof"] for r in after["rows"]] == [served["bob"]["root"]]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_published_proofs_are_kept_in_either_store(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store: SqlBoardRecords
    if backend == "sqlite":
        store = DoorStore(tmp_path / "door.db")
    else:
        store = PostgresDoorStore(request.getfixturevalue("postgres_dsn"))
    try:
        store.publish("sha256:b", None, json.dumps({"root": "sha256:b"}))
        store.publish("sha256:a", "alice", json.dumps({"root": "sha256:a"}))
        store.publish("sha256:b", "bob", json.dumps({"root": "sha256:b"}))  # renamed
        assert store.board_version() == (("sha256:a", "alice"), ("sha256:b", "bob"))
        assert [p.agent for p in store.published()] == ["alice", "bob"]
        assert store.unpublish("sha256:a") is True
        assert store.unpublish("sha256:a") is False
        assert [p.root for p in store.published()] == ["sha256:b"]
    finally:
        store.close()


def test_the_page_is_built_once_per_change_not_per_request(tmp_path: Path) -> None:
    store = DoorStore(tmp_path / "door.db")
    seen: list[dict[str, Any]] = []

    def build(document: dict[str, Any], jwks: dict[str, Any]) -> Any:
        seen.append(document)
        return SimpleNamespace(html=f"<p>{len(document['proofs'])} proofs</p>", json="{}")

    page = BoardPage(store, DoorKeys(store), build, published_document)
    try:
        with TestClient(Starlette(routes=page.routes())) as client:
            assert [client.get("/board").text for _ in range(3)] == ["<p>0 proofs</p>"] * 3
            assert client.get("/board.json").text == "{}"
            assert len(seen) == 1
            store.publish("sha256:a", "alice", json.dumps({"root": "sha256:a"}))
            assert [client.get("/board").text for _ in range(3)] == ["<p>1 proofs</p>"] * 3
            assert len(seen) == 2
            assert client.get("/board/proofs.json").json()["proofs"] == [
                {"agent": "alice", "proof": {"root": "sha256:a"}}
            ]
    finally:
        store.close()
