"""Freeze and unseal: the frozen forward scenario is an ordinary sealed scenario with a
fixed tape; every session's proof replays and verifies (on the operator's store, and
once unsealed with the tape embedded, in an empty home); a changed bar fails it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kestrel_protocol import KestrelError, RefusalCode
from kestrel_sdk.runtime.catalog.tapes import HEADER
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.kestrel_sdk.runtime.forward.scenarios import (
    SCENARIO_ID,
    bar_rows,
    bars,
    forward_catalog,
)

AT = "2026-12-01T14:31:02Z"


def _traded(tmp_path: Path, url: str, prefix: int) -> tuple[Runtime, list[str]]:
    """Three sessions trading through the window as bars arrive, the tape then frozen."""
    runtime = Runtime(
        tmp_path / "home",
        [forward_catalog(tmp_path, prefix=prefix)],
        store=open_runtime_store(url),
    )
    runtime.append_bars(SCENARIO_ID, bars(prefix, 1), clock=lambda: AT)
    sids = []
    for label in ("a", "b", "c"):
        sid = runtime.open_session("alice", SCENARIO_ID, label).session_id
        assert sid is not None
        sids.append(sid)
    if prefix:
        for sid in sids:
            runtime.submit("alice", sid, f"advance {prefix}")
    for index in range(prefix + 1, prefix + 6):
        for n, sid in enumerate(sids):
            source = ["buy 3 ACME", "buy 2 BETA limit 20.00 tif gtc", "sell 1 ACME"][n]
            runtime.submit("alice", sid, source if index % 2 else "cancel all")
        runtime.append_bars(SCENARIO_ID, bars(index), clock=lambda: AT)
        for sid in sids:
            runtime.submit("alice", sid, "advance 1")
    runtime.freeze_feed(SCENARIO_ID)
    return runtime, sids


@pytest.mark.parametrize("prefix", [0, 3])
def test_every_proof_of_a_frozen_feed_verifies(
    tmp_path: Path, runtime_store_url: str, prefix: int
) -> None:
    runtime, sids = _traded(tmp_path, runtime_store_url, prefix)
    for sid in sids:
        proof = runtime.proof("alice", sid).model()
        report = runtime.verify_proof(proof.to_json())
        assert report.ok, report.mismatch
        assert runtime.verify(proof.grade).ok
    with pytest.raises(KestrelError) as caught:  # still sealed: no tape, none embedded
        runtime.proof("alice", sids[0], embed_tape=True)
    assert caught.value.code == RefusalCode.SCENARIO_SEALED


def test_an_unsealed_proof_verifies_in_an_empty_home(tmp_path: Path) -> None:
    runtime, sids = _traded(tmp_path, f"sqlite:///{tmp_path / 'home' / 'kestrel.db'}", 2)
    runtime.unseal_feed(SCENARIO_ID)
    tape = runtime.tape("alice", SCENARIO_ID)  # the whole tape: prefix and appended bars
    assert tape == HEADER + "\n" + "".join(bar_rows(k) for k in range(8))
    proof = runtime.proof("alice", sids[0], embed_tape=True).to_json()
    path = tmp_path / "proof.json"
    path.write_text(json.dumps(proof))
    env = {**os.environ, "KESTREL_HOME": str(tmp_path / "verifier")}
    env.pop("KESTREL_CATALOG_PATH", None)
    command = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()", "verify"]
    verified = subprocess.run(
        [*command, str(path)], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # a bar changed after the fact (an appended one) fails the replay
    changed = dict(proof)
    changed["embedded"] = {
        **proof["embedded"],
        "tape": proof["embedded"]["tape"].replace(bar_rows(4), bar_rows(4, acme_close="100.50")),
    }
    assert changed["embedded"]["tape"] != proof["embedded"]["tape"]
    path.write_text(json.dumps(changed))
    refused = subprocess.run(
        [*command, str(path)], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert refused.returncode != 0
    assert "pentads" in refused.stdout + refused.stderr
