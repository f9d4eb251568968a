"""A board's count of an evaluator's trials says as of when, and never "all shown" unless
the door's signed count held (issue 48, session 18).

Before, a door answering the count with 4xx/5xx, a count whose signature did not verify
or a count of another parent left the row reading "none missing" (with the failure after
it, and nothing in JSON but ``missing: []``); and a published board (the door's
``/board``, ``kestrel board --from``) showed only the counts its proofs' statements
signed when they were made: trials minted after publication were unseen there. Now a row
says "none missing" only under a count that held, says why otherwise (JSON
``doorUnread``, ``allShown`` false) on every face; the door's published document carries
its signed count of each published trial's parent, so its page and any rebuild state
that count, when the door signed it (``doorCountAsOf``) and where to ask again
(``countUrl``). A real ``kestrel-door serve`` on loopback; a stand-in on the door's port
once it stopped, answering what a broken door answers.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from click.testing import CliRunner
from kestrel_sdk import published_board, published_document
from kestrel_sdk.board import build_board, render_board
from kestrel_sdk.cli import cli as kestrel_cli
from kestrel_sdk.trust import load_trusted_keys

from tests.doors import issue_token, serve_door
from tests.kestrel_door.test_board_page import _kestrel_in
from tests.kestrel_door.test_trial_numbers import (
    _auth,
    _mint,
    _predicate,
    _publish_whole_run,
    _run,
)

METADATA = "/.well-known/oauth-protected-resource"


@contextmanager
def _answering(port: int, status: int, body: Any) -> Iterator[list[str]]:
    """A stand-in on ``port`` of 127.0.0.1 answering every GET with ``status`` and
    ``body`` (JSON); the list holds the paths asked."""
    asked: list[str] = []
    payload = json.dumps(body).encode("utf-8")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the standard library's name
            asked.append(self.path)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Trial 1 of an evaluator, its proof in a folder, the door's keys in a file, the
    door's signed count of it (and of another evaluator's parent); the door then stops."""
    root = tmp_path_factory.mktemp("counts")
    with serve_door(root / "door", principal="evaluator") as door:
        trial = _mint(door, "run-1")
        proof = _run(door, trial["token"])
        parent = _predicate(proof)["trialOf"]
        other = httpx.post(
            f"{door.url}/v1/trials",
            json={"trial": "run-1"},
            headers=_auth(issue_token(door.home, "rival")),
            timeout=60,
        )
        assert other.status_code == 201, other.text
        rivals = _run(door, other.json()["token"])
        rival = _predicate(rivals)["trialOf"]
        counts = {
            who: httpx.get(f"{door.url}/v1/trials/of/{who}", timeout=30).json()
            for who in (parent, rival)
        }
        keys_uri = httpx.get(door.url + METADATA).json()["kestrel_grade_keys_uri"]
        jwks = root / "door-keys.json"
        jwks.write_text(httpx.get(keys_uri).text, encoding="utf-8")
    folder = root / "proofs"
    folder.mkdir()
    (folder / "run-1.json").write_text(json.dumps(proof), encoding="utf-8")
    both = root / "two-parents"
    both.mkdir()
    (both / "evaluator.json").write_text(json.dumps(proof), encoding="utf-8")
    (both / "rival.json").write_text(json.dumps(rivals), encoding="utf-8")
    return {
        "both": both,
        "url": door.url,
        "parent": parent,
        "rival": rival,
        "counts": counts,
        "folder": folder,
        "jwks": jwks,
        "root": root,
    }


def _altered(answer: dict[str, Any]) -> dict[str, Any]:
    signature = answer["attestation"]["signatures"][0]
    sig = ("A" if signature["sig"][0] != "A" else "B") + signature["sig"][1:]
    return {
        **answer,
        "attestation": {**answer["attestation"], "signatures": [{**signature, "sig": sig}]},
    }


