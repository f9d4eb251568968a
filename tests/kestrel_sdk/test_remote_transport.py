from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_door import (
    AuditLog,
    DoorConfig,
    DoorStore,
    IssuedTokens,
    VoucherGate,
    VoucherSigner,
    create_door_app,
    load_voucher_key,
)
from kestrel_protocol import GradeResult, KestrelError, Payment, RefusalCode, canonical_json
from kestrel_protocol.surface import Tool
from kestrel_protocol.testing import ScriptedTransport
from kestrel_sdk import KestrelClientError, SdkError, create_sdk, local_transport, remote_transport
from kestrel_sdk.runtime import verify_proof
from kestrel_sdk.runtime.catalog import load_catalog

from tests.loopback import free_port, serve_built

pytestmark = pytest.mark.anyio

SOURCE = "buy 10 ACME\nadvance 5\n"


def _refuse(tool: Tool, arguments: Any) -> Any:
    """Refuses every call (a validate's source names the code) with the code it is given."""
    code = getattr(arguments, "source", "UNKNOWN_SESSION")
    raise KestrelError(code, f"refused with {code}", {"why": code, "n": 1})


@asynccontextmanager
async def _door(tmp_path: Path, **options: Any) -> AsyncIterator[tuple[str, IssuedTokens]]:
    # A session gate is the runtime's, as ``kestrel-door serve --daily-quota`` wires it.
    owner = local_transport(home=tmp_path / "rt", gate=options.pop("gate", None))
    runtime = owner.runtime  # type: ignore[attr-defined]
    store = DoorStore(tmp_path / "door.db")
    tokens = IssuedTokens(store)

    def transport_for(principal: str) -> Any:
        if principal == "refuser":
            return ScriptedTransport(_refuse)
        return local_transport(principal=principal, runtime=runtime)

    try:
        async with _serve_door(transport_for, tokens, store, options) as url:
            yield url, tokens
    finally:
        await owner.aclose()
        store.close()


@asynccontextmanager
async def _serve_door(
    transport_for: Any, tokens: IssuedTokens, store: DoorStore, options: dict[str, Any]
) -> AsyncIterator[str]:
    def door_at(base: str) -> Any:
        return create_door_app(
            DoorConfig(base_url=base),
            transport_for=transport_for,
            grant_verifiers=[tokens],
            audit=AuditLog(store),
            **options,
        )

    async with serve_built(door_at) as base:
        yield base


def _token(tokens: IssuedTokens, principal: str = "alice") -> str:
    return tokens.issue(principal, ["kestrel:read", "kestrel:trade", "kestrel:grade"])[1]


async def test_whole_sdk_surface_against_a_live_door(tmp_path: Path) -> None:
    async with _door(tmp_path) as (url, tokens), httpx.AsyncClient() as http:
        sdk = create_sdk(remote_transport(base_url=url, token=_token(tokens), client=http))
        catalog = await sdk.catalog()
        assert "acme-trend" in [s.id for s in catalog.scenarios]
        scenario = await sdk.scenario("acme-trend")
        assert scenario.id == "acme-trend"
        tape = await sdk.tape("acme-trend")
        assert tape.count("\n") > 100
        report = await sdk.validate(SOURCE, "acme-trend")
        assert report.ok
        opened = await sdk.open_session("acme-trend", label="remote")
        assert not opened.gated
        session = opened.session
        assert session is not None
        resp = await session.submit(SOURCE)
        assert resp.pentad.seq == 1
        delivery = await session.frame()
        assert delivery.frame_root == resp.delivery.frame_root
        blotter = await session.blotter()
        assert blotter.session == session.id
        await session.submit("sell 10 ACME\nadvance 1\n")
        record = await session.close()
        graded = await sdk.grade(session.id)
        while not isinstance(graded, GradeResult):
            graded = await sdk.resume(graded)
        assert graded.record == record.root
        verified = await sdk.verify(graded)
        assert verified.ok
        art = await sdk.artifact(record.root)
        assert art["root"] == record.root
        await sdk.aclose()
        assert not http.is_closed  # a passed-in client belongs to the caller


