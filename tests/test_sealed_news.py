"""A sealed scenario with news serves no news item after a session's clock, on any face.

During a session on the sealed ``news-acme`` (its clock mid-tape), every tool of the
surface (table generated from ``SURFACE``, the news read paged to its first item), every
resource (the session's news and frame among them) and every prompt goes through stdio
MCP, the door's ``/mcp``, the door's ``/v1`` and both SDK transports; no response body
holds the marker of an item whose time is after the clock bar's, while the items up to
the clock are served (the search finds what it seeks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.every_face import Faces, read_everything, surface_calls
from tests.news_catalog import NEWS_ID, bar_time, marker, news_items, write_news_scenario

pytestmark = pytest.mark.anyio

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
    faces = Faces(tmp_path, [tmp_path / "catalog"], sealed=[NEWS_ID], attested=False)
    traded = await faces.trade_and_grade(NEWS_ID, "sealed", CLOCK)
    sid = traded.session_id
    news: list[tuple[str, dict[str, Any]]] = [
        ("kestrel_session_news", {"sessionId": sid, "limit": 100}),
        ("kestrel_session_news", {"sessionId": sid, "limit": 3, "before": "n60"}),
        ("kestrel_session_news", {"sessionId": sid, "symbol": "ACME", "before": "n61"}),
        ("kestrel_session_news", {"sessionId": sid, "limit": 101}),
    ]
    for name, arguments in surface_calls(traded.samples(NEWS_ID), extra=news):
        await faces.call(name, arguments)
    known = {"id": sid, "scenario": NEWS_ID, "root": traded.root, "gradeRoot": traded.grade.root}
    await read_everything(faces.mcp, known, scenario=NEWS_ID)

    later = _markers(after=True)
    assert later  # there are items after the clock
    for where, body in faces.bodies:
        found = sorted(tag for tag in later if tag in body)
        assert not found, (where, found[:3])
    joined = "\n".join(body for _, body in faces.bodies)
    shown = _markers(after=False)
    assert all(tag in joined for tag in shown)  # every visible item was served
    assert marker(CLOCK + 2) in joined  # the newest visible one (day CLOCK - 1)
    assert "SCENARIO_SEALED" in joined
    assert "kestrel://sessions/" in joined
    assert len(faces.bodies) > 60
    await faces.aclose()
