"""Nothing a sealed session is served tells its tape's length or end (issue 45).

An adversary trades a sealed scenario over the SDK and a real door's ``/v1`` and
``/mcp`` and keeps everything it is served. It tries three ways to learn what is hidden:

* brute force: each frame it was served lacks ``clock.remaining``, but a root binds a
  frame (``frameRoot``, the next pentad's ``prev``, the record's ``head``); trying values
  of ``remaining`` until one hashes to the root would give the tape's length. Every
  root must be the root of the frame as served, so no value matches;
* comparison: two sealed tapes that agree bar for bar well past the clock and differ in
  length must be served the same bodies, headers, refusals and validations (ids and
  roots, which differ with the tape's root, renamed by order of appearance), probing
  ``advance to`` between and past their ends, and after relative advances (sources that
  a refusal would answer without the session moving);
* refusals by construction: a sealed session's sources are checked without reading a
  bar after the clock, so neither a refusal nor the time it takes depends on the end.

The sealed session's proof still verifies by replay in an empty home, its door's
attestation with ``--trust``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from kestrel_protocol import GradeResult, KestrelError, canonical_json, root_of
from kestrel_protocol.surface import SURFACE
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.lang import parse_located
from kestrel_sdk.runtime.lang.validate import SessionContext, check_session
from kestrel_sdk.runtime.verify import verify_proof

from tests.doors import Door, serve_door
from tests.every_face import route_request

pytestmark = pytest.mark.anyio

SHIPPED = Path(__file__).parents[1] / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"
CLOCK = 1200
SHORT, LONG = 2403, 2460  # two sealed tapes: acme-trend's first bars
SCENARIO = "acme-sealed"


# -- faces ------------------------------------------------------------------------------


def _fields(tool: Any) -> list[tuple[str, Any]]:
    return [(f.alias or n, f) for n, f in tool.arguments.model_fields.items()]


class Faces:
    """One principal's calls of a tool on the SDK, a door's ``/v1`` and its ``/mcp``: the
    result (or refusal) as JSON and what was received (body and headers)."""

    def __init__(self, sdk: Any, door: Door) -> None:
        self.sdk = sdk
        self.http = httpx.Client(
            base_url=door.url, headers={"Authorization": f"Bearer {door.token}"}, timeout=120
        )
        self.ids = 0

    def close(self) -> None:
        self.http.close()

    async def call(self, face: str, name: str, arguments: dict[str, Any]) -> tuple[Any, str]:
        tool = SURFACE.tool(name)
        if face == "sdk":
            values = {
                field: GradeResult.parse(arguments[a]) if a == "grade" else arguments.get(a)
                for (a, _), field in zip(_fields(tool), tool.arguments.model_fields, strict=True)
            }
            try:
                result = (await self.sdk.call(tool.name, **values)).to_json()
            except KestrelError as exc:
                result = {"refusal": exc.refusal.to_json()}
            return result, json.dumps(result)
        if face == "mcp":
            self.ids += 1
            message = {
                "jsonrpc": "2.0",
                "id": self.ids,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
            response = self.http.post("/mcp", json=message)
            assert "result" in response.json(), response.text
            structured = response.json()["result"]["structuredContent"]
            return structured, _received(response)
        assert tool.route is not None
        response = self.http.request(**route_request(tool, arguments))
        return response.json(), _received(response)


def _received(response: httpx.Response) -> str:
    """The status, the headers (but the date) and the body of a response."""
    headers = sorted((k, v) for k, v in response.headers.items() if k.lower() != "date")
    return f"{response.status_code} {headers}\n{response.text}"


def _catalog(root: Path, bars: int) -> list[str]:
    """A catalog holding ``acme-sealed``: acme-trend's terms and first ``bars`` bars; the
    tape's bar times."""
    directory = root / SCENARIO
    directory.mkdir(parents=True)
    lines = (SHIPPED / "acme-trend" / "tape.csv").read_text("utf-8").splitlines()
    (directory / "tape.csv").write_text("\n".join(lines[: bars + 1]) + "\n", "utf-8")
    toml = (SHIPPED / "acme-trend" / "scenario.toml").read_text("utf-8")
    (directory / "scenario.toml").write_text(
        toml.replace('id = "acme-trend"', f'id = "{SCENARIO}"'), "utf-8"
    )
    rows = csv.DictReader(io.StringIO((directory / "tape.csv").read_text("utf-8")))
    return sorted({row["time"] for row in rows})


# -- brute force ------------------------------------------------------------------------


def _brute_force(frame: dict[str, Any], root: str, tries: int = 2600) -> int | None:
    """The ``clock.remaining`` that makes ``frame`` (as served) hash to ``root``, if any."""
    clock = frame["clock"]
    for remaining in range(tries):
        if root_of({**frame, "clock": {**clock, "remaining": remaining}}) == root:
            return remaining
    return None


