"""The board of issue 37's Must show: a directory holding an attested proof (a sealed
door signed its grade), a replayed-only proof, a tampered proof and the embedded-tape
forgery gives four rows with the right badges, the tampered and forged ones not ranked
(nor, under --trust, the replayed-only one: issue 45), and the page renders in headless
Chromium."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser import dump_dom
from tests.doors import serve_door
from tests.kestrel_sdk.board.proofs import door_proof, forged_proof, made_proof, tampered, write
from tests.kestrel_sdk.board.test_board import BOLD, CAUTIOUS, kestrel
from tests.peers import INSTALL_SERVICES, chromium, require_peer

METADATA = "/.well-known/oauth-protected-resource"


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, str]:
    """The four proofs in one directory, the door's JWKS saved to a file, and (while the
    door still serves) the board built with ``--trust`` at the door's URL, as JSON."""
    root = tmp_path_factory.mktemp("attested")
    folder = root / "proofs"
    with serve_door(root / "door", "--seal", "acme-chop") as door:
        attested = door_proof(door.url, door.token, "acme-chop", CAUTIOUS)
        keys_uri = httpx.get(door.url + METADATA).json()["kestrel_grade_keys_uri"]
        jwks = root / "door-keys.json"
        jwks.write_text(httpx.get(keys_uri).text, encoding="utf-8")
        honest = made_proof(root / "home", "acme-chop", BOLD)
        write(folder / "sealed-agent" / "chop.json", attested)
        write(folder / "local-agent" / "chop.json", honest)
        write(folder / "tampered.json", tampered(honest))
        write(folder / "forged.json", forged_proof(root / "forger"))
        by_url = kestrel("board", "--allow-failed", str(folder), "--trust", door.url, "--json")
    assert by_url.returncode == 0, by_url.stderr
    return folder, jwks, by_url.stdout, door.url


def _rows(board_json: str) -> dict[str, dict[str, Any]]:
    rows = json.loads(board_json)["rows"]
    return {
        Path(r["source"]).parent.name if "agent" in r["source"] else Path(r["source"]).stem: r
        for r in rows
    }


def _check(rows: dict[str, dict[str, Any]], issuer: str) -> None:
    assert sorted(rows) == ["forged", "local-agent", "sealed-agent", "tampered"]
    sealed = rows["sealed-agent"]
    assert sealed["badge"] == "attested-and-sealed"
    assert sealed["attestation"].startswith(f"attested by {issuer} (key ")
    assert sealed["attestation"].endswith("; sealed")
    assert rows["local-agent"]["badge"] == "replayed-only"
    assert rows["local-agent"]["attestation"] is None
    assert rows["tampered"]["badge"] == "failed"
    assert rows["tampered"]["reason"].startswith("verification failed: grade.metrics.pnl")
    assert rows["forged"]["badge"] == "failed"
    assert "not the catalog's acme-trend" in rows["forged"]["reason"]
    # under --trust only the attested proof is ranked; the honest unsigned one is listed
    # apart saying why; the tampered and forged ones never
    assert rows["sealed-agent"]["rank"] == 1
    assert rows["sealed-agent"]["agent"].startswith("p_")  # the principal the door names
    assert rows["local-agent"]["rank"] is None
    assert rows["local-agent"]["unranked"].startswith("not attested: under --trust")
    assert rows["tampered"]["rank"] is None
    assert rows["forged"]["rank"] is None


def test_four_rows_with_the_right_badges_by_the_doors_url(
    evaluation: tuple[Path, Path, str, str],
) -> None:
    _, _, by_url, url = evaluation
    _check(_rows(by_url), url)


def test_the_same_with_the_doors_keys_in_a_file_once_it_is_gone(
    evaluation: tuple[Path, Path, str, str],
) -> None:
    folder, jwks, _, url = evaluation
    done = kestrel("board", "--allow-failed", str(folder), "--trust", str(jwks), "--json")
    assert done.returncode == 0, done.stderr
    _check(_rows(done.stdout), url)


def test_without_trusted_keys_an_attested_proof_is_replayed_only(
    evaluation: tuple[Path, Path, str, str],
) -> None:
    folder, _, _, _ = evaluation
    done = kestrel("board", "--allow-failed", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    sealed = _rows(done.stdout)["sealed-agent"]
    assert sealed["badge"] == "replayed-only"
    assert sealed["attestation"] == "carries a door's signed statement, not checked (no --trust)"


def test_a_statement_that_does_not_hold_fails_its_row(
    evaluation: tuple[Path, Path, str, str], tmp_path: Path
) -> None:
    folder, jwks, _, _ = evaluation
    attested = json.loads((folder / "sealed-agent" / "chop.json").read_bytes())
    bad = copy.deepcopy(attested)
    sig = bad["attestation"]["signatures"][0]["sig"]
    bad["attestation"]["signatures"][0]["sig"] = ("A" if sig[0] != "A" else "B") + sig[1:]
    write(tmp_path / "resigned" / "chop.json", bad)
    done = kestrel("board", "--allow-failed", str(tmp_path), "--trust", str(jwks), "--json")
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["rows"]
    assert row["badge"] == "failed"
    assert row["reason"].startswith("verification failed: attestation.signatures[0].sig")
    assert row["rank"] is None


def test_the_page_renders_four_rows_in_headless_chromium(
    evaluation: tuple[Path, Path, str, str], tmp_path: Path
) -> None:
    browser = require_peer(chromium(), what="Chromium", install=INSTALL_SERVICES)
    folder, jwks, _, _ = evaluation
    page = tmp_path / "board.html"
    done = kestrel("board", "--allow-failed", str(folder), "--trust", str(jwks), "-o", str(page))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"{page}: 4 proofs (1 attested-and-sealed, 1 replayed-only, 2 failed)"
    )
    dom = dump_dom(browser, page, tmp_path / "profile")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-rendered="ok"' in dom.stdout
    every = dom.stdout[dom.stdout.index('id="proofs"') :]
    shown = re.findall(r'data-badge="([^"]+)" data-rank="([^"]+)" data-source="([^"]+)"', every)
    badges = {
        Path(s).stem if "agent" not in s else Path(s).parent.name: (b, r) for b, r, s in shown
    }
    assert badges["sealed-agent"][0] == "attested-and-sealed"
    assert badges["local-agent"][0] == "replayed-only"
    assert badges["tampered"] == ("failed", "—")
    assert badges["forged"] == ("failed", "—")
    assert (badges["sealed-agent"][1], badges["local-agent"][1]) == ("1", "—")


def test_keys_that_cannot_be_read_are_named(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-keys.json"
    done = kestrel("board", str(tmp_path), "--trust", str(missing))
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"kestrel: INVALID_INPUT: cannot read trusted keys from {missing}"
    )
    assert not (tmp_path / "board.html").exists()
