"""Proofs for board tests: honest ones made through the SDK, a tampered copy, the
embedded-tape forgery (a proof that says acme-trend but embeds a tripled tape, whose
every root is consistent, so that replay alone passes it), a proof of an invented
scenario, and a door's proof stripped of its statement and re-rooted."""

from __future__ import annotations

import copy
import csv
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
from kestrel_protocol import Pentad, Proof, SessionRecord, canonical_json
from kestrel_sdk import create_sdk, local_transport, remote_transport
from kestrel_sdk.runtime import Runtime
from kestrel_sdk.runtime.catalog import CatalogIndex, load_catalog, load_embedded, tape_csv
from kestrel_sdk.runtime.catalog.objects import catalog_object
from kestrel_sdk.runtime.engine import compute_grade

__all__ = [
    "door_proof",
    "forged_proof",
    "invented_proof",
    "made_proof",
    "stripped_and_rerooted",
    "tampered",
    "write",
]

TRADE = ("buy 100 ACME", "advance 20", "sell 100 ACME", "advance 3000")
"""Traded to the end of the tape: a session that stops early fails the board."""


async def _trade(
    transport: Any, scenario: str, script: tuple[str, ...], embed: bool, peek: bool = False
) -> Any:
    sdk = create_sdk(transport)
    async with sdk:
        opened = await sdk.open_session(scenario)
        assert opened.session is not None
        for source in script:
            if peek:  # the whole tape, future included, read while trading
                await sdk.tape(scenario)
            await opened.session.submit(source)
        proof = await sdk.proof(opened.session.id, embed)
    return proof.to_json()


def made_proof(
    home: Path,
    scenario: str = "acme-chop",
    script: tuple[str, ...] = TRADE,
    embed: bool = False,
    peek: bool = False,
) -> dict[str, Any]:
    """The proof of a session traded on this machine's runtime in ``home`` (``peek``:
    reading the tape before each submit, which fails ``no-lookahead``)."""
    return anyio.run(_trade, local_transport(home=home), scenario, script, embed, peek)


def door_proof(
    url: str,
    token: str,
    scenario: str = "acme-chop",
    script: tuple[str, ...] = TRADE,
    *,
    peek: bool = False,
) -> dict[str, Any]:
    """The proof of a session traded through a door (which signs the grade it serves;
    ``peek``: reading the tape before each submit, on a scenario the door does not seal)."""
    transport = remote_transport(url, token)
    return anyio.run(_trade, transport, scenario, script, False, peek)


def tripled(tape: str) -> str:
    """``tape`` (canonical CSV) with every price tripled: the forger's tape."""
    rows = list(csv.DictReader(io.StringIO(tape)))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        for column in ("open", "high", "low", "close"):
            row[column] = str(Decimal(row[column]) * 3)
        writer.writerow(row)
    return out.getvalue()


def forged_proof(home: Path) -> dict[str, Any]:
    """acme-trend's terms over its tape with every price tripled, traded by a runtime
    whose catalog holds only that scenario under the id acme-trend, proof embedded."""
    real = load_catalog().get("acme-trend")
    assert real is not None
    fake = load_embedded(real.scenario.to_json(), tripled(tape_csv(real)))
    assert fake.scenario.id == "acme-trend"
    assert fake.scenario.root != real.scenario.root
    index = CatalogIndex(catalog_object([fake.scenario]), {"acme-trend": fake}, [])
    runtime = Runtime(home, catalog=index)
    transport = local_transport(runtime=runtime, own_artifacts=False)
    script = ("buy 500 ACME", "advance 2000", "sell 500 ACME", "advance 1")
    return anyio.run(_trade, transport, "acme-trend", script, True)


def invented_proof(home: Path, scenario_id: str, script: tuple[str, ...] = TRADE) -> dict[str, Any]:
    """A proof of a scenario made up on the spot (acme-chop's terms and tape under the
    new id ``scenario_id``), traded by a runtime whose catalog holds only it, embedded:
    it replays anywhere, and no one else ever played it."""
    real = load_catalog().get("acme-chop")
    assert real is not None
    made = load_embedded({**real.scenario.to_json(), "id": scenario_id}, tape_csv(real))
    assert made.scenario.id == scenario_id
    index = CatalogIndex(catalog_object([made.scenario]), {scenario_id: made}, [])
    transport = local_transport(runtime=Runtime(home, catalog=index), own_artifacts=False)
    return anyio.run(_trade, transport, scenario_id, script, True)


def stripped_and_rerooted(proof: dict[str, Any]) -> dict[str, Any]:
    """A door's proof with its signed statement removed and ``record.lookahead`` edited to
    say sealed with nothing seen (the reads of a peek erased), every root recomputed (the
    grade by replay): replay passes it; only the statement it lost could tell."""
    loaded = load_catalog().get(proof["scenario"]["id"])
    assert loaded is not None
    lookahead = {"sealed": True, "reads": []}
    record = SessionRecord.with_root(**{**proof["record"], "lookahead": lookahead})
    pentads = [Pentad.parse(p) for p in proof["pentads"]]
    grade = compute_grade(loaded, record, pentads)
    members = {**proof, "record": record.to_json(), "grade": grade.to_json()}
    members.pop("attestation", None)
    rerooted: dict[str, Any] = Proof.with_root(**members).to_json()
    return rerooted


def tampered(proof: dict[str, Any]) -> dict[str, Any]:
    """``proof`` with its grade's P&L raised (every root left as it was)."""
    changed = copy.deepcopy(proof)
    changed["grade"]["metrics"]["pnl"] = "999999.00"
    return changed


def write(path: Path, proof: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(canonical_json(proof) + b"\n")
    return path


def as_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_bytes())
    return data
