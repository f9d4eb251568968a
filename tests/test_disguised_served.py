"""A disguised, sealed GOOG served by a door names nothing of the real world (issue 46).

backtesting.py's GOOG file is imported, disguised and sealed into the only user catalog
a door serves. A scripted agent trades it mid-tape; then every tool of the surface
(valid calls and refusals, from ``SURFACE``), every resource, ``resources/list``, every
prompt and completion goes through stdio MCP, the door's ``/mcp``, the door's ``/v1``
(attesting: proofs carry the signed statement, decoded and searched too) and both SDK
transports. No response holds "GOOG", the company's name, a date inside the source's
period (2004-08-19 to 2013-03-01) in any common format, or a price within 1 % of any
source close.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_protocol import GradeResult
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.scenarios import disguise_scenario, scenario_from_file

from tests.doors import serve_door
from tests.every_face import Faces, Traded, decoded, read_everything, surface_calls

pytestmark = pytest.mark.anyio

SCENARIO = "tape-q7"
CLOCK = 1000
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_MON = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_PATTERNS = [
    (re.compile(r"(?<!\d)(\d{4})-(\d{2})(?:-(\d{2}))?(?!\d)"), ("y", "m", "d")),
    (re.compile(r"(?<!\d)(\d{1,2})/(\d{1,2})/(\d{4})(?!\d)"), ("m", "d", "y")),
    (
        re.compile(rf"(?<!\d)(\d{{1,2}})(?:st|nd|rd|th)? {_MON},? (\d{{4}})(?!\d)", re.I),
        ("d", "b", "y"),
    ),
    (re.compile(rf"{_MON} (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})(?!\d)", re.I), ("b", "d", "y")),
    (re.compile(rf"{_MON},? (\d{{4}})(?!\d)", re.I), ("b", "y")),
]
_NUMBER = r"(?<![\w.])\d+\.\d+(?![\w.])"
_TOKENS = re.compile(r"[A-Za-z0-9+/=_-]{40,}")  # roots, signatures, base64: no words


def _goog() -> Path:
    import backtesting.test  # type: ignore[import-untyped]

    return Path(backtesting.test.__file__).with_name("GOOG.csv")


class Leaks:
    """What names the real world: the ticker, the company, a date of the source's
    period in a common format, a price within 1 % of a source close."""

    def __init__(self, closes: list[Decimal], first: date, last: date, examples: str) -> None:
        self.closes = sorted(closes)
        self.first, self.last = first, last
        self.examples = set(re.findall(_NUMBER, examples))  # the language's own, fixed

    def _dated(self, text: str) -> list[str]:
        found = []
        for pattern, parts in _PATTERNS:
            for match in pattern.finditer(text):
                values = dict(zip(parts, match.groups(), strict=True))
                try:
                    year = int(values["y"])
                    month = (
                        MONTHS.index(values["b"][:3].lower()) + 1
                        if "b" in values
                        else int(values["m"])
                    )
                    day = int(values["d"]) if values.get("d") else None
                    when = date(year, month, day or 1)
                except (ValueError, TypeError):
                    continue
                start = self.first if day else self.first.replace(day=1)
                if start <= when <= self.last:
                    found.append(match.group(0))
        return found

    def _priced(self, text: str) -> list[str]:
        found = []
        for number in set(re.findall(_NUMBER, text)) - self.examples:
            value = abs(Decimal(number))
            if any(abs(value - close) <= close / 100 for close in self.closes):
                found.append(number)
        return found

    def __call__(self, body: str) -> list[str]:
        text = _TOKENS.sub(" ", body)
        words = re.findall(r"goog|google|alphabet", text, re.I)
        return [*words, *self._dated(text), *sorted(self._priced(text))][:5]


def _catalogs(tmp_path: Path) -> tuple[Path, Leaks]:
    """The labelled import (kept apart) and the served catalog holding only its
    disguised, sealed twin; what a response must not hold."""
    labelled, served = tmp_path / "labelled", tmp_path / "served"
    scenario_from_file(_goog(), "goog").write(labelled / "goog")
    source = load_catalog([labelled]).get("goog")
    assert source is not None
    disguise_scenario(source, SCENARIO, b"kestrel-issue-46" * 2, sealed=True).write(
        served / SCENARIO
    )
    with _goog().open(encoding="utf-8") as rows:
        read = list(csv.DictReader(rows))
    closes = [Decimal(row["Close"]) for row in read]
    first, last = (date.fromisoformat(read[i][""][:10]) for i in (0, -1))
    examples = json.dumps(load_catalog([]).catalog.to_json()["statementKinds"])
    return served, Leaks(closes, first, last, examples)


async def test_no_face_names_the_real_world_on_a_disguised_sealed_goog(tmp_path: Path) -> None:
    served, leaks = _catalogs(tmp_path)
    faces = Faces(tmp_path, [served])
    runtime, alice, http, auth, mcp = faces.runtime, faces.alice, faces.http, faces.auth, faces.mcp
    assert runtime.sealed(SCENARIO)
    (symbol,) = runtime.loaded(SCENARIO).tape.symbols

    # the scripted agent: over /mcp a session traded to mid-tape, over /v1 another graded
    await mcp(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "agent", "version": "1"},
        },
        stdio_too=False,
    )
    opened = await mcp(
        "tools/call",
        {"name": "kestrel_session_open", "arguments": {"scenario": SCENARIO, "label": "mcp"}},
        stdio_too=False,
    )
    sid = opened.json()["result"]["structuredContent"]["sessionId"]
    traded = await mcp(
        "tools/call",
        {
            "name": "kestrel_session_submit",
            "arguments": {"sessionId": sid, "source": f"buy 3 {symbol} tif gtc\nadvance {CLOCK}"},
        },
        stdio_too=False,
    )
    content = traded.json()["result"]["structuredContent"]
    assert content["delivery"]["frame"]["clock"]["bar"] == CLOCK
    pentad_root = content["pentad"]["root"]
    v1 = await http.post("/v1/sessions", json={"scenario": SCENARIO, "label": "v1"}, headers=auth)
    faces.bodies.append(("/v1 open", v1.text))
    other = v1.json()["sessionId"]
    for source in (f"buy 2 {symbol}\nadvance 300", f"sell 2 {symbol}\nadvance 10"):
        step = await http.post(
            f"/v1/sessions/{other}/submit", json={"source": source}, headers=auth
        )
        faces.bodies.append((f"/v1 submit {source}", step.text))
        assert step.status_code == 200, step.text
    graded = await alice.grade(other)
    assert isinstance(graded, GradeResult)

    samples = Traded(sid, pentad_root, graded).samples(SCENARIO)
    refused: list[tuple[str, dict[str, Any]]] = [
        ("kestrel_session_submit", {"sessionId": sid, "source": "buy 1 NOPE\nadvance 1"}),
        ("kestrel_session_submit", {"sessionId": sid, "source": "advance 0"}),
    ]
    extra: list[tuple[str, dict[str, Any]]] = [
        ("kestrel_session_history", {"sessionId": sid, "bars": 1001}),
        ("kestrel_session_open", {"scenario": SCENARIO, "label": "mcp"}),
    ]
    for name, arguments in surface_calls(samples, refused=refused, extra=extra):
        await faces.call(name, arguments)
    for session in (sid, other):
        proof = await http.get(f"/v1/sessions/{session}/proof", headers=auth)
        faces.bodies.append((f"/v1 proof {session}", proof.text))

    await mcp("tools/list", {})
    known = {"id": SCENARIO, "scenario": SCENARIO, "root": pentad_root, "gradeRoot": graded.root}
    await read_everything(mcp, known)

    for where, body in faces.bodies:
        found = leaks(decoded(body))
        assert not found, (where, found)
    joined = "\n".join(decoded(body) for _, body in faces.bodies)
    assert "SCENARIO_SEALED" in joined  # the tape was asked for, and refused
    assert "unknown symbol 'NOPE'" in joined  # refusals were seen
    assert "https://in-toto.io/Statement/v1" in joined  # proofs were signed
    assert symbol in joined
    assert "kestrel.grade" in joined
    assert len(faces.bodies) > 60
    # the search finds what it seeks
    assert leaks("GOOG")
    assert leaks("Alphabet Inc.")
    assert leaks("google")
    for said in ("2008-10-06", "10/6/2008", "6 Oct 2008", "October 6, 2008", "2008-10", "Oct 2008"):
        assert leaks(f"on {said}."), said
    assert not leaks("on 2014-10-06 and 2003-01-01")
    assert leaks('"close":"100.34"')
    assert leaks('"p": 104.3')
    await faces.aclose()


def test_a_door_process_serves_the_disguise_and_the_reveal_verifies_its_proof(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: import, disguise, seal, serve (a ``kestrel-door serve`` process whose
    only user catalog is the disguise), an agent trades over ``/mcp`` and ``/v1``, its
    proof names nothing of GOOG; after the reveal, ``kestrel verify --reveal`` confirms
    the proof's tape is exactly the disguise of the labelled import."""
    served, leaks = _catalogs(tmp_path)
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(served))
    bodies: list[str] = []
    with serve_door(tmp_path / "door-home") as door:
        auth = {"Authorization": f"Bearer {door.token}"}
        with httpx.Client(base_url=door.url, headers=auth, timeout=60) as http:

            def mcp(method: str, params: dict[str, Any]) -> Any:
                message = {"jsonrpc": "2.0", "id": len(bodies), "method": method, "params": params}
                response = http.post("/mcp", json=message)
                bodies.append(response.text)
                return response.json()

            listed = mcp("tools/list", {})
            assert "kestrel_session_submit" in json.dumps(listed)
            catalog = mcp("tools/call", {"name": "kestrel_catalog", "arguments": {}})
            entry = next(
                e
                for e in catalog["result"]["structuredContent"]["scenarios"]
                if e["id"] == SCENARIO
            )
            (symbol,) = entry["symbols"]
            mcp(
                "prompts/get",
                {"name": "kestrel_trade_scenario", "arguments": {"scenario": SCENARIO}},
            )
            opened = mcp(
                "tools/call", {"name": "kestrel_session_open", "arguments": {"scenario": SCENARIO}}
            )
            sid = opened["result"]["structuredContent"]["sessionId"]
            step = {"sessionId": sid, "source": f"buy 5 {symbol}\nadvance 400"}
            mcp("tools/call", {"name": "kestrel_session_submit", "arguments": step})
            tape = http.get(f"/v1/catalog/scenarios/{SCENARIO}/tape")
            bodies.append(tape.text)
            assert tape.status_code == 403  # sealed
            response = http.post(
                f"/v1/sessions/{sid}/submit", json={"source": f"sell 5 {symbol}\nadvance 20"}
            )
            bodies.append(response.text)
            assert response.status_code == 200, response.text
            proof = http.get(f"/v1/sessions/{sid}/proof")
            bodies.append(proof.text)
            assert proof.status_code == 200, proof.text
    for body in bodies:
        found = leaks(decoded(body))
        assert not found, (body[:300], found)

    # after the evaluation: the operator publishes the reveal; anyone verifies
    labelled = tmp_path / "labelled"
    source = load_catalog([labelled]).get("goog")
    assert source is not None
    reveal = disguise_scenario(source, SCENARIO, b"kestrel-issue-46" * 2, sealed=True).reveal
    (tmp_path / "reveal.json").write_text(json.dumps(reveal))
    (tmp_path / "proof.json").write_text(proof.text)
    env = {
        **os.environ,
        "KESTREL_HOME": str(tmp_path / "verifier"),
        "KESTREL_CATALOG_PATH": os.pathsep.join([str(served), str(labelled)]),
    }
    command = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()", "verify"]
    verified = subprocess.run(
        [*command, str(tmp_path / "proof.json"), "--reveal", str(tmp_path / "reveal.json")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert verified.returncode == 0, verified.stderr
    assert "provenance: disguised: disguised goog, revealed" in verified.stdout

    # the grade report of the proof needs the tape: refused while sealed, naming nothing
    reported = subprocess.run(
        [
            *(sys.executable, "-c", "from kestrel_sdk.cli import main; main()", "report"),
            *(str(tmp_path / "proof.json"), "-o", str(tmp_path / "report.html")),
        ],
        env={**env, "KESTREL_CATALOG_PATH": str(served)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert reported.returncode != 0
    assert "SCENARIO_SEALED" in reported.stderr
    assert not (tmp_path / "report.html").exists()
    assert not leaks(reported.stdout + reported.stderr)
