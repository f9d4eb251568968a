"""A forward session stopped at bar 3 of 9 and its proof with the embedded tape cut after
its last bar (its root remade): shared by the board's and ``kestrel verify --trust``'s
tests of the door's signed ``edge``, signed through the real door path."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import kestrel_sdk
from kestrel_door import DoorStore
from kestrel_door.attest import Attestor, attesting
from kestrel_door.feeds import RuntimeFeeds
from kestrel_door.keys import DoorKeys
from kestrel_protocol import root_of
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog.tapes import HEADER
from kestrel_sdk.runtime.stores import open_runtime_store

from tests.kestrel_sdk.runtime.forward.scenarios import SCENARIO_ID, bar_rows, bars, forward_catalog

__all__ = [
    "AT",
    "CUT",
    "SOURCE",
    "STOPPED",
    "TRUSTED_CUT",
    "cut",
    "door_signed_proof",
    "forward_runtime",
    "signed_proof",
    "unattested_proof",
]

AT = "2999-01-01T00:00:00.000000Z"
"""When the bars after the prefix were published: after every decision (a forward run)."""
STOPPED = "stopped at bar 3 of 9: the session did not trade its whole window"
CUT = (
    "the embedded tape holds 4 bars; the door's statement says 10 were published when the "
    "grade was signed: the tape was cut"
)
TRUSTED_CUT = f"expected the forward tape as the door signed it, found {CUT}"
"""What ``kestrel verify --trust`` says of the cut proof (after the field, ``embedded.tape``)."""
SOURCE = "buy 3 ACME\nadvance 2\nsell 3 ACME\nadvance 1"


def forward_runtime(tmp_path: Path) -> Runtime:
    """A forward tape declared with two bars, grown to bar 9."""
    catalog = forward_catalog(tmp_path, prefix=2)
    runtime = Runtime(tmp_path / "home", [catalog], store=open_runtime_store("memory:"))
    runtime.append_bars(SCENARIO_ID, bars(2, 8), clock=lambda: AT)
    return runtime


def door_signed_proof(
    runtime: Runtime, keys: DoorKeys, sources: Sequence[str], *, unseal: bool
) -> dict[str, Any]:
    """Alice's session on the forward scenario of ``runtime``, each of ``sources`` submitted
    through a door that signs its proof (the real door path, under ``keys``); the feed then
    frozen and, with ``unseal``, unsealed, its proof embedding the tape (sealed: no tape)."""
    attestor = Attestor(keys, "https://door.test", feeds=RuntimeFeeds(runtime))

    async def run() -> dict[str, Any]:
        attestor.pseudonyms.load()
        make = attesting(
            lambda p: kestrel_sdk.local_transport(principal=p, runtime=runtime), attestor
        )
        async with kestrel_sdk.create_sdk(make("alice")) as sdk:
            opened = await sdk.open_session(SCENARIO_ID)
            assert opened.session is not None
            for source in sources:
                await opened.session.submit(source)
            runtime.freeze_feed(SCENARIO_ID)
            if unseal:
                runtime.unseal_feed(SCENARIO_ID)
            proof = await sdk.proof(opened.session.id, embed_tape=unseal)
            data: dict[str, Any] = proof.to_json()
            return data

    return anyio.run(run)


def signed_proof(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A session on the forward tape, stopped at bar 3 of 9, traded through a door that
    signs its proof; the tape frozen, unsealed and embedded. The proof, the door's keys."""
    runtime = forward_runtime(tmp_path)
    keys = DoorKeys(DoorStore(tmp_path / "door.db"))
    try:
        return door_signed_proof(runtime, keys, [SOURCE], unseal=True), keys.jwks()
    finally:
        runtime.shutdown()


def unattested_proof(tmp_path: Path) -> dict[str, Any]:
    """The same session, its proof asked of the runtime itself: no door's statement."""
    runtime = forward_runtime(tmp_path)
    sid = runtime.open_session("alice", SCENARIO_ID).session_id
    assert sid is not None
    runtime.submit("alice", sid, SOURCE)
    runtime.freeze_feed(SCENARIO_ID)
    runtime.unseal_feed(SCENARIO_ID)
    proof = runtime.proof("alice", sid, embed_tape=True).to_json()
    runtime.shutdown()
    return proof


def cut(proof: dict[str, Any], bars_kept: int) -> dict[str, Any]:
    """The proof with its embedded tape cut after ``bars_kept`` bars, its root remade
    (over every member but the door's statement, which is outside it)."""
    tape = HEADER + "\n" + "".join(bar_rows(k) for k in range(bars_kept))
    data = {k: v for k, v in proof.items() if k != "root"}
    data["embedded"] = {**proof["embedded"], "tape": tape}
    rooted = {k: v for k, v in data.items() if k != "attestation"}
    return data | {"root": root_of(rooted)}
