"""A proof, grade or reveal whose text names one key twice in an object is refused by
every reader a stranger's file reaches, naming the key (issue 48, session 15).

``json`` keeps the last value of a repeated key: a file whose reader (a human, an editor,
a first-value parser) sees a pnl of 9999.00 could verify with the real metrics written
after them. ``kestrel verify``, ``kestrel report``, ``kestrel board`` (a proof and a
``--reveal``) and ``kestrel-door board publish`` each verified or ranked such a file,
``kestrel board --from URL`` such a download of a door's published board, and
``--trust`` such a file of keys.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from kestrel_door.cli import door_group
from kestrel_sdk import published_document
from kestrel_sdk.cli import cli

from tests.kestrel_sdk.board.proofs import made_proof
from tests.kestrel_sdk.board.test_board import kestrel

REFUSED = 'the key "metrics" is repeated in one object: a reader may take either value'


def _repeated(proof: dict[str, Any]) -> str:
    """The proof's text with a pnl of 9999.00 written first in its grade (json keeps the
    real metrics, written after them)."""
    text = json.dumps(proof, indent=1)
    head = '"grade": {'
    assert text.count(head) == 1
    return text.replace(head, head + '\n  "metrics": {"pnl": "9999.00"},')


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("repeated")
    proof = made_proof(root / "home", "acme-chop", ("buy 10 ACME", "advance 3000"))
    clean = root / "clean.json"
    clean.write_text(json.dumps(proof), encoding="utf-8")
    repeated = root / "repeated.json"
    repeated.write_text(_repeated(proof), encoding="utf-8")
    grade = root / "grade.json"
    grade.write_text(_repeated({"grade": proof["grade"]}).split('"grade": ', 1)[1][:-1])
    assert json.loads(grade.read_text()) == proof["grade"]
    return {"root": root, "clean": clean, "proof": repeated, "grade": grade, "home": root / "home"}


def _cli(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args])


def test_kestrel_verify_refuses_a_repeated_key_naming_it(files: dict[str, Path]) -> None:
    for name in ("proof", "grade"):
        done = _cli(files["home"], "verify", str(files[name]))
        assert done.exit_code == 1, done.output
        assert f"{files[name]}: not a Kestrel proof or grade: {REFUSED}" in done.stderr


def test_kestrel_report_refuses_a_repeated_key_naming_it(files: dict[str, Path]) -> None:
    done = _cli(files["home"], "report", str(files["proof"]), "-o", str(files["root"] / "r.html"))
    assert done.exit_code == 1, done.output
    assert REFUSED in done.stderr
    assert not (files["root"] / "r.html").exists()


def test_the_board_fails_the_row_of_a_repeated_key(files: dict[str, Path]) -> None:
    done = kestrel("board", "--allow-failed", str(files["proof"]), "--json")
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["rows"]
    assert (row["badge"], row["reason"]) == ("failed", REFUSED)


def test_a_reveal_with_a_repeated_key_is_refused(files: dict[str, Path]) -> None:
    reveal = files["root"] / "reveal.json"
    reveal.write_text('{"kind": "kestrel.reveal", "kind": "kestrel.reveal"}', encoding="utf-8")
    refused = 'the key "kind" is repeated in one object: a reader may take either value'
    board = kestrel("board", str(files["proof"]), "--reveal", str(reveal))
    assert board.returncode == 1
    assert f"--reveal {reveal}: {refused}" in board.stderr
    verify = _cli(files["home"], "verify", str(files["clean"]), "--reveal", str(reveal))
    assert verify.exit_code == 1, verify.output
    assert f"--reveal {reveal}: not a reveal: {refused}" in verify.stderr


def test_the_door_refuses_to_publish_a_repeated_key(files: dict[str, Path]) -> None:
    done = CliRunner().invoke(
        door_group,
        ["--home", str(files["root"] / "door"), "board", "publish", str(files["proof"])],
    )
    assert done.exit_code != 0, done.output
    assert f"{files['proof']}: not a readable proof file: {REFUSED}" in done.output


@contextmanager
def _serving(body: bytes) -> Iterator[str]:
    """A web server answering every GET with ``body`` (a door's published board)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        thread.join()


def test_a_published_board_with_a_repeated_key_is_refused(files: dict[str, Path]) -> None:
    proof = json.loads(files["clean"].read_text(encoding="utf-8"))
    body = _repeated(published_document([("alice", proof)])).encode("utf-8")
    jwks = files["root"] / "keys.json"
    jwks.write_text('{"keys": []}', encoding="utf-8")
    with _serving(body) as url:
        done = kestrel("board", "--from", url, "--trust", str(jwks), "--allow-failed", "--json")
    assert done.returncode == 1, done.stdout
    assert f"cannot read the board {url} publishes: {REFUSED}" in done.stderr


def test_trusted_keys_with_a_repeated_key_are_refused(files: dict[str, Path]) -> None:
    jwks = files["root"] / "repeated-keys.json"
    jwks.write_text('{"keys": [{"kty": "none"}], "keys": []}', encoding="utf-8")
    done = _cli(files["home"], "verify", str(files["clean"]), "--trust", str(jwks))
    assert done.exit_code == 1, done.output
    refused = 'the key "keys" is repeated in one object: a reader may take either value'
    assert f"cannot read trusted keys from {jwks}: {refused}" in done.stderr
