"""A sealed scenario shows nothing after a session's clock, on any face.

During a session on a sealed scenario, its clock mid-tape, every tool of the surface
(valid calls and refusals, table generated from ``SURFACE``), every resource,
``resources/list``, ``resources/templates/list``, every prompt and every completion goes
through stdio MCP, the door's ``/mcp``, the door's ``/v1`` (attesting: its proofs carry
the signed statement, decoded and searched too) and both SDK transports; no response
body, ``detail`` included, holds the time (or the date) of a bar after the clock, a
price only a later bar has, or the tape's length. The catalog still lists the scenario
and its tape root.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_door import (
    Attestor,
    AuditLog,
    DoorConfig,
    DoorKeys,
    DoorStore,
    IssuedTokens,
    Pseudonyms,
    create_door_app,
)
from kestrel_mcp import create_kestrel_mcp_server
from kestrel_protocol import GradeResult
from kestrel_protocol.surface import ALL_SCOPES, SURFACE
from kestrel_sdk import create_sdk, local_transport, remote_transport

from tests.every_face import call_everywhere, read_everything, sample_call

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8787"
SCENARIO = "acme-sealed"
BARS = 2403  # a length no other scenario of the catalog has (the shipped ones: 2520)
CLOCK = 1200  # mid-tape
SHIPPED = Path(__file__).parents[1] / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"


def _catalog(root: Path) -> list[dict[str, str]]:
    """A user catalog holding ``acme-sealed``: acme-trend's terms and its first ``BARS``
    bars; the tape's rows."""
    directory = root / SCENARIO
    directory.mkdir(parents=True)
    lines = (SHIPPED / "acme-trend" / "tape.csv").read_text("utf-8").splitlines()
    (directory / "tape.csv").write_text("\n".join(lines[: BARS + 1]) + "\n", "utf-8")
    toml = (SHIPPED / "acme-trend" / "scenario.toml").read_text("utf-8")
    (directory / "scenario.toml").write_text(
        toml.replace('id = "acme-trend"', f'id = "{SCENARIO}"'), "utf-8"
    )
    return list(csv.DictReader(io.StringIO((directory / "tape.csv").read_text("utf-8"))))


class Leaks:
    """What a body must not hold: a later bar's time or date, a price only later bars
    have (but for the numbers the language's own examples use), the tape's length."""

    def __init__(self, rows: list[dict[str, str]], examples: str) -> None:
        times = [row["time"] for row in rows]
        later = times[CLOCK + 1 :]
        self.texts = [*later, *sorted({t[:10] for t in later} - {times[CLOCK][:10]})]
        fields = ("open", "high", "low", "close")
        seen = {row[f] for row in rows[: CLOCK + 1] for f in fields} | _numbers(examples)
        self.prices = {row[f] for row in rows[CLOCK + 1 :] for f in fields} - seen
        self.lengths = {str(len(rows)), str(len(rows) - 1)}

    def __call__(self, body: str) -> list[str]:
        numbers = _numbers(body)
        found = [t for t in self.texts if t in body]
        return [*found, *sorted(numbers & self.prices), *sorted(numbers & self.lengths)][:3]


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", text))


def _decoded(body: str) -> str:
    """``body`` with every signed statement it carries decoded beside it."""
    payloads = re.findall(r'"payload":\s*"([A-Za-z0-9+/=]+)"', body)
    return "\n".join([body, *(base64.b64decode(p).decode("utf-8") for p in payloads)])


