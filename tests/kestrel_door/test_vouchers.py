from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_door import DoorStore, VoucherGate, VoucherSigner, load_voucher_key
from kestrel_protocol import KestrelError, Offer, Payment

from .conftest import Kit, asgi_client

pytestmark = pytest.mark.anyio


class _Clock:
    def __init__(self) -> None:
        self.t = 1_800_000_000.0

    def __call__(self) -> float:
        return self.t


def _gate(tmp_path: Path, clock: _Clock, quota: int = 1) -> tuple[VoucherGate, VoucherSigner]:
    signer = VoucherSigner(load_voucher_key(tmp_path), now=clock)
    return VoucherGate(DoorStore(tmp_path / "g.db"), signer, daily_quota=quota, now=clock), signer


def test_key_is_created_private_and_stable(tmp_path: Path) -> None:
    key = load_voucher_key(tmp_path)
    assert len(key) == 32
    assert load_voucher_key(tmp_path) == key
    assert (tmp_path / "door-voucher.key").stat().st_mode & 0o777 == 0o600


def test_quota_then_offer_then_voucher(tmp_path: Path) -> None:
    clock = _Clock()
    gate, signer = _gate(tmp_path, clock)
    assert gate.check("alice", "acme-trend", None) is None
    offer = gate.check("alice", "acme-trend", None)
    assert isinstance(offer, Offer)
    assert offer.accepts == ["voucher"]
    Offer.parse(offer.to_json())  # its root verifies
    assert gate.check("bob", "acme-trend", None) is None  # per principal
    voucher = signer.issue()
    assert (
        gate.check("alice", "acme-trend", Payment(offer_id=offer.offer_id, voucher=voucher)) is None
    )


@pytest.mark.parametrize(
    "case",
    ["garbage", "forged", "expired", "reused", "wrong-offer", "other-principal", "offer-expired"],
)
def test_payment_invalid(tmp_path: Path, case: str) -> None:
    clock = _Clock()
    gate, signer = _gate(tmp_path, clock, quota=0)
    offer = gate.check("alice", "acme-trend", None)
    assert offer is not None
    voucher = signer.issue(ttl_s=60)
    offer_id = offer.offer_id
    if case == "garbage":
        voucher = "kv1.nope"
    elif case == "forged":
        voucher = VoucherSigner(b"k" * 32, now=clock).issue()
    elif case == "expired":
        clock.t += 61
    elif case == "reused":
        assert (
            gate.check("alice", "acme-trend", Payment(offer_id=offer_id, voucher=voucher)) is None
        )
        offer_id = gate.check("alice", "acme-trend", None).offer_id  # type: ignore[union-attr]
    elif case == "wrong-offer":
        offer_id = "of_unknown"
    elif case == "other-principal":
        voucher = signer.issue(principal="bob")
    elif case == "offer-expired":
        clock.t += 16 * 60
        voucher = signer.issue()
    with pytest.raises(KestrelError) as err:
        gate.check("alice", "acme-trend", Payment(offer_id=offer_id, voucher=voucher))
    assert err.value.code == "PAYMENT_INVALID"


async def test_gated_open_over_http_402_then_paid(kit: Kit, tmp_path: Path) -> None:
    signer = VoucherSigner(load_voucher_key(tmp_path))
    gate = VoucherGate(kit.store, signer, daily_quota=1)
    async with asgi_client(kit.runtime_app(gate), kit.token()) as client:
        first = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        assert first.status_code == 200
        second = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        assert second.status_code == 402
        offer = Offer.parse(second.json())
        bad = await client.post(
            "/v1/sessions",
            json={
                "scenario": "acme-trend",
                "payment": {"offerId": offer.offer_id, "voucher": "kv1.x.y"},
            },
        )
        assert bad.status_code == 402
        assert bad.json()["refusal"]["code"] == "PAYMENT_INVALID"
        paid = await client.post(
            "/v1/sessions",
            json={
                "scenario": "acme-trend",
                "payment": {"offerId": offer.offer_id, "voucher": signer.issue()},
            },
        )
        assert paid.status_code == 200
        assert paid.json()["sessionId"].startswith("ks_")
    outcomes = [r.outcome for r in kit.audit.rows()]
    assert outcomes == ["ok", "gated", "PAYMENT_INVALID", "ok"]