async def test_proofs_over_a_live_door_are_the_local_proofs_and_artifacts_private(
    tmp_path: Path,
) -> None:
    async with _door(tmp_path) as (url, tokens), httpx.AsyncClient() as http:
        alice = create_sdk(remote_transport(base_url=url, token=_token(tokens), client=http))
        bob = create_sdk(remote_transport(base_url=url, token=_token(tokens, "bob"), client=http))
        opened = await alice.open_session("acme-trend", label="proved")
        assert opened.session is not None
        sid = opened.session.id
        await opened.session.submit(SOURCE)
        proof = await alice.proof(sid)  # grades (and so closes) the session first
        embedded = await alice.proof(sid, embed_tape=True)
        assert embedded.embedded is not None
        assert proof.embedded is None
        async with _local(tmp_path, "alice") as local:
            assert canonical_json(await local.proof(sid)) == canonical_json(proof)
            assert canonical_json(await local.proof(sid, True)) == canonical_json(embedded)
        assert canonical_json(await alice.proof_of_grade(proof.grade.root)) == canonical_json(proof)
        assert verify_proof(load_catalog([]), embedded.to_json()).ok
        for call in (
            bob.artifact(proof.record.root),
            bob.artifact(proof.grade.root),
            bob.proof_of_grade(proof.grade.root),
        ):
            with pytest.raises(KestrelClientError) as err:
                await call
            assert err.value.code == RefusalCode.UNKNOWN_ARTIFACT
            assert err.value.message.startswith("no artifact sha256:")
        with pytest.raises(KestrelClientError) as err:
            await bob.proof(sid)
        assert err.value.code == RefusalCode.UNKNOWN_SESSION
        with pytest.raises(KestrelError) as bad:  # checked before it leaves, as the door would
            await alice.proof(sid, embed_tape="yes")  # type: ignore[arg-type]
        assert bad.value.code == RefusalCode.INVALID_ARGUMENT
        assert "embedTape" in bad.value.message


@asynccontextmanager
async def _local(tmp_path: Path, principal: str) -> AsyncIterator[Any]:
    """The door's runtime home opened by a second runtime in this process, as
    ``principal`` (SQLite shares the file)."""
    transport = local_transport(home=tmp_path / "rt", principal=principal)
    try:
        yield create_sdk(transport)
    finally:
        await transport.aclose()


async def test_every_refusal_round_trips(tmp_path: Path) -> None:
    codes = [*[c.value for c in RefusalCode], "SOME_NEWER_CODE"]
    async with _door(tmp_path) as (url, tokens):
        transport = create_sdk(remote_transport(base_url=url, token=_token(tokens, "refuser")))
        for code in codes:
            with pytest.raises(KestrelClientError) as err:
                await transport.validate(code)
            assert isinstance(err.value, SdkError)
            assert err.value.code == code
            assert err.value.message == f"refused with {code}"
            assert err.value.detail == {"why": code, "n": 1}
        await transport.aclose()


async def test_session_refusals_from_the_runtime(tmp_path: Path) -> None:
    async with _door(tmp_path) as (url, tokens):
        alice = create_sdk(remote_transport(base_url=url, token=_token(tokens, "alice")))
        bob = create_sdk(remote_transport(base_url=url, token=_token(tokens, "bob")))
        opened = await alice.open_session("acme-trend")
        assert opened.session is not None
        with pytest.raises(KestrelClientError) as err:
            await bob.session(opened.session.id).frame()
        assert err.value.code == "UNKNOWN_SESSION"
        with pytest.raises(KestrelClientError) as err:
            await alice.open_session("no-such-scenario")
        assert err.value.code == "UNKNOWN_SCENARIO"
        with pytest.raises(KestrelClientError) as err:
            await opened.session.submit("buy banana\n")
        assert err.value.code == "INVALID_SOURCE"
        await alice.aclose()
        await bob.aclose()


