"""A forward proof verified by someone who does not hold its tape: a session that
traded past the declared prefix, its proof not embedding the tape, is refused saying
so (``UNKNOWN_SCENARIO``: the bar it reached, the bars held here, how to get a proof
that verifies), the same through the SDK's runtime and ``kestrel verify`` (was: replayed
over the prefix alone into a mismatch at a pentad's ``prev``, which reads as a forged
proof). Every verification that holds says which tape it replayed over: the declared
prefix (which held every bar the session reached), the bars the proof embeds, or those
published on the operator's store (``verify_proof`` and ``verify`` of a grade, the
binding the MCP and ``/v1`` verify tool runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_sdk.cli import cli as kestrel_cli
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.kestrel_sdk.runtime.forward.scenarios import SCENARIO_ID, bars, forward_catalog

AT = "2026-12-01T14:31:02Z"
PREFIX = 3


@pytest.fixture
def traded(tmp_path: Path) -> tuple[Runtime, Path, str, str]:
    """The operator's runtime, its catalog, and two sessions on the frozen feed: one that
    traded to bar 5 (past the prefix of 3 bars), one that stayed at bar 1."""
    catalog = forward_catalog(tmp_path, prefix=PREFIX)
    runtime = Runtime(tmp_path / "home", [catalog], store=open_runtime_store("memory:"))
    runtime.append_bars(SCENARIO_ID, bars(PREFIX, 4), clock=lambda: AT)
    far = runtime.open_session("alice", SCENARIO_ID, "far").session_id
    near = runtime.open_session("alice", SCENARIO_ID, "near").session_id
    assert far is not None
    assert near is not None
    runtime.submit("alice", far, "buy 3 ACME\nadvance 5")
    runtime.submit("alice", near, "buy 3 ACME\nadvance 1")
    runtime.freeze_feed(SCENARIO_ID)
    return runtime, catalog, far, near


def _verify(path: Path, proof: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    """``kestrel verify PROOF`` with the forward scenario's catalog (its prefix only)."""
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(path.parent / "catalog"))
    path.write_text(json.dumps(proof))
    return CliRunner().invoke(kestrel_cli, ["verify", str(path)])


def test_a_proof_past_the_prefix_without_its_tape_is_refused_saying_so(
    tmp_path: Path, traded: tuple[Runtime, Path, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime, catalog, far, near = traded
    proof = runtime.proof("alice", far).to_json()

    # a stranger's runtime (its store holds no bar of the feed), and kestrel verify
    stranger = Runtime(tmp_path / "stranger", [catalog], store=open_runtime_store("memory:"))
    with pytest.raises(KestrelError) as caught:
        stranger.verify_proof(proof)
    assert caught.value.code == RefusalCode.UNKNOWN_SCENARIO
    said = caught.value.message
    assert f"its session traded forward scenario {SCENARIO_ID} to bar 5" in said, said
    assert "this verifier holds 3 bar(s) of its tape (the proof does not embed it)" in said
    assert "--embed-tape" in said
    assert caught.value.detail == {"scenario": SCENARIO_ID, "bar": 5, "bars": PREFIX}
    result = _verify(tmp_path / "far.json", proof, monkeypatch)
    assert result.exit_code != 0
    assert "UNKNOWN_SCENARIO" in result.output, result.output
    assert f"traded forward scenario {SCENARIO_ID} to bar 5" in result.output
    assert "pentads" not in result.output

    # the operator's store holds the tape: verified over it, and said so
    report = runtime.verify_proof(proof)
    assert report.ok, report.mismatch
    assert report.provenance is not None
    on_store = "replayed over the 7 bar(s) published on this store (3 of them the declared prefix)"
    assert on_store in report.provenance.detail
    graded = runtime.verify(runtime.proof("alice", far).model().grade)
    assert graded.ok
    assert graded.provenance is not None
    assert on_store in graded.provenance.detail

    # within the prefix: verified in full, over the prefix, and said so
    near_proof = runtime.proof("alice", near).to_json()
    prefix_only = "forward tape: replayed over its declared prefix of 3 bar(s)"
    report = stranger.verify_proof(near_proof)
    assert report.ok
    assert report.provenance is not None
    assert prefix_only in report.provenance.detail
    result = _verify(tmp_path / "near.json", near_proof, monkeypatch)
    assert result.exit_code == 0, result.output
    assert prefix_only in result.output

    # once unsealed, the tape embedded: verified over it anywhere
    runtime.unseal_feed(SCENARIO_ID)
    embedded = runtime.proof("alice", far, embed_tape=True).to_json()
    report = stranger.verify_proof(embedded)
    assert report.ok
    assert report.provenance is not None
    assert "replayed over the 7 bar(s) the proof embeds" in report.provenance.detail
    result = _verify(tmp_path / "embedded.json", embedded, monkeypatch)
    assert result.exit_code == 0, result.output
    assert "replayed over the 7 bar(s) the proof embeds" in result.output