def _cases(evaluated: dict[str, Any]) -> list[tuple[int, Any, str]]:
    """(status, body, what the row must say of it) of a door whose count does not hold."""
    url = f"{evaluated['url']}/v1/trials/of/{evaluated['parent']}"
    refusal = {"refusal": {"code": "BACKEND_UNAVAILABLE", "message": "the store did not answer"}}
    return [
        (503, refusal, f"{url} answered 503, not a count"),
        (404, {"detail": "Not Found"}, f"{url} answered 404, not a count"),
        (
            200,
            evaluated["counts"][evaluated["rival"]],  # a count the door signed, of another parent
            f"{url} is not attested: statement.predicate.trialOf: expected {evaluated['parent']}",
        ),
        (
            200,
            _altered(evaluated["counts"][evaluated["parent"]]),
            f"{url} is not attested: attestation.signatures[0].sig",
        ),
    ]


@pytest.mark.parametrize("case", range(4), ids=["503", "404", "another-parent", "bad-signature"])
def test_a_count_the_door_did_not_answer_never_reads_as_all_shown(
    evaluated: dict[str, Any], case: int, tmp_path: Path
) -> None:
    status, body, why = _cases(evaluated)[case]
    port = urlsplit(evaluated["url"]).port
    assert port is not None
    keys = load_trusted_keys(str(evaluated["jwks"]))
    with _answering(port, status, body) as asked:
        board = build_board([evaluated["folder"]], trusted_keys=keys)
        page = tmp_path / "board.html"
        cli = CliRunner().invoke(
            kestrel_cli,
            [
                *("--home", str(tmp_path / "home"), "board", str(evaluated["folder"])),
                *("--trust", str(evaluated["jwks"]), "-o", str(page), "--allow-failed"),
            ],
        )
    assert asked == [f"/v1/trials/of/{evaluated['parent']}"] * 2  # the SDK's build, the CLI's
    [seen] = board.to_json()["trials"]
    said = "trial 1 minted at least; none missing of those signed; trials minted since unknown: "
    assert seen["said"].startswith(said + why), seen["said"]
    assert (seen["allShown"], seen["doorCount"], seen["missing"]) == (False, None, [])
    assert seen["doorUnread"].startswith(why)
    assert seen["countUrl"] == f"{evaluated['url']}/v1/trials/of/{evaluated['parent']}"
    html = render_board(board)
    assert 'data-all-shown="no"' in html
    assert f'href="{seen["countUrl"]}"' in html
    # the command line says it too, with where to ask again
    assert cli.exit_code == 0, cli.output
    line = cli.output.splitlines()[1]
    assert line.startswith(f"trials of {evaluated['parent']} at {evaluated['url']} (")
    assert said + why in line
    assert line.endswith(f"(ask the door again at {seen['countUrl']})")
    assert 'data-all-shown="no"' in page.read_text(encoding="utf-8")


def test_a_count_that_held_says_as_of_when(evaluated: dict[str, Any]) -> None:
    """The door's own answer: "none missing", when the door signed it, all shown."""
    port = urlsplit(evaluated["url"]).port
    assert port is not None
    answer = evaluated["counts"][evaluated["parent"]]
    signed_at = json.loads(_payload(answer))["predicate"]["signedAt"]
    keys = load_trusted_keys(str(evaluated["jwks"]))
    with _answering(port, 200, answer):
        board = build_board([evaluated["folder"]], trusted_keys=keys)
    [seen] = board.to_json()["trials"]
    assert (
        seen["said"] == f"trial 1 minted at least; none missing; the door's count as of {signed_at}"
    )
    assert (seen["allShown"], seen["doorCount"], seen["doorCountAsOf"]) == (True, 1, signed_at)
    assert seen["doorUnread"] is None
    assert 'data-all-shown="yes"' in render_board(board)


def _payload(answer: dict[str, Any]) -> bytes:
    return base64.b64decode(answer["attestation"]["payload"])


