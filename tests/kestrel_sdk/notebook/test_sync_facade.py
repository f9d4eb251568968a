"""``Kestrel``: the SDK as blocking calls, in a plain script and where an event loop
already runs (a Jupyter cell), with the same roots as the async SDK."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path

import anyio
import pytest
from kestrel_protocol import KestrelError
from kestrel_sdk import Kestrel, create_sdk, local_transport, remote_transport
from kestrel_sdk.report.agent import SmaCrossAgent

from tests.doors import serve_door

from .conftest import Graded

STEPS = "buy 100 ACME\nadvance 40\nsell 60 ACME\nadvance 10\nsell 40 ACME\nadvance 5"


def test_a_script_trades_grades_and_verifies_with_blocking_calls(graded: Graded) -> None:
    grade = graded.grade
    assert grade.passed, [c.detail for c in grade.grade.conformance.checks if not c.passed]
    assert grade.metrics.fills > 0
    assert graded.kestrel.verify(grade).ok
    proof = graded.session.proof()
    assert proof.grade.root == grade.root
    assert graded.kestrel.verify(proof).ok


def test_the_blocking_run_has_the_async_sdks_roots(graded: Graded) -> None:
    """One implementation: the same agent through the async SDK grades to the same root."""

    async def through_async_sdk() -> str:
        async with create_sdk(local_transport(store="memory:")) as sdk:
            opened = await sdk.open_session("acme-trend")
            assert opened.session is not None
            await SmaCrossAgent("ACME").run(opened.session)
            await opened.session.close()
            return (await sdk.grade_until_done(opened.session.id)).root

    assert anyio.run(through_async_sdk) == graded.grade.root


def test_the_facade_works_where_an_event_loop_already_runs() -> None:
    """As in a Jupyter cell: the caller's loop is running, and the calls still block
    and answer (``anyio.run`` itself would refuse here)."""

    async def cell() -> tuple[str, int, str]:
        with pytest.raises(RuntimeError):
            anyio.run(anyio.sleep, 0)
        with Kestrel(store="memory:") as kestrel:
            session = kestrel.open("acme-trend")
            response = session.submit(STEPS)
            fills = len(session.blotter().blotter.fills)
            session.close()
            grade = session.grade()
            return response.disposition, fills, grade.metrics.pnl

    disposition, fills, pnl = asyncio.run(cell())
    assert disposition == "applied"
    assert fills == 3
    assert Decimal(pnl) != 0


def test_a_closed_facade_refuses_calls_and_closes_once() -> None:
    kestrel = Kestrel(store="memory:")
    assert kestrel.catalog().scenarios
    kestrel.close()
    kestrel.close()
    with pytest.raises(RuntimeError, match="closed"):
        kestrel.open("acme-trend")


def test_a_facade_dropped_without_close_stops_its_loop_thread() -> None:
    """A notebook that never calls close() leaves no thread (nor a hang at exit)."""

    def loops() -> int:
        return sum(1 for t in threading.enumerate() if t.name == "kestrel-sync")

    before = loops()
    kestrel = Kestrel(store="memory:")
    kestrel.open("acme-trend").submit("advance 3")
    assert loops() == before + 1
    del kestrel
    gc.collect()
    assert loops() == before


def test_a_script_that_never_closes_exits_at_once(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        "from kestrel_sdk import Kestrel\n"
        "k = Kestrel(store='memory:')\n"
        "print(k.open('acme-trend').submit('advance 2').delivery.frame.clock.bar)\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"


def test_the_facade_trades_through_a_door_and_gives_its_frames(tmp_path: Path) -> None:
    """The same blocking calls over ``remote_transport``: the proof is the door's (signed)
    and the frames come through the door's SDK routes."""
    with (
        serve_door(tmp_path / "door-home") as door,
        Kestrel(remote_transport(door.url, token=door.token)) as kestrel,
    ):
        session = kestrel.open("acme-chop")
        session.submit(STEPS)
        session.close()
        proof = session.proof()
        frames = proof.to_pandas()
    assert proof.proof.attestation is not None
    assert len(frames.fills) == proof.metrics.fills == 3
    assert list(frames.fills["side"]) == ["buy", "sell", "sell"]
    assert frames.equity["equity"].iloc[-1] - frames.equity["equity"].iloc[0] == pytest.approx(
        float(proof.metrics.pnl), abs=1e-6
    )


def test_a_facade_that_cannot_open_its_store_says_why_and_leaves_no_thread() -> None:
    before = sum(1 for t in threading.enumerate() if t.name == "kestrel-sync")
    with pytest.raises(KestrelError, match="store URL 'nosuchstore://x' is not"):
        Kestrel(store="nosuchstore://x")
    assert sum(1 for t in threading.enumerate() if t.name == "kestrel-sync") == before
