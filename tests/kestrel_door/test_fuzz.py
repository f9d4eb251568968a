"""Property tests: whatever a credentialed caller sends, the door answers without a 5xx.

The schemathesis run recorded in the README does this against a served door; this is
the same promise kept in CI, over the real runtime.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kestrel_door import AuditLog, DoorConfig, DoorStore, IssuedTokens, create_door_app
from kestrel_sdk import local_transport

from .conftest import BASE, asgi_client

pytestmark = pytest.mark.anyio

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
_keys = st.sampled_from(["source", "scenario", "label", "payment", "token", "grade", "sessionId"])
_bodies = st.one_of(
    _json,
    st.dictionaries(_keys, _json, max_size=4),
    st.fixed_dictionaries({"scenario": st.sampled_from(["acme-trend", "x", ""])}),
)
_segments = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="/?#"),
    min_size=1,
    max_size=40,
)
_routes = st.sampled_from(
    [
        ("GET", "/v1/catalog/scenarios/{}"),
        ("GET", "/v1/catalog/scenarios/{}/tape"),
        ("POST", "/v1/validate"),
        ("POST", "/v1/sessions"),
        ("POST", "/v1/sessions/{}/submit"),
        ("GET", "/v1/sessions/{}/frame"),
        ("GET", "/v1/sessions/{}/blotter"),
        ("POST", "/v1/sessions/{}/close"),
        ("POST", "/v1/sessions/{}/grade"),
        ("POST", "/v1/operations/resume"),
        ("GET", "/v1/artifacts/{}"),
        ("POST", "/v1/verify"),
        ("POST", "/mcp"),
    ]
)


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Any:
    home: Path = tmp_path_factory.mktemp("fuzz")
    owner: Any = local_transport(home=home / "rt")
    store = DoorStore(home / "door.db")
    _, token = IssuedTokens(store).issue("fuzz", ["kestrel:read", "kestrel:trade", "kestrel:grade"])
    app = create_door_app(
        DoorConfig(base_url=BASE),
        transport_for=lambda p: local_transport(principal=p, runtime=owner.runtime),
        grant_verifiers=[IssuedTokens(store)],
        audit=AuditLog(store),
    )
    return app, token


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(route=_routes, segment=_segments, body=_bodies)
async def test_no_5xx_for_any_request(
    door: Any, route: tuple[str, str], segment: str, body: Any
) -> None:
    app, token = door
    method, template = route
    path = template.format(quote(segment, safe="")) if "{}" in template else template
    async with asgi_client(app, token, Accept="application/json") as client:
        resp = await client.request(method, path, json=body if method == "POST" else None)
    assert resp.status_code < 500, (method, path, body, resp.text)
    if path.startswith("/v1") and resp.status_code >= 400:
        assert "refusal" in resp.json()


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    source=st.one_of(
        st.text(max_size=80),
        st.lists(
            st.sampled_from(
                [
                    "buy 5 ACME",
                    "sell 3 ACME",
                    "advance 2",
                    "cancel o1",
                    "stand-down",
                    "buy x",
                    "advance -1",
                ]
            ),
            max_size=5,
        ).map("\n".join),
    )
)
async def test_any_source_on_a_live_session_is_applied_or_refused(door: Any, source: str) -> None:
    app, token = door
    async with asgi_client(app, token) as client:
        opened = await client.post("/v1/sessions", json={"scenario": "acme-trend"})
        sid = opened.json()["sessionId"]
        resp = await client.post(f"/v1/sessions/{sid}/submit", json={"source": source})
    assert resp.status_code in (200, 409, 422), resp.text
    if resp.status_code != 200:
        assert resp.json()["refusal"]["code"] in {
            "INVALID_SOURCE",
            "LIMIT_EXCEEDED",
            "SESSION_STOOD_DOWN",
            "SESSION_CLOSED",
        }
