"""A board fetches a forward tape once, however many of its proofs need it (issue 48,
session 17).

Under ``--trust`` a proof of a forward scenario that does not embed its tape is replayed
over the tape its door publishes (``GET /v1/feeds/{id}/tape``). The board fetched that
tape anew for every such proof: a board of many runs on one feed asked the door for the
same tape once a row. It now reads each tape once a build. A door serves on 127.0.0.1
(:mod:`tests.kestrel_door.test_forward_edge_root`'s), counting the requests for its tape
in its own process (:mod:`tests.tape_reads`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_protocol import canonical_json
from kestrel_sdk.board import build_board

from tests.kestrel_door.test_forward_edge_root import STOPPED, Served, served
from tests.tape_reads import tape_reads

__all__ = ["served"]  # the door, its tape's requests counted

RUNS = ("one", "two", "three", "four")


def test_a_board_of_many_tapeless_proofs_fetches_their_tape_once(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four copies of alice's proof made while the feed was sealed (no tape): each row
    replayed over the tape the door publishes and attested, with one request for it.
    Was: four requests."""
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(served.catalog))
    for name in RUNS:
        (tmp_path / "proofs").mkdir(exist_ok=True)
        (tmp_path / "proofs" / f"{name}.json").write_bytes(canonical_json(served.bare))
    before = len(tape_reads(served.home))
    board = build_board([tmp_path / "proofs"], trusted_keys=served.jwks)
    assert len(tape_reads(served.home)) - before == 1
    assert len(board.rows) == len(RUNS)
    for row in board.rows:
        assert row.attested, row.reason
        assert "unconfirmed" not in row.reason, row.reason
        assert row.checks["whole-window"] == f"failed: {STOPPED}"
