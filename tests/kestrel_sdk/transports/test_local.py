from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest
from kestrel_protocol import (
    GradeResult,
    KestrelError,
    Offer,
    OperationResumption,
    Payment,
    root_of,
)
from kestrel_protocol.ports import Transport
from kestrel_protocol.surface import SURFACE
from kestrel_sdk import SdkError, SdkLocalError, create_sdk, local_transport
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores.sqlite import SqliteStore
from kestrel_sdk.transports.offload import OFFLOAD, _heavy


def counted_hops(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """From now on, each function sent to a worker thread (``anyio.to_thread``), in order."""
    hops: list[object] = []
    run_sync = anyio.to_thread.run_sync

    async def counting(fn: object, *args: object, **kwargs: object) -> object:
        hops.append(fn)
        return await run_sync(fn, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(anyio.to_thread, "run_sync", counting)
    return hops


def _sqlite(runtime: Runtime) -> SqliteStore:
    """The runtime's store, which these tests reach into: the embedded SQLite one."""
    assert isinstance(runtime.store, SqliteStore)
    return runtime.store


pytestmark = pytest.mark.anyio


async def test_sdk_workflow_over_local_transport(tmp_path: Path) -> None:
    transport = local_transport(home=tmp_path)
    assert isinstance(transport, Transport)
    async with create_sdk(transport) as sdk:
        catalog = await sdk.catalog()
        assert "acme-trend" in [s.id for s in catalog.scenarios]
        assert (await sdk.scenario("acme-trend")).id == "acme-trend"
        assert (await sdk.tape("acme-trend")).startswith("time,symbol,open,high,low,close,volume")
        report = await sdk.validate("buy 10 NOPE\n", "acme-trend")
        assert not report.ok
        assert report.diagnostics[0].code == "K201"
        opened = await sdk.open_session("acme-trend")
        assert not opened.gated
        assert opened.session is not None
        session = opened.session
        response = await session.submit("buy 10 ACME\nadvance 5\n")
        assert response.disposition == "applied"
        delivery = await session.frame()
        assert delivery.frame_root == response.delivery.frame_root == root_of(delivery.frame)
        blotter = await session.blotter()
        assert blotter.orders[0].status == "filled"
        record = await session.close()
        assert record.head == (await session.frame()).frame_root
        graded = await sdk.grade(session.id)
        while isinstance(graded, OperationResumption):
            await anyio.sleep(graded.resume_after_ms / 1000)
            graded = await sdk.resume(graded)
        assert isinstance(graded, GradeResult)
        assert await sdk.artifact(graded.root) == graded.to_json()
        assert (await sdk.verify(graded)).ok


async def test_refusals_raise_sdk_local_error_with_the_code(tmp_path: Path) -> None:
    async with create_sdk(local_transport(home=tmp_path)) as sdk:
        with pytest.raises(SdkLocalError) as err:
            await sdk.open_session("no-such-scenario")
        assert err.value.code == "UNKNOWN_SCENARIO"
        assert isinstance(err.value, SdkError)
        assert isinstance(err.value, KestrelError)
        with pytest.raises(SdkLocalError) as bad:
            await sdk.session("ks_nope").submit("advance 1")
        assert bad.value.code == "UNKNOWN_SESSION"
        with pytest.raises(SdkLocalError) as art:
            await sdk.artifact("sha256:" + "0" * 64)
        assert art.value.code == "UNKNOWN_ARTIFACT"
        with pytest.raises(SdkLocalError) as op:
            await sdk.resume("opt_nope")
        assert op.value.code == "UNKNOWN_OPERATION"
        opened = await sdk.open_session("acme-trend")
        assert opened.session is not None
        with pytest.raises(SdkLocalError) as invalid:
            await opened.session.submit("buy ten ACME")
        assert invalid.value.code == "INVALID_SOURCE"
        assert invalid.value.detail["diagnostics"][0]["code"] == "K102"


async def test_principals_sharing_a_runtime_cannot_see_each_other(tmp_path: Path) -> None:
    runtime = Runtime(tmp_path)
    alice = create_sdk(local_transport(principal="alice", runtime=runtime))
    bob = create_sdk(local_transport(principal="bob", runtime=runtime))
    opened = await alice.open_session("acme-trend", label="x")
    assert opened.session is not None
    sid = opened.session.id
    with pytest.raises(SdkLocalError) as err:
        await bob.session(sid).frame()
    assert err.value.code == "UNKNOWN_SESSION"
    bob_opened = await bob.open_session("acme-trend", label="x")
    assert bob_opened.session is not None
    assert bob_opened.session.id != sid
    await alice.aclose()
    await bob.aclose()
    # a shared runtime is the caller's: closing a transport leaves it usable
    assert runtime.frame("alice", sid).model().frame.seq == 0
    runtime.shutdown()


class _QuotaGate:
    def check(self, principal: str, scenario: str, payment: Payment | None) -> Offer | None:
        if payment is not None:
            return None
        return Offer.with_root(
            offer_id="of_q",
            scenario=scenario,
            amount="0.50",
            currency="USD",
            description="quota spent",
            expires_at="2031-01-01T00:00:00Z",
            accepts=["voucher"],
        )


async def test_a_gated_open_returns_the_offer_as_data(tmp_path: Path) -> None:
    async with create_sdk(local_transport(home=tmp_path, gate=_QuotaGate())) as sdk:
        gated = await sdk.open_session("acme-trend")
        assert gated.gated
        assert gated.session is None
        assert gated.payment is not None
        assert gated.payment.offer_id == "of_q"
        paid = await sdk.open_session("acme-trend", payment=Payment(offer_id="of_q", voucher="v"))
        assert not paid.gated
        assert paid.session is not None


async def test_long_submits_run_off_the_loop_with_the_same_result(tmp_path: Path) -> None:
    assert _heavy("advance 5000")
    assert _heavy("advance to 2024-01-01T00:00:00Z")
    assert not _heavy("advance 1")
    assert not _heavy("buy 10 ACME\nadvance 20")
    sdk = create_sdk(local_transport(home=tmp_path / "a"))
    session = (await sdk.open_session("minute-200k")).session
    assert session is not None
    offloaded = await session.submit("buy 10 ACME tif gtc\nadvance 2500")
    await sdk.aclose()
    direct = Runtime(tmp_path / "b")
    sid = direct.open_session("local", "minute-200k").session_id
    assert sid == session.id
    inline = direct.submit("local", sid, "buy 10 ACME tif gtc\nadvance 2500").model()
    assert offloaded.delivery.frame_root == inline.delivery.frame_root
    assert offloaded.pentad.root == inline.pentad.root
    direct.shutdown()


async def test_a_locked_store_is_backend_unavailable(tmp_path: Path) -> None:
    runtime = Runtime(tmp_path)
    sdk = create_sdk(local_transport(runtime=runtime))
    opened = await sdk.open_session("acme-trend")
    assert opened.session is not None
    _sqlite(runtime)._conn.execute("PRAGMA busy_timeout = 50")
    blocker = sqlite3.connect(_sqlite(runtime).path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        with pytest.raises(SdkLocalError) as err:
            await opened.session.submit("advance 1")
        assert err.value.code == "BACKEND_UNAVAILABLE"
        assert "locked" in err.value.message
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    response = await opened.session.submit("advance 1")  # reloaded, nothing was lost
    assert response.pentad.seq == 1
    runtime.shutdown()


async def test_small_blotters_are_built_on_the_loop_large_ones_off_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = Runtime(tmp_path)
    sdk = create_sdk(local_transport(runtime=runtime))
    session = (await sdk.open_session("minute-200k")).session
    assert session is not None
    await session.submit("buy 1 ACME\nadvance 1\n" * 3)
    hops = counted_hops(monkeypatch)
    small = await session.blotter()
    assert hops == []
    assert small == runtime.blotter("local", session.id)
    assert len(small.orders) == 3
    await session.submit("buy 1 ACME limit 0.01 tif gtc\n" * 300)
    hops.clear()
    large = await session.blotter()
    assert len(hops) == 1  # built in a worker thread
    assert large == runtime.blotter("local", session.id)
    assert len(large.orders) == 303
    await session.close()
    hops.clear()
    closed = await session.blotter()  # read from the store, off the loop
    assert len(hops) == 1
    assert closed == runtime.blotter("local", session.id)
    assert len(closed.orders) == 303
    runtime.shutdown()


async def test_sdk_proof_grades_an_open_session_and_refuses_another_principals(
    tmp_path: Path,
) -> None:
    runtime = Runtime(tmp_path)
    try:
        alice = create_sdk(local_transport(runtime=runtime, principal="alice"))
        bob = create_sdk(local_transport(runtime=runtime, principal="bob"))
        opened = await alice.open_session("acme-trend")
        assert opened.session is not None
        await opened.session.submit("buy 10 ACME\nadvance 5\n")
        proof = await alice.proof(opened.session.id)  # closes and grades it first
        assert proof.grade == await alice.grade(opened.session.id)
        assert proof.record.status == "closed"
        embedded = await alice.proof(opened.session.id, embed_tape=True)
        assert embedded.embedded is not None
        assert embedded.embedded.tape == await alice.tape("acme-trend")
        assert embedded.grade == proof.grade
        with pytest.raises(SdkLocalError) as refused:
            await bob.proof(opened.session.id)
        assert refused.value.code == "UNKNOWN_SESSION"
    finally:
        runtime.shutdown()


def test_the_execution_policy_names_only_methods_the_surface_binds() -> None:
    """``OFFLOAD`` is keyed by runtime method: a key no tool binds (a method renamed, a
    tool rebound) would silently send its calls back to a worker thread."""
    bound = {tool.runs.method for tool in SURFACE.tools if tool.runs is not None}
    assert set(OFFLOAD) <= bound, set(OFFLOAD) - bound
    assert {"submit", "frame", "blotter"} <= set(OFFLOAD)


async def test_the_catalog_takes_a_thread_only_to_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The catalog's first read walks its files on disk, off the caller's loop; once
    loaded it is read on the caller's thread (a hop costs more than the read), the same
    catalog either way."""
    hops = counted_hops(monkeypatch)
    runtime = Runtime(tmp_path)
    sdk = create_sdk(local_transport(runtime=runtime))
    first = await sdk.catalog()
    assert len(hops) == 1  # loaded in a worker thread
    again = await sdk.catalog()
    assert len(hops) == 1  # read on the caller's thread
    assert again == first == runtime.catalog()
    assert any(entry.id == "minute-200k" for entry in first.scenarios)
    runtime.shutdown()


async def test_a_recurring_source_keeps_its_place_and_a_wait_always_takes_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a submit runs is decided once per runtime method and, for a short source,
    remembered per source (an agent repeats a handful): a remembered light source stays
    on the caller's thread, a heavy one goes to a worker thread every time, and a
    ``wait`` (which may block for seconds) sends even a light source to a thread."""
    runtime = Runtime(tmp_path)
    sdk = create_sdk(local_transport(runtime=runtime))
    session = (await sdk.open_session("minute-200k")).session
    assert session is not None
    hops = counted_hops(monkeypatch)
    for _ in range(3):
        await session.submit("advance 1")
    assert hops == []
    for _ in range(2):
        await session.submit("advance 2500")
    assert len(hops) == 2
    hops.clear()
    waited = await session.submit("advance 1", wait=1)  # light, seen before, but a wait
    assert len(hops) == 1
    assert waited.delivery.frame.clock.bar == 5004
    await session.submit("advance 1")
    assert len(hops) == 1
    runtime.shutdown()
