"""When a bar of a forward tape is published: the moment it becomes visible, not when
the operator's append reached the door.

An agent waiting for the next bar (``advance 1 wait 30s``) whose submission reaches the
door after the operator's append did, but before the append's bars were committed (the
bar could not be seen yet), decided before its bar: the signed statement says it arrived
before the bar was published, and ``--trust``'s check passes it. The arrival is forced
into that gap by events, on every store: a store whose append first lets the agent's
submission arrive (the door has read its clock for it), then writes. Was: the door read
its clock for ``published_at`` when the append's body was in, before the runtime checked
and wrote the batch, so the agent was named late (``submissions[seq 1]``).
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from kestrel_door import (
    Attestor,
    AuditLog,
    DoorConfig,
    DoorKeys,
    DoorStore,
    IssuedTokens,
    create_door_app,
)
from kestrel_door.arrivals import door_time
from kestrel_door.feeds import RuntimeFeeds
from kestrel_protocol.store import RuntimeStore
from kestrel_protocol.surface import ALL_SCOPES, SCOPE_FEED
from kestrel_sdk import create_sdk, local_transport, remote_transport
from kestrel_sdk.runtime.service import Runtime
from kestrel_sdk.runtime.stores import open_runtime_store
from kestrel_sdk.transports.feed_waiter import StoreFeedWaiter
from kestrel_sdk.trust import check_attestation

from tests.kestrel_sdk.runtime.forward.scenarios import SCENARIO_ID, bars, forward_catalog
from tests.store.conftest import runtime_store_url, store_url

__all__ = ["runtime_store_url", "store_url"]

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8787"
ANCIENT = "2001-01-01T00:00:00.000000Z"


class _WritesAfter:
    """A runtime store whose next ``append_feed`` first runs ``between`` (the append has
    reached the store; nothing of it is written or visible yet)."""

    def __init__(self, store: RuntimeStore) -> None:
        self._store = store
        self.between: Callable[[], object] | None = None

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    def append_feed(self, scenario_id: str, *rest: Any) -> None:
        between, self.between = self.between, None
        if between is not None:
            between()
        self._store.append_feed(scenario_id, *rest)


async def test_a_waiting_agent_arriving_before_the_bar_is_visible_is_on_time(
    tmp_path: Path, runtime_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = open_runtime_store(runtime_store_url, tmp_path / "home")
    store = _WritesAfter(opened)
    runtime = Runtime(
        tmp_path / "home",
        [forward_catalog(tmp_path)],
        store=store,  # type: ignore[arg-type]
        waiter=StoreFeedWaiter(opened, longest_s=30),
    )
    door_store = DoorStore(tmp_path / "door.db")
    tokens = IssuedTokens(door_store)
    keys = DoorKeys(door_store)
    app = create_door_app(
        DoorConfig(base_url=BASE),
        transport_for=lambda p: local_transport(principal=p, runtime=runtime),
        grant_verifiers=[tokens],
        audit=AuditLog(door_store),
        attestor=Attestor(keys, BASE, feeds=RuntimeFeeds(runtime)),
        feeds=runtime,
    )
    agent = tokens.issue("alice", [s for s in ALL_SCOPES if s != SCOPE_FEED])[1]
    operator = {
        "Authorization": f"Bearer {tokens.issue('feeder', [SCOPE_FEED])[1]}",
        "Content-Type": "text/csv",
    }

    # the agent's arrival: the door has read its clock for the submission
    arrived = threading.Event()

    def noted() -> str:
        at = door_time()
        arrived.set()
        return at

    monkeypatch.setattr(door_store, "now", noted)  # the door's clock: its store's
    appending = threading.Event()

    def between() -> None:  # in the append's thread: bar 1 is not visible yet
        appending.set()
        assert arrived.wait(30), "the agent's submission did not arrive"

    runtime.append_bars(SCENARIO_ID, bars(0), clock=lambda: ANCIENT)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE) as http:
        sdk = create_sdk(remote_transport(BASE, agent, client=http))
        session = (await sdk.open_session(SCENARIO_ID, "waits")).session
        assert session is not None
        answers: list[Any] = []

        async def publish() -> None:
            made = await http.post(
                f"/v1/feeds/{SCENARIO_ID}/bars", content=bars(1), headers=operator
            )
            answers.append(made)

        store.between = between
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(publish)
            assert await anyio.to_thread.run_sync(appending.wait, 30)
            waited = await session.submit("advance 1 wait 30s")
        assert answers[0].status_code == 200, answers[0].text
        assert waited.delivery.frame.clock.bar == 1  # it waited for bar 1, then traded into it
        proof = (await sdk.proof(session.id)).to_json()
    runtime.shutdown()

    statement = json.loads(base64.b64decode(proof["attestation"]["payload"]))
    (submission,) = statement["predicate"]["submissions"]
    assert submission["bar"] == 1
    assert submission["arrivedAt"] < submission["barPublishedAt"]  # was: after it
    check_attestation(proof, keys.jwks())  # was: NotAttested, submissions[seq 1]