async def test_no_face_shows_a_bar_after_the_clock(tmp_path: Path) -> None:
    rows = _catalog(tmp_path / "catalog")
    owner: Any = local_transport(
        home=tmp_path / "home", catalog_paths=[tmp_path / "catalog"], sealed=[SCENARIO]
    )
    runtime = owner.runtime
    store = DoorStore(tmp_path / "door.db")
    # the door knows alice by her pseudonym: her sessions opened here are hers there
    alice = create_sdk(local_transport(principal=Pseudonyms(store).of("alice"), runtime=runtime))
    examples = json.dumps((await alice.catalog()).to_json()["statementKinds"])
    leaks = Leaks(rows, examples)
    opened = (await alice.open_session(SCENARIO, "sealed")).session
    assert opened is not None
    sid = opened.id
    submitted = await opened.submit(f"buy 1 ACME tif gtc\nadvance {CLOCK}")
    assert submitted.delivery.frame.clock.bar == CLOCK
    other = (await alice.open_session(SCENARIO, "graded")).session
    assert other is not None
    grade = await alice.grade(other.id)
    assert isinstance(grade, GradeResult)

    tokens = IssuedTokens(store)
    app = create_door_app(
        DoorConfig(base_url=BASE),
        transport_for=lambda p: local_transport(principal=p, runtime=runtime),
        grant_verifiers=[tokens],
        audit=AuditLog(store),
        attestor=Attestor(DoorKeys(store), BASE),
    )
    token = tokens.issue("alice", list(ALL_SCOPES))[1]
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)
    auth = {"Authorization": f"Bearer {token}"}
    stdio = create_kestrel_mcp_server(alice.transport, secrets=False)
    remote = create_sdk(remote_transport(BASE, token, client=http))

    samples: dict[str, Any] = {
        "scenario": SCENARIO,
        "sessionId": sid,
        "source": "cancel all",
        "token": "op_nope",
        "root": submitted.pentad.root,
        "grade": grade.to_json(),
        "gradeRoot": grade.root,
        "bars": 1000,
    }
    # refusals too: a K205 advance to the clock, an unknown symbol, a bad count (on a
    # sealed session an advance beyond the tape, or behind the advances before it, is
    # not refused: it runs, tests/test_sealed_inference.py)
    times = [row["time"] for row in rows]
    said = times[CLOCK + 2]  # the caller's own words, echoed in refusals: not a leak
    behind = f"advance 5\nadvance to {said}"
    unknown = f"buy 1 NOPE\nadvance to {said}"  # refused for its symbol
    # refused submissions first, while the session is open (kestrel_proof closes it)
    refused: list[tuple[str, dict[str, Any]]] = [
        ("kestrel_session_submit", {"sessionId": sid, "source": f"advance to {times[CLOCK]}"}),
        ("kestrel_session_submit", {"sessionId": sid, "source": unknown}),
    ]
    extra: list[tuple[str, dict[str, Any]]] = [
        ("kestrel_validate", {"source": behind, "scenario": SCENARIO}),
        ("kestrel_validate", {"source": "advance to 2030-01-01T00:00Z", "scenario": SCENARIO}),
        ("kestrel_session_history", {"sessionId": sid, "bars": 1000, "symbol": "NOPE"}),
        ("kestrel_session_history", {"sessionId": sid, "bars": 1001}),
        ("kestrel_session_open", {"scenario": SCENARIO, "label": "sealed"}),
    ]
    bodies: list[tuple[str, str]] = []
    mcp_id = 0

    async def mcp(method: str, params: dict[str, Any]) -> None:
        nonlocal mcp_id
        mcp_id += 1
        message = {"jsonrpc": "2.0", "id": mcp_id, "method": method, "params": params}
        response = await stdio.handle(message)
        bodies.append((f"stdio {method} {params}", json.dumps(response)))
        door = await http.post("/mcp", json=message, headers=auth)
        bodies.append((f"door /mcp {method} {params}", door.text))

    calls = refused + [
        (tool.name, sample_call(tool, samples))
        for tool in SURFACE.tools
        if tool.name not in ("kestrel_grade", "kestrel_session_close")
    ]
    calls += extra
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

    known = {
        "id": SCENARIO,
        "scenario": SCENARIO,
        "root": submitted.pentad.root,
        "gradeRoot": grade.root,
    }
    await read_everything(mcp, known)

    for where, body in bodies:
        text = _decoded(body).replace(said, "(said)")
        found = leaks(text)
        assert not found, (
            where,
            found,
            [
                text[max(0, m.start() - 150) : m.end() + 50]
                for f in found
                for m in re.finditer(re.escape(f), text)
            ][:3],
        )
    joined = "\n".join(body for _, body in bodies)
    assert "SCENARIO_SEALED" in joined  # the tape was asked for, and refused
    assert "names no bar after bar 0" in joined  # the trading prompt was rendered
    assert "Input should be less than or equal to 1000" in joined  # refusals were seen
    assert f"advance to {times[CLOCK]}: not after the clock" in joined
    assert "unknown symbol 'NOPE'" in joined
    assert "https://in-toto.io/Statement/v1" in _decoded(joined)  # proofs were signed
    # the search finds what it seeks
    assert leaks(f"[{BARS}]")
    assert leaks(times[-1])
    assert leaks(f'"{sorted(leaks.prices)[0]}"')
    assert len(bodies) > 60
    catalog = (await remote.catalog()).to_json()
    entry = next(s for s in catalog["scenarios"] if s["id"] == SCENARIO)
    assert entry["sealed"] is True
    assert entry["tapeRoot"] == (await alice.scenario(SCENARIO)).tape.root
    await http.aclose()
    await owner.aclose()
