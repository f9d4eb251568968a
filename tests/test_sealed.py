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

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.every_face import Faces, decoded, numbers, read_everything, surface_calls

pytestmark = pytest.mark.anyio

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
        seen = {row[f] for row in rows[: CLOCK + 1] for f in fields} | numbers(examples)
        self.prices = {row[f] for row in rows[CLOCK + 1 :] for f in fields} - seen
        self.lengths = {str(len(rows)), str(len(rows) - 1)}

    def __call__(self, body: str) -> list[str]:
        values = numbers(body)
        found = [t for t in self.texts if t in body]
        return [*found, *sorted(values & self.prices), *sorted(values & self.lengths)][:3]


async def test_no_face_shows_a_bar_after_the_clock(tmp_path: Path) -> None:
    rows = _catalog(tmp_path / "catalog")
    faces = Faces(tmp_path, [tmp_path / "catalog"], sealed=[SCENARIO])
    alice = faces.alice
    examples = json.dumps((await alice.catalog()).to_json()["statementKinds"])
    leaks = Leaks(rows, examples)
    traded = await faces.trade_and_grade(SCENARIO, "sealed", CLOCK)
    sid = traded.session_id
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
    calls = surface_calls(traded.samples(SCENARIO), refused=refused, extra=extra)
    for name, arguments in calls:
        await faces.call(name, arguments)

    known = {
        "id": SCENARIO,
        "scenario": SCENARIO,
        "root": traded.root,
        "gradeRoot": traded.grade.root,
    }
    await read_everything(faces.mcp, known)

    for where, body in faces.bodies:
        text = decoded(body).replace(said, "(said)")
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
    joined = "\n".join(body for _, body in faces.bodies)
    assert "SCENARIO_SEALED" in joined  # the tape was asked for, and refused
    assert "names no bar after bar 0" in joined  # the trading prompt was rendered
    assert "Input should be less than or equal to 1000" in joined  # refusals were seen
    assert f"advance to {times[CLOCK]}: not after the clock" in joined
    assert "unknown symbol 'NOPE'" in joined
    assert "https://in-toto.io/Statement/v1" in decoded(joined)  # proofs were signed
    # the search finds what it seeks
    assert leaks(f"[{BARS}]")
    assert leaks(times[-1])
    assert leaks(f'"{sorted(leaks.prices)[0]}"')
    assert len(faces.bodies) > 60
    catalog = (await faces.remote.catalog()).to_json()
    entry = next(s for s in catalog["scenarios"] if s["id"] == SCENARIO)
    assert entry["sealed"] is True
    assert entry["tapeRoot"] == (await alice.scenario(SCENARIO)).tape.root
    await faces.aclose()
