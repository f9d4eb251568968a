"""A board checks each proof once, as ``kestrel verify`` checks it (issue 48, session 17).

The board verified a proof (``kestrel verify``'s check, the door's signed statement
included under ``--trust``) and then checked that statement a second time to learn whom
it names, and read back from the verifier's text whether a forward tape was confirmed.
The verification now returns what it found as values (:class:`~kestrel_sdk.proof_check.
ProofCheck`): the board, ``kestrel verify --trust`` and the SDK read the same ones.

And every row, window, baseline and reveal loaded this machine's catalog anew (a user
catalog of large tapes: its directories walked, its tapes' shapes checked, each time):
a build now loads it once (:class:`~kestrel_sdk.board.BoardCatalog`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kestrel_sdk import trust
from kestrel_sdk.board import build_board
from kestrel_sdk.proof_check import check_proof
from kestrel_sdk.runtime import catalog
from kestrel_sdk.runtime.catalog import load_catalog, loader, served

from tests.kestrel_sdk.board.forward_proofs import signed_proof
from tests.kestrel_sdk.board.proofs import made_proof, write
from tests.kestrel_sdk.board.test_board import BOLD, CAUTIOUS


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every check of a door's statement from now on, by the issuer it found."""
    checks: list[str] = []
    real = trust.check_attestation

    def counted(proof: Any, jwks: Any) -> trust.Attested:
        attested = real(proof, jwks)
        checks.append(attested.issuer)
        return attested

    monkeypatch.setattr(trust, "check_attestation", counted)
    return checks


def test_a_board_checks_each_door_s_statement_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three attested proofs under ``--trust``: three checks of a statement, each row
    crediting whom its statement names. Was: six (each statement checked twice)."""
    proof, jwks = signed_proof(tmp_path)
    for name in ("one", "two", "three"):
        write(tmp_path / "proofs" / f"{name}.json", proof)
    checks = _counting(monkeypatch)
    board = build_board([tmp_path / "proofs"], trusted_keys=jwks)
    assert checks == ["https://door.test"] * 3
    for row in board.rows:
        assert row.issuer == "https://door.test", row.reason
        assert row.agent.startswith("p_"), row.agent  # the principal the statement names
        assert row.reason.startswith("verified by replay, attested by https://door.test (key ")


def test_the_check_returns_what_it_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's check says who signed and whom the statement names as values, the
    report's ``attestedBy`` the same words as before; without keys, neither."""
    proof, jwks = signed_proof(tmp_path)
    checks = _counting(monkeypatch)
    checked = check_proof(proof, load_catalog(), trusted_keys=jwks)
    assert checks == ["https://door.test"]
    assert checked.report.ok, checked.report.mismatch
    assert checked.attested is not None
    assert checked.attested.issuer == "https://door.test"
    assert checked.attested.principal is not None
    assert checked.report.attested_by == str(checked.attested)
    assert checked.fetched is None  # the proof embeds its tape: nothing to fetch
    assert checked.unconfirmed == ""
    unchecked = check_proof(proof, load_catalog())
    assert unchecked.attested is None
    assert unchecked.report.attestation == "unchecked"


def test_a_board_of_many_proofs_loads_the_catalog_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four proofs of acme-chop: four rows verified, their windows read, acme-chop's
    buy-and-hold baseline traded and the tape's twins looked up, over one load of the
    catalog (every name the loader goes by counted). Was: a load per row and per use."""
    for name, script in (("a", BOLD), ("b", CAUTIOUS), ("c", BOLD), ("d", CAUTIOUS)):
        write(
            tmp_path / "proofs" / f"{name}.json", made_proof(tmp_path / name, "acme-chop", script)
        )
    loads: list[object] = []
    real = loader.load_catalog

    def counted(*args: Any, **kwargs: Any) -> catalog.CatalogIndex:
        loads.append(args)
        return real(*args, **kwargs)

    for module in (catalog, loader, served):
        monkeypatch.setattr(module, "load_catalog", counted)
    board = build_board([tmp_path / "proofs"], "return", home=tmp_path / "verifier")
    assert [row.badge for row in board.rows] == ["replayed-only"] * 4, board.rows
    [ranking] = board.scenarios
    baseline = board.baseline(ranking)
    assert baseline is not None
    assert baseline.grade is not None, baseline.why  # traded over the same catalog
    assert len(loads) == 1