def _delivered(response: dict[str, Any]) -> tuple[dict[str, Any], str]:
    return response["delivery"]["frame"], response["delivery"]["frameRoot"]


def _verify(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``kestrel verify`` in a new, empty home."""
    home = tmp_path / "empty-home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "KESTREL_HOME": str(home / ".kestrel")}
    env.pop("KESTREL_CATALOG_PATH", None)
    command = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()", "verify"]
    return subprocess.run(
        [*command, *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture
def chop_door(tmp_path: Path) -> Iterator[Door]:
    with serve_door(tmp_path / "door", "--seal", "acme-chop", principal="eve") as door:
        yield door


async def test_no_root_served_gives_away_the_bars_that_remain(
    chop_door: Door, tmp_path: Path
) -> None:
    """acme-chop (2520 bars, shipped) sealed: every frame the adversary is served, with
    the root that binds it, over every face; no value of ``remaining`` hashes to it."""
    owner = local_transport(home=tmp_path / "home", sealed=["acme-chop"], principal="eve")
    faces = Faces(create_sdk(owner), chop_door)
    pairs: list[tuple[str, dict[str, Any], str]] = []
    proofs: dict[str, dict[str, Any]] = {}
    try:
        for face in ("sdk", "v1", "mcp"):
            opened, _ = await faces.call(
                face, "kestrel_session_open", {"scenario": "acme-chop", "label": face}
            )
            sid = {"sessionId": opened["sessionId"]}
            opening, _ = await faces.call(face, "kestrel_session_frame", sid)
            first, _ = await faces.call(
                face, "kestrel_session_submit", {**sid, "source": "buy 10 ACME\nadvance 600"}
            )
            second, _ = await faces.call(
                face, "kestrel_session_submit", {**sid, "source": "sell 10 ACME\nadvance 600"}
            )
            head, _ = await faces.call(face, "kestrel_session_frame", sid)
            proof, _ = await faces.call(face, "kestrel_proof", sid)
            assert head["frame"]["clock"] == {"bar": CLOCK, "time": head["frame"]["clock"]["time"]}
            pairs += [
                (f"{face} opening frameRoot", opening["frame"], opening["frameRoot"]),
                (f"{face} pentad 1 prev", opening["frame"], first["pentad"]["prev"]),
                (f"{face} submit 1", *_delivered(first)),
                (f"{face} pentad 2 prev", first["delivery"]["frame"], second["pentad"]["prev"]),
                (f"{face} submit 2", *_delivered(second)),
                (f"{face} frame tool", head["frame"], head["frameRoot"]),
                (f"{face} proof record.head", proof["head"], proof["record"]["head"]),
            ]  # fmt: skip
            proofs[face] = proof
    finally:
        faces.close()
        await owner.aclose()

    tried = {root: (where, frame) for where, frame, root in pairs}  # a root once
    recovered = {where: _brute_force(frame, root) for root, (where, frame) in tried.items()}
    assert recovered == dict.fromkeys(recovered)  # no remaining hashes to any root
    for where, frame, root in pairs:  # what is served is what the root binds
        assert "remaining" not in frame["clock"], where
        assert root_of(frame) == root, where

    # the sealed session's proofs still verify by replay in an empty home, the door's
    # attested ones under its published keys too
    for face, proof in proofs.items():
        path = tmp_path / f"proof-{face}.json"
        path.write_bytes(canonical_json(proof) + b"\n")
        trust = ("--trust", chop_door.url) if face != "sdk" else ()
        done = _verify(tmp_path, str(path), "--require-catalog", *trust)
        assert done.returncode == 0, (face, done.stdout, done.stderr)
        if trust:
            assert "attested by" in done.stdout, done.stdout


# -- comparison of two lengths ----------------------------------------------------------


def _renamed(text: str) -> str:
    """``text`` with every root, session and operation id renamed by order of appearance."""
    names: dict[str, str] = {}

    def name(match: re.Match[str]) -> str:
        return names.setdefault(match.group(0), f"<{match.group(1)}{len(names)}>")

    return re.sub(r"(sha256:|ks_|op_)[A-Za-z0-9]+", name, text)


async def _served(door: Door, home: Path, times: Sequence[str]) -> tuple[list[str], list[str]]:
    """Everything the adversary is served on one sealed tape (renamed), and how each
    probe went ("refused …" or "applied")."""
    owner = local_transport(home=home, sealed=[SCENARIO], principal="eve")
    faces = Faces(create_sdk(owner), door)
    at = times[CLOCK]
    between = times[SHORT + 20]  # after the short tape's end, before the long one's
    probes = [
        f"advance to {at}",  # the clock: refused on both
        f"advance to {between}",
        "advance to 2030-01-01T00:00:00Z",
        f"advance 5\nadvance to {times[CLOCK + 3]}",
        f"advance {SHORT}\nadvance to {times[SHORT + 30]}",
        f"advance to {times[CLOCK + 50]}\nadvance to {times[CLOCK + 49]}",
    ]
    seen: list[str] = []
    outcomes: list[str] = []
    try:
        for face in ("sdk", "v1", "mcp"):
            opened, body = await faces.call(
                face, "kestrel_session_open", {"scenario": SCENARIO, "label": face}
            )
            sid = {"sessionId": opened["sessionId"]}
            seen.append(body)
            calls: list[tuple[str, dict[str, Any]]] = [
                ("kestrel_session_submit", {**sid, "source": f"advance {CLOCK}"}),
                ("kestrel_session_frame", sid),
                ("kestrel_session_history", {**sid, "bars": 1000}),
                ("kestrel_session_blotter", sid),
                ("kestrel_scenario", {"scenario": SCENARIO}),
                ("kestrel_tape", {"scenario": SCENARIO}),
                *(("kestrel_validate", {"source": p, "scenario": SCENARIO}) for p in probes),
            ]
            for name, arguments in calls:
                if face != "mcp" or SURFACE.tool(name).listed:  # MCP reads those as resources
                    seen.append((await faces.call(face, name, arguments))[1])
            for n, probe in enumerate(probes):  # each in a fresh session at the clock
                opened, _ = await faces.call(
                    face, "kestrel_session_open", {"scenario": SCENARIO, "label": f"{face}{n}"}
                )
                sid = {"sessionId": opened["sessionId"]}
                await faces.call(
                    face, "kestrel_session_submit", {**sid, "source": f"advance {CLOCK}"}
                )
                result, body = await faces.call(
                    face, "kestrel_session_submit", {**sid, "source": probe}
                )
                refusal = result.get("refusal")
                if refusal is not None:
                    outcomes.append(f"{face} {probe!r} refused")
                    seen.append(body)  # a refusal: the session did not move
                else:
                    outcomes.append(f"{face} {probe!r} applied")
    finally:
        faces.close()
        await owner.aclose()
    return [_renamed(s) for s in seen], outcomes


async def test_a_sealed_tape_is_served_the_same_whatever_its_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served: list[tuple[list[str], list[str]]] = []
    _catalog(tmp_path / f"catalog-{SHORT}", SHORT)
    times = _catalog(tmp_path / f"catalog-{LONG}", LONG)  # the adversary's guesses
    for bars in (SHORT, LONG):
        catalog = tmp_path / f"catalog-{bars}"
        monkeypatch.setenv("KESTREL_CATALOG_PATH", str(catalog))
        home = tmp_path / f"door-{bars}"
        with serve_door(home, "--seal", SCENARIO, principal="eve") as door:
            served.append(await _served(door, tmp_path / f"home-{bars}", times))
    (short, short_outcomes), (long, long_outcomes) = served
    assert short_outcomes == long_outcomes
    assert sum("refused" in o for o in short_outcomes) == 3  # `advance to` the clock
    assert len(short) == len(long) >= 40
    for a, b in zip(short, long, strict=True):
        assert a == b
    assert any("SCENARIO_SEALED" in s for s in short)  # the tape was refused


# -- refusals by construction -----------------------------------------------------------


class _Hidden(Sequence[str]):
    """A tape's times of which only those up to the clock may be read."""

    def __init__(self, times: Sequence[str], clock: int) -> None:
        self._times = times
        self._clock = clock

    def __len__(self) -> int:
        raise AssertionError("the tape's length was read")

    def __getitem__(self, index: Any) -> Any:
        if not isinstance(index, int) or not 0 <= index <= self._clock:
            raise AssertionError(f"bar {index} after the clock was read")
        return self._times[index]


def test_a_sealed_sessions_refusals_read_no_bar_after_the_clock() -> None:
    """Whatever a source asks, a sealed session checks it reading the clock's time
    alone: its refusals, and the time they take, cannot depend on what is hidden."""
    times = [f"2020-01-{d:02d}T21:00:00Z" for d in range(1, 29)]
    context = SessionContext(
        orders=0, aliases=frozenset(), clock=10, times=_Hidden(times, 10), sealed=True
    )
    sources = {
        f"advance to {times[10]}": ["K205 advance to 2020-01-11T21:00:00Z: not after the clock"],
        f"advance to {times[5]}": ["K205 advance to 2020-01-06T21:00:00Z: not after the clock"],
        f"advance to {times[11]}": [],
        "advance to 2099-01-01T00:00:00Z": [],
        f"advance 3\nadvance to {times[12]}": [],
        f"advance 30\nadvance to {times[27]}": [],
        f"advance to {times[15]}\nadvance to {times[14]}": [],
        f"advance to 2099-01-01T00:00:00Z\nadvance 1\nadvance to {times[3]}": [],
    }
    for source, expected in sources.items():
        located, syntax = parse_located(source)
        assert not syntax
        found = [f"{d.code} {d.message}" for d in check_session(located, context)]
        assert [f[: len(e)] for f, e in zip(found, expected, strict=True)] == expected, source


async def test_a_session_opened_unsealed_resumes_and_verifies_once_sealed(tmp_path: Path) -> None:
    """The form of a session's frames is its chain's: one opened while acme-chop was
    public (its roots cover ``clock.remaining``) resumes in a runtime that now seals it,
    is served without ``remaining``, and its proof verifies in an empty home; one opened
    sealed resumes sealed in a runtime that does not seal it (its roots do not change)."""
    home = tmp_path / "home"
    public = create_sdk(local_transport(home=home, principal="eve"))
    before = (await public.open_session("acme-chop", "before")).session
    assert before is not None
    applied = await before.submit("buy 10 ACME\nadvance 3")
    assert applied.delivery.frame.clock.remaining == 2516
    await public.aclose()

    sealing = create_sdk(local_transport(home=home, sealed=["acme-chop"], principal="eve"))
    served = (await sealing.call("kestrel_session_frame", session_id=before.id)).to_json()
    assert "remaining" not in served["frame"]["clock"]
    assert served["frameRoot"] == applied.delivery.frame_root  # the same chain, resumed
    await sealing.call("kestrel_session_submit", session_id=before.id, source="sell 10 ACME")
    proof = (await sealing.call("kestrel_proof", session_id=before.id)).to_json()
    assert "remaining" not in proof["head"]["clock"]
    assert proof["record"]["lookahead"]["sealed"] is False
    after = (await sealing.open_session("acme-chop", "after")).session
    assert after is not None
    sealed_step = await after.submit("advance 3")
    await sealing.aclose()

    path = tmp_path / "proof.json"
    path.write_bytes(canonical_json(proof) + b"\n")
    done = _verify(tmp_path, str(path), "--require-catalog")
    assert done.returncode == 0, (done.stdout, done.stderr)

    reopened = create_sdk(local_transport(home=home, principal="eve"))
    again = (await reopened.call("kestrel_session_frame", session_id=after.id)).to_json()
    assert again["frameRoot"] == sealed_step.delivery.frame_root
    assert "remaining" not in again["frame"]["clock"]
    await reopened.aclose()


async def test_sealed_sessions_with_and_without_submissions_verify(tmp_path: Path) -> None:
    """A sealed session's grade verifies from the store and its proof by replay, with no
    submission (the form is then told by the head alone: closed at once, or after its
    opening frame was read) as with some."""
    sdk = create_sdk(local_transport(home=tmp_path / "home", sealed=["acme-chop"]))
    index = load_catalog([])
    for label, source in (("none", None), ("read", ""), ("some", "buy 5 ACME\nadvance 7")):
        session = (await sdk.open_session("acme-chop", label)).session
        assert session is not None
        if source is not None:
            frame = (await sdk.call("kestrel_session_frame", session_id=session.id)).to_json()
            assert root_of(frame["frame"]) == frame["frameRoot"]
            if source:
                await session.submit(source)
        grade = await sdk.grade(session.id)
        assert isinstance(grade, GradeResult)
        assert (await sdk.verify(grade)).ok, label
        proof = (await sdk.call("kestrel_proof", session_id=session.id)).to_json()
        assert "remaining" not in proof["head"]["clock"]
        assert root_of(proof["head"]) == proof["record"]["head"], label
        assert verify_proof(index, proof).ok, label
    await sdk.aclose()


async def test_two_processes_that_seal_differently_agree_on_a_sessions_form(
    tmp_path: Path,
) -> None:
    """Process A seals acme-chop, process B (on the same home) does not: A reads a new
    session's opening frame (sealed form), B makes its first submission (its form then
    fixed by the journal); A follows B's chain rather than refusing the session."""
    home = tmp_path / "home"
    a = create_sdk(local_transport(home=home, sealed=["acme-chop"], principal="eve"))
    b = create_sdk(local_transport(home=home, principal="eve"))
    session = (await a.open_session("acme-chop", "mixed")).session
    assert session is not None
    opening = (await a.call("kestrel_session_frame", session_id=session.id)).to_json()
    assert "remaining" not in opening["frame"]["clock"]
    step = await b.call("kestrel_session_submit", session_id=session.id, source="advance 2")
    followed = (await a.call("kestrel_session_frame", session_id=session.id)).to_json()
    assert followed["frameRoot"] == step.to_json()["delivery"]["frameRoot"]
    assert followed["frame"]["clock"] == {"bar": 2, "time": followed["frame"]["clock"]["time"]}
    await a.aclose()
    await b.aclose()