async def test_unknown_scenario_spends_no_quota(kit: Kit, tmp_path: Path) -> None:
    gate = VoucherGate(kit.store, VoucherSigner(load_voucher_key(tmp_path)), daily_quota=1)
    async with asgi_client(kit.runtime_app(gate), kit.token()) as client:
        typo = await client.post("/v1/sessions", json={"scenario": "acme-trnd"})
        assert typo.json()["refusal"]["code"] == "UNKNOWN_SCENARIO"
        assert (
            await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        ).status_code == 200
        assert (
            await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        ).status_code == 402


async def test_reopening_an_open_label_resumes_before_the_gate(kit: Kit, tmp_path: Path) -> None:
    """Like the runtime: an open label resumes with no Offer, and no voucher is spent."""
    signer = VoucherSigner(load_voucher_key(tmp_path))
    gate = VoucherGate(kit.store, signer, daily_quota=1)
    mine = {"scenario": "acme-trend", "label": "mine"}
    async with asgi_client(kit.runtime_app(gate), kit.token()) as client:
        first = await client.post("/v1/sessions", json=mine)
        assert first.status_code == 200, first.text
        again = await client.post("/v1/sessions", json=mine)
        assert again.status_code == 200, again.text
        assert again.json() == first.json()
        over_mcp = await client.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "kestrel_session_open", "arguments": mine},
            },
        )
        assert over_mcp.json()["result"]["structuredContent"] == first.json()
        other = await client.post("/v1/sessions", json={"scenario": "acme-trend", "label": "b"})
        assert other.status_code == 402  # the quota of 1 went to the first open only
        offer = Offer.parse(other.json())
        voucher = signer.issue()
        payment = {"offerId": offer.offer_id, "voucher": voucher}
        resumed = await client.post("/v1/sessions", json={**mine, "payment": payment})
        assert resumed.json() == first.json()  # resumed: the voucher was not looked at
        paid = await client.post(
            "/v1/sessions", json={"scenario": "acme-trend", "label": "b", "payment": payment}
        )
        assert paid.status_code == 200, paid.text  # the same voucher still pays, once
        assert paid.json()["sessionId"] != first.json()["sessionId"]


def test_a_key_file_cut_short_is_refused_not_used(tmp_path: Path) -> None:
    """A process stopped between creating the key file and writing it left it empty:
    the door must not sign (or accept) vouchers under an empty HMAC key, which anyone
    can forge; it names the file and what to do."""
    key_file = tmp_path / "door-voucher.key"
    key_file.touch(mode=0o600)
    with pytest.raises(KestrelError) as refused:
        load_voucher_key(tmp_path)
    assert refused.value.code == "INVALID_INPUT"
    assert str(key_file) in refused.value.message
    assert refused.value.detail == {"path": str(key_file), "bytes": 0}
    assert key_file.read_bytes() == b""  # nothing stored is replaced behind the operator


def test_a_key_made_by_two_processes_at_once_is_one_whole_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process loading the key while this one is still making it (here: while
    its random bytes are drawn) gets a whole key, and both end with the same one."""
    import secrets

    others: list[bytes] = []
    draw = secrets.token_bytes
    interrupted = False

    def drawing(n: int) -> bytes:
        nonlocal interrupted
        if n == 32 and not interrupted:
            interrupted = True
            others.append(load_voucher_key(tmp_path))  # the other process, meanwhile
        return draw(n)

    monkeypatch.setattr(secrets, "token_bytes", drawing)
    mine = load_voucher_key(tmp_path)
    assert len(others[0]) == 32
    assert mine == others[0] == (tmp_path / "door-voucher.key").read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["door-voucher.key"]
