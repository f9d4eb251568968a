"""A forward scenario on every face: nothing of a bar after a session's clock is shown,
and an advance past the last published bar is refused ``BAR_NOT_PUBLISHED`` (retryable)
on stdio MCP, the door's ``/mcp`` and ``/v1`` and both SDK transports.

The feed has published bars 0 … ``EDGE``; alice's session stands at ``CLOCK`` < ``EDGE``.
Every tool of the surface (valid calls and refusals, the table generated from
``SURFACE``), every resource, prompt and completion goes through every face; no body
holds the time of a bar after her clock or a price only such a bar has. (How many bars
are published is the edge, "now": an advance past it is refused, so it is not searched
for.)
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from kestrel_sdk.runtime.service import Runtime

from tests.every_face import Faces, numbers, read_everything, surface_calls
from tests.kestrel_sdk.runtime.forward.scenarios import (
    SCENARIO_ID,
    bar_rows,
    bar_time,
    bars,
    forward_catalog,
)

pytestmark = pytest.mark.anyio

CLOCK = 40
EDGE = 60
AT = "2026-12-01T15:31:00Z"


def _faces(tmp_path: Path) -> Faces:
    return Faces(tmp_path, [forward_catalog(tmp_path)])


def _later(clock: int) -> tuple[list[str], set[str]]:
    """The times of the published bars after ``clock``, and the prices only they have."""

    def prices(index: int) -> set[str]:
        return {v for line in bar_rows(index).splitlines() for v in line.split(",")[2:6]}

    seen = set().union(*(prices(k) for k in range(clock + 1)))
    later = set().union(*(prices(k) for k in range(clock + 1, EDGE + 1))) - seen
    return [bar_time(k) for k in range(clock + 1, EDGE + 1)], later


async def test_no_face_shows_a_bar_after_the_clock_of_a_forward_session(tmp_path: Path) -> None:
    faces = _faces(tmp_path)
    faces.runtime.append_bars(SCENARIO_ID, bars(0, EDGE + 1), clock=lambda: AT)
    traded = await faces.trade_and_grade(SCENARIO_ID, "forward", CLOCK)
    sid = traded.session_id
    refused: list[tuple[str, dict[str, Any]]] = [
        ("kestrel_session_submit", {"sessionId": sid, "source": f"advance {EDGE - CLOCK + 1}"}),
        ("kestrel_session_submit", {"sessionId": sid, "source": "advance to 2026-12-02T00:00:00Z"}),
        ("kestrel_session_submit", {"sessionId": sid, "source": f"advance to {bar_time(CLOCK)}"}),
        ("kestrel_session_submit", {"sessionId": sid, "source": "buy 1 NOPE"}),
        ("kestrel_session_history", {"sessionId": sid, "bars": 1000, "symbol": "NOPE"}),
        ("kestrel_validate", {"source": "advance to 2030-01-01T00:00Z", "scenario": SCENARIO_ID}),
        ("kestrel_session_open", {"scenario": SCENARIO_ID, "label": "forward"}),
    ]
    for name, arguments in surface_calls(traded.samples(SCENARIO_ID), refused=refused):
        await faces.call(name, arguments)
    known = {"id": SCENARIO_ID, "scenario": SCENARIO_ID, "root": traded.root}
    known["gradeRoot"] = traded.grade.root
    await read_everything(faces.mcp, known)

    times, prices = _later(CLOCK)
    # the search finds what it seeks: the next bar's rows would be found
    assert times[0] in bar_rows(CLOCK + 1)
    assert numbers(bar_rows(CLOCK + 1)) & prices
    for where, body in faces.bodies:
        found = [t for t in times if t in body] + sorted(numbers(body) & prices)
        assert not found, (where, found[:3], body[:300])
    joined = "\n".join(body for _, body in faces.bodies)
    assert "BAR_NOT_PUBLISHED" in joined  # the advance past the edge was refused
    assert "SCENARIO_SEALED" in joined  # the tape was asked for, and refused
    assert "unknown symbol 'NOPE'" in joined
    assert len(faces.bodies) > 60
    catalog = (await faces.remote.catalog()).to_json()
    entry = next(s for s in catalog["scenarios"] if s["id"] == SCENARIO_ID)
    assert (entry["sealed"], entry["forward"], "bars" in entry) == (True, True, False)
    await faces.aclose()


async def test_an_advance_past_the_edge_is_refused_retryable_on_every_face(
    tmp_path: Path,
) -> None:
    faces = _faces(tmp_path)
    faces.runtime.append_bars(SCENARIO_ID, bars(0, 3), clock=lambda: AT)
    opened = (await faces.alice.open_session(SCENARIO_ID, "edge")).session
    assert opened is not None
    assert (await opened.submit("advance 2")).delivery.frame.clock.bar == 2
    before = (await opened.frame()).frame_root
    for source in ("advance 1", "buy 1 ACME\nadvance 1", "advance 1 wait 1ms"):
        await faces.call("kestrel_session_submit", {"sessionId": opened.id, "source": source})
    faces_seen = set()
    for where, body in faces.bodies:
        assert "BAR_NOT_PUBLISHED" in body, (where, body[:300])
        assert '"retryable": true' in body or '"retryable":true' in body, (where, body[:300])
        assert bar_time(3) not in body  # nothing of what comes next
        faces_seen.add(where.split(" kestrel")[0].split(" tools/call")[0])
    assert faces_seen == {"stdio", "door /mcp", "/v1", "sdk local", "sdk remote"}
    response = await faces.http.post(
        f"/v1/sessions/{opened.id}/submit", json={"source": "advance 1"}, headers=faces.auth
    )
    assert response.status_code == 409
    assert (await opened.frame()).frame_root == before  # nothing applied
    await faces.aclose()


class _AppendWhenWaiting:
    """The runtime's waiter, publishing the next bar once a wait has begun (an event, no
    sleep): what a feed does while an agent waits."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._inner = runtime.waiter
        assert self._inner is not None  # local_transport wires the default waiter
        self.waits: list[float] = []

    def wait(self, scenario_id: str, bars_needed: int, seconds: float) -> bool:
        self.waits.append(seconds)
        at = bars_needed - 1
        threading.Thread(
            target=self._runtime.append_bars,
            args=(scenario_id, bars(at)),
            kwargs={"clock": lambda: AT},
        ).start()
        assert self._inner is not None
        return self._inner.wait(scenario_id, bars_needed, seconds)


async def test_the_submit_tool_s_wait_argument_waits_on_every_face(tmp_path: Path) -> None:
    faces = _faces(tmp_path)
    faces.runtime.append_bars(SCENARIO_ID, bars(0), clock=lambda: AT)
    waiter = _AppendWhenWaiting(faces.runtime)
    faces.runtime.waiter = waiter
    opened = (await faces.alice.open_session(SCENARIO_ID, "waits")).session
    assert opened is not None
    local = await opened.submit("advance 1", wait=30)  # the SDK, in process
    assert local.delivery.frame.clock.bar == 1
    remote = faces.remote.session(opened.id)  # the SDK over the door's /v1
    assert (await remote.submit("advance 1", wait=30)).delivery.frame.clock.bar == 2
    arguments = {"sessionId": opened.id, "source": "advance 1", "wait": 30}
    message = {"name": "kestrel_session_submit", "arguments": arguments}
    answer = await faces.stdio.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": message}
    )
    assert '"bar":3' in json.dumps(answer, separators=(",", ":"))
    door = await faces.http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": message},
        headers=faces.auth,
    )
    assert '"bar":4' in door.text.replace(" ", "")
    assert waiter.waits == [30, 30, 30, 30]
    await faces.aclose()