def test_a_published_board_states_the_doors_count_as_of_when_on_every_face(
    tmp_path: Path,
) -> None:
    """Trial 1's session published on the door's board; then two more trials minted.
    The door's /board and /board.json, and a rebuild by ``kestrel board --from`` in an
    empty home, say trials 1–3 minted, 2–3 not shown, as of the door's signed count, with
    where to ask again; the rebuild is the door's page byte for byte."""
    with serve_door(tmp_path / "door", principal="evaluator") as door:
        first = _mint(door, "run-1")
        _publish_whole_run(door, first["token"])
        before = httpx.get(f"{door.url}/board.json", timeout=120).json()
        _mint(door, "run-2")
        _mint(door, "run-3")
        after = httpx.get(f"{door.url}/board.json", timeout=120).json()
        html = httpx.get(f"{door.url}/board", timeout=120)
        document = httpx.get(f"{door.url}/board/proofs.json", timeout=30).json()
        rebuilt = _kestrel_in(
            tmp_path / "reader", "board", "--from", door.url, "--trust", door.url, "-o", "page.html"
        )
        jwks = httpx.get(httpx.get(door.url + METADATA).json()["kestrel_grade_keys_uri"]).json()
    [then] = before["trials"]
    assert then["said"].startswith("trial 1 minted at least; none missing; the door's count as of ")
    [seen] = after["trials"]
    parent = seen["trialOf"]
    [answer] = document["trialsMinted"]  # the door's signed count, in the download
    signed_at = json.loads(_payload(answer))["predicate"]["signedAt"]
    said = f"trials 1–3 minted at least; 2–3 not shown; the door's count as of {signed_at}"
    assert seen["said"] == said
    assert (seen["doorCount"], seen["doorCountAsOf"], seen["allShown"]) == (3, signed_at, False)
    assert seen["countUrl"] == f"{door.url}/v1/trials/of/{parent}"
    assert 'data-missing="2 3"' in html.text
    assert f'href="{seen["countUrl"]}"' in html.text
    # anyone rebuilding it sees the same bytes, and the command line says the same
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert (tmp_path / "reader" / "page.html").read_bytes() == html.content
    assert (
        f"trials of {parent} at {door.url} ({parent}): {said} (ask the door again at "
        in rebuilt.stdout
    )
    # a document carrying no count, or one altered, says so: never "none missing"
    bare = {k: v for k, v in document.items() if k != "trialsMinted"}
    [unseen] = json.loads(published_board(bare, jwks).json)["trials"]
    assert unseen["said"] == (
        "trial 1 minted at least; none missing of those signed; trials minted since unknown: "
        "the published board carries no count of the door's for it"
    )
    forged = {**document, "trialsMinted": [{**answer, "trialsMinted": 1}]}
    [altered] = json.loads(published_board(forged, jwks).json)["trials"]
    assert altered["doorUnread"] == (
        "its published count is not attested: trialsMinted: expected 3 (signed), found 1"
    )
    assert altered["allShown"] is False
    assert published_document([], (), [answer])["trialsMinted"] == [answer]


@pytest.mark.parametrize(("status", "asked"), [(503, 1), (404, 1), (400, 2)])
def test_a_door_answering_a_status_not_about_the_parent_is_asked_once(
    evaluated: dict[str, Any], status: int, asked: int
) -> None:
    """Two parents of one door; the door answers every count with ``status``. A 5xx (its
    store down: each answer may cost the store's timeout) or a 404 (no count served) is
    about the door, not the parent: it is asked once, and the other parent's row says it
    was not asked again, and why. A 400 names the pseudonym asked: each parent is asked."""
    port = urlsplit(evaluated["url"]).port
    assert port is not None
    keys = load_trusted_keys(str(evaluated["jwks"]))
    with _answering(port, status, {"refusal": {"code": "X", "message": "no"}}) as paths:
        board = build_board([evaluated["both"]], trusted_keys=keys).to_json()
    assert len(paths) == asked
    answered = f"answered {status}, not a count"
    for seen in board["trials"]:
        assert seen["allShown"] is False
        assert answered in seen["doorUnread"]
        assert "none missing of those signed; trials minted since unknown: " in seen["said"]
    again = [s for s in board["trials"] if s["doorUnread"].startswith("not asked again")]
    assert len(again) == 2 - asked
    for seen in again:
        assert seen["doorUnread"].startswith("not asked again, the door did not answer a count: ")