async def test_402_becomes_gated_with_offer_then_voucher_pays(tmp_path: Path) -> None:
    signer = VoucherSigner(load_voucher_key(tmp_path))
    store = DoorStore(tmp_path / "gate.db")
    gate = VoucherGate(store, signer, daily_quota=0)
    async with _door(tmp_path, gate=gate) as (url, tokens):
        sdk = create_sdk(remote_transport(base_url=url, token=_token(tokens)))
        gated = await sdk.open_session("acme-trend")
        assert gated.gated
        assert gated.session is None
        assert gated.payment is not None
        assert gated.payment.accepts == ["voucher"]
        with pytest.raises(KestrelClientError) as err:
            await sdk.open_session(
                "acme-trend",
                payment=Payment(offer_id=gated.payment.offer_id, voucher="kv1.bad.sig"),
            )
        assert err.value.code == "PAYMENT_INVALID"
        paid = await sdk.open_session(
            "acme-trend", payment=Payment(offer_id=gated.payment.offer_id, voucher=signer.issue())
        )
        assert not paid.gated
        assert paid.session is not None
        await sdk.aclose()


async def test_door_down_is_backend_unavailable() -> None:
    token = "kestrel_tok_" + "S" * 43
    transport = remote_transport(base_url=f"http://127.0.0.1:{free_port()}", token=token)
    with pytest.raises(KestrelClientError) as err:
        await create_sdk(transport).catalog()
    await transport.aclose()
    assert err.value.code == "BACKEND_UNAVAILABLE"
    assert token not in str(err.value)
    assert token not in repr(transport)


async def test_bad_token_is_forbidden_refusal(tmp_path: Path) -> None:
    async with _door(tmp_path) as (url, _):
        transport = create_sdk(remote_transport(base_url=url, token="kestrel_tok_" + "x" * 43))
        with pytest.raises(KestrelClientError) as err:
            await transport.catalog()
        await transport.aclose()
    assert err.value.code == "FORBIDDEN"


def test_env_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="base_url"):
        remote_transport()
    monkeypatch.setenv("KESTREL_REMOTE", "http://127.0.0.1:9")
    assert "127.0.0.1:9" in repr(remote_transport())


async def test_an_answer_that_does_not_verify_is_backend_unavailable() -> None:
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    async def tampered(request: Any) -> JSONResponse:
        good = {"kind": "kestrel.validation", "ok": True, "statements": 1, "diagnostics": []}
        return JSONResponse(
            good
            if request.method == "POST"
            else {"kind": "kestrel.catalog", "root": "sha256:" + "0" * 64}
        )

    async def not_json(request: Any) -> Response:
        return Response("<html>proxy error</html>", media_type="text/html")

    app = Starlette(
        routes=[
            Route("/v1/catalog", tampered),
            Route("/v1/validate", tampered, methods=["POST"]),
            Route("/v1/sessions", not_json, methods=["POST"]),
        ]
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app)) as http:
        transport = create_sdk(
            remote_transport(base_url="http://door.test", token="t", client=http)
        )
        assert (await transport.validate("buy 1 ACME\n")).ok
        for call in (transport.catalog(), transport.open_session("acme-trend")):
            with pytest.raises(KestrelClientError) as err:
                await call
            assert err.value.code == "BACKEND_UNAVAILABLE"


def test_importing_the_sdk_does_not_load_httpx_until_a_remote_transport_is_made() -> None:
    # Start-up of every local face (kestrel CLI, kestrel-mcp) pays for what is imported.
    code = (
        "import sys, kestrel_sdk, kestrel_mcp\n"
        "assert 'httpx' not in sys.modules, 'httpx loaded at import'\n"
        "kestrel_sdk.remote_transport(base_url='http://127.0.0.1:9')\n"
        "assert 'httpx' in sys.modules\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr.decode()
