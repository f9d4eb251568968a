from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey
from kestrel_door import JwtGrantVerifier
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.loopback import serve

from .conftest import BASE, Kit, asgi_client

pytestmark = pytest.mark.anyio

ISSUER = "https://issuer.test"


class _Issuer:
    def __init__(self) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig"})
        self.fetches = 0

    def jwks(self) -> dict[str, Any]:
        return {"keys": [self.key.as_dict(private=False)]}

    def token(self, **overrides: Any) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": ISSUER,
            "sub": "agent-7",
            "aud": BASE,
            "exp": now + 300,
            "iat": now,
            "scope": "kestrel:read kestrel:trade",
        }
        claims.update(overrides)
        claims = {k: v for k, v in claims.items() if v is not None}
        return jwt.encode({"alg": "RS256", "kid": "k1"}, claims, self.key)


@pytest.fixture
async def issuer() -> AsyncIterator[tuple[_Issuer, str]]:
    iss = _Issuer()

    async def jwks(request: Request) -> JSONResponse:
        iss.fetches += 1
        return JSONResponse(iss.jwks())

    async with serve(Starlette(routes=[Route("/jwks.json", jwks)])) as url:
        yield iss, url + "/jwks.json"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


async def test_jwt_grants_and_refusals(kit: Kit, issuer: tuple[_Issuer, str]) -> None:
    iss, jwks_url = issuer
    async with httpx.AsyncClient() as http:
        verifier = JwtGrantVerifier(
            issuer=ISSUER, jwks_url=jwks_url, audiences=kit.config.audiences, client=http
        )
        app = kit.app(grant_verifiers=[kit.tokens, verifier])
        good = iss.token()
        async with asgi_client(app, good) as client:
            assert (await client.get("/v1/catalog")).status_code == 200
            opened = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
            assert opened.status_code == 200
        async with asgi_client(app, iss.token(scope="kestrel:read")) as client:
            resp = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
            assert resp.status_code == 403
            assert 'error="insufficient_scope"' in resp.headers["www-authenticate"]
        assert kit.audit.rows()[0].principal == "oauth:agent-7"  # the subject's namespace

        other = RSAKey.generate_key(2048, parameters={"kid": "k1"})
        public_pem = iss.key.as_pem(private=False)
        # The classic confusion attack, signed by hand (joserfc itself refuses to
        # build it): HS256 keyed with the issuer's public key.
        signing_input = (
            _b64(json.dumps({"alg": "HS256", "kid": "k1", "typ": "JWT"}).encode())
            + "."
            + _b64(json.dumps({"iss": ISSUER, "sub": "x", "aud": BASE, "exp": 9999999999}).encode())
        )
        mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
        hs_with_public = signing_input + "." + _b64(mac)
        none_alg = (
            _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
            + "."
            + _b64(json.dumps({"iss": ISSUER, "sub": "x", "aud": BASE, "exp": 9999999999}).encode())
            + "."
        )
        bad = {
            "expired": iss.token(exp=int(time.time()) - 120),
            "no-exp": iss.token(exp=None),
            "wrong-audience": iss.token(aud="https://elsewhere.example"),
            "wrong-issuer": iss.token(iss="https://evil.example"),
            "forged-signature": jwt.encode(
                {"alg": "RS256", "kid": "k1"},
                {"iss": ISSUER, "sub": "x", "aud": BASE, "exp": int(time.time()) + 60},
                other,
            ),
            "hs256-with-public-key": hs_with_public,
            "alg-none": none_alg,
            "not-yet-valid": iss.token(nbf=int(time.time()) + 3600),
            "sub-names-a-trial": iss.token(sub="agent-7/trial-run-1"),  # only the door mints
            "tampered": good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB"),
        }
        for name, token in bad.items():
            async with asgi_client(app, token) as client:
                resp = await client.get("/v1/catalog")
                assert resp.status_code == 401, name
                assert 'error="invalid_token"' in resp.headers["www-authenticate"], name
        assert iss.fetches <= 3  # the JWKS is cached, not fetched per request


def test_hmac_and_none_algorithms_cannot_be_configured() -> None:
    for algs in (["none"], ["HS256"], ["RS256", "HS512"]):
        with pytest.raises(ValueError, match="not allowed"):
            JwtGrantVerifier(
                issuer=ISSUER, jwks_url="http://127.0.0.1:1/", audiences=[BASE], algorithms=algs
            )


async def test_unreachable_jwks_is_401_not_500(kit: Kit) -> None:
    verifier = JwtGrantVerifier(issuer=ISSUER, jwks_url="http://127.0.0.1:9/jwks", audiences=[BASE])
    app = kit.app(grant_verifiers=[verifier])
    async with asgi_client(app, _Issuer().token()) as client:
        assert (await client.get("/v1/catalog")).status_code == 401


async def test_key_rotation_refetches_the_jwks_rate_limited(issuer: tuple[_Issuer, str]) -> None:
    iss, jwks_url = issuer
    clock = [time.time()]
    verifier = JwtGrantVerifier(
        issuer=ISSUER, jwks_url=jwks_url, audiences=[BASE], now=lambda: clock[0]
    )
    grant = await verifier.verify(iss.token())
    assert grant is not None
    assert grant.principal == "oauth:agent-7"
    assert grant.scopes == frozenset({"kestrel:read", "kestrel:trade"})
    assert grant.kind == "oauth"
    iss.key = RSAKey.generate_key(2048, parameters={"kid": "k2", "use": "sig"})
    rotated = jwt.encode({"alg": "RS256", "kid": "k2"}, _claims(), iss.key)
    assert await verifier.verify(rotated) is None  # within the refetch window: not yet
    assert iss.fetches == 1
    clock[0] += 31
    assert await verifier.verify(rotated) is not None
    assert iss.fetches == 2


def _claims() -> dict[str, Any]:
    now = int(time.time())
    return {"iss": ISSUER, "sub": "agent-7", "aud": BASE, "exp": now + 300, "scope": "kestrel:read"}
