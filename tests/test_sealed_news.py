"""A sealed scenario with news serves no news item after a session's clock, on any face.

During a session on the sealed ``news-acme`` (its clock mid-tape), every tool of the
surface (table generated from ``SURFACE``, the news read paged to its first item), every
resource (the session's news and frame among them) and every prompt goes through stdio
MCP, the door's ``/mcp``, the door's ``/v1`` and both SDK transports; no response body
holds the marker of an item whose time is after the clock bar's, while the items up to
the clock are served (the search finds what it seeks).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_door import AuditLog, DoorConfig, DoorStore, IssuedTokens, Pseudonyms, create_door_app
from kestrel_mcp import create_kestrel_mcp_server
from kestrel_protocol import GradeResult
from kestrel_protocol.surface import ALL_SCOPES, SURFACE
from kestrel_sdk import create_sdk, local_transport, remote_transport

from tests.every_face import call_everywhere, read_everything, sample_call
from tests.news_catalog import NEWS_ID, bar_time, marker, news_items, write_news_scenario

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8787"
CLOCK = 20


def _markers(after: bool) -> set[str]:
    """The markers of the items after the clock bar's time (or up to it)."""
    clock = bar_time(CLOCK)
    return {
        tag
        for item in news_items()
        if (item["time"] > clock) is after
        for tag in (item["headline"].split()[-1],)
    }


async def test_no_face_serves_a_news_item_after_the_clock(tmp_path: Path) -> None:
    write_news_scenario(tmp_path / "catalog")
    owner: Any = local_transport(
        home=tmp_path / "home", catalog_paths=[tmp_path / "catalog"], sealed=[NEWS_ID]
    )
    runtime = owner.runtime
    store = DoorStore(tmp_path / "door.db")
    alice = create_sdk(local_transport(principal=Pseudonyms(store).of("alice"), runtime=runtime))
    opened = (await alice.open_session(NEWS_ID, "sealed")).session
    assert opened is not None
    sid = opened.id
    submitted = await opened.submit(f"buy 1 ACME tif gtc\nadvance {CLOCK}")
    assert submitted.delivery.frame.clock.bar == CLOCK
    other = (await alice.open_session(NEWS_ID, "graded")).session
    assert other is not None
    grade = await alice.grade(other.id)
    assert isinstance(grade, GradeResult)

    tokens = IssuedTokens(store)
    app = create_door_app(
        DoorConfig(base_url=BASE),
        transport_for=lambda p: local_transport(principal=p, runtime=runtime),
        grant_verifiers=[tokens],
        audit=AuditLog(store),
    )
    token = tokens.issue("alice", list(ALL_SCOPES))[1]
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)
    auth = {"Authorization": f"Bearer {token}"}
    stdio = create_kestrel_mcp_server(alice.transport, secrets=False)
    remote = create_sdk(remote_transport(BASE, token, client=http))
    bodies: list[tuple[str, str]] = []
    mcp_id = 0

    async def mcp(method: str, params: dict[str, Any]) -> None:
        nonlocal mcp_id
        mcp_id += 1
        message = {"jsonrpc": "2.0", "id": mcp_id, "method": method, "params": params}
        bodies.append((f"stdio {method} {params}", json.dumps(await stdio.handle(message))))
        door = await http.post("/mcp", json=message, headers=auth)
        bodies.append((f"door /mcp {method} {params}", door.text))

    samples: dict[str, Any] = {
        "scenario": NEWS_ID,
        "sessionId": sid,
        "source": "cancel all",
        "token": "op_nope",
        "root": submitted.pentad.root,
        "grade": grade.to_json(),
        "gradeRoot": grade.root,
        "bars": 1000,
    }
    calls = [
        (tool.name, sample_call(tool, samples))
        for tool in SURFACE.tools
        if tool.name not in ("kestrel_grade", "kestrel_session_close")
    ]
    calls += [
        ("kestrel_session_news", {"sessionId": sid, "limit": 100}),
        ("kestrel_session_news", {"sessionId": sid, "limit": 3, "before": "n60"}),
        ("kestrel_session_news", {"sessionId": sid, "symbol": "ACME", "before": "n61"}),
        ("kestrel_session_news", {"sessionId": sid, "limit": 101}),
    ]
    calls += [(name, {"sessionId": sid}) for name in ("kestrel_session_close", "kestrel_grade")]
    for name, arguments in calls:
        await call_everywhere(
            name,
            arguments,
            mcp=mcp,
            http=http,
            auth=auth,
            transports=((alice, "sdk local"), (remote, "sdk remote")),
            bodies=bodies,
        )
    known = {"id": sid, "scenario": NEWS_ID, "root": submitted.pentad.root, "gradeRoot": grade.root}
    await read_everything(mcp, known, scenario=NEWS_ID)

    later = _markers(after=True)
    assert later  # there are items after the clock
    for where, body in bodies:
        found = sorted(tag for tag in later if tag in body)
        assert not found, (where, found[:3])
    joined = "\n".join(body for _, body in bodies)
    shown = _markers(after=False)
    assert all(tag in joined for tag in shown)  # every visible item was served
    assert marker(CLOCK + 2) in joined  # the newest visible one (day CLOCK - 1)
    assert "SCENARIO_SEALED" in joined
    assert "kestrel://sessions/" in joined
    assert len(bodies) > 60
    await http.aclose()
    await owner.aclose()
