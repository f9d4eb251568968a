"""A sealed run of the shipped basket (twenty stocks, their index, their news) over
stdio MCP with the official client serves no news item after the session's clock.

``basket-20`` copied sealed into a user catalog and served by the real ``kestrel-mcp``;
a session bought and advanced to a clock mid-tape; then every tool of the surface (table
generated from ``SURFACE``, with the news read paged, filtered and past its limit), every
resource, ``resources/list``, the templates, every prompt and a completion; no response
holds the headline, body or time of an item whose time is after the clock bar's (unless
an item visible at the clock has the same text), while the items up to the clock are
served (the search finds what it seeks).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol.surface import SURFACE
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import PromptReference

from tests.every_face import sample_call

pytestmark = pytest.mark.anyio

SHIPPED = Path(__file__).parents[2] / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"
SEALED = "basket-sealed"
CLOCK = 250  # of 504 bars: mid-tape, about half the items after it


def _catalog(root: Path) -> list[dict[str, str]]:
    """``basket-20`` as the sealed ``basket-sealed`` under ``root``; its news items."""
    directory = root / SEALED
    shutil.copytree(SHIPPED / "basket-20", directory)
    toml = (directory / "scenario.toml").read_text("utf-8")
    (directory / "scenario.toml").write_text(
        toml.replace('id = "basket-20"', f'id = "{SEALED}"\nsealed = true', 1), "utf-8"
    )
    lines = (directory / "news.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _server(home: Path, catalog: Path) -> StdioServerParameters:
    env = {
        **os.environ,
        "KESTREL_HOME": str(home),
        "KESTREL_SECRET_STORE": "file",
        "KESTREL_CATALOG_PATH": str(catalog),
    }
    return StdioServerParameters(
        command=sys.executable, args=["-m", "kestrel_mcp", "--home", str(home)], env=env
    )


async def test_a_sealed_basket_serves_no_news_item_after_the_clock(tmp_path: Path) -> None:
    items = _catalog(tmp_path / "catalog")
    bodies: list[tuple[str, str]] = []

    async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            result = await client.call_tool(name, arguments)
        except MCPError as error:  # arguments refused (-32602): its message is served too
            bodies.append((f"{name} {arguments}", f"{error} {json.dumps(error.data)}"))
            return {}
        bodies.append((f"{name} {arguments}", result.model_dump_json()))
        structured: dict[str, Any] = result.structured_content or {}
        return structured

    server = _server(tmp_path / "home", tmp_path / "catalog")
    async with Client(server, read_timeout_seconds=120) as client:
        catalog = await call(client, "kestrel_catalog", {})
        [entry] = [s for s in catalog["scenarios"] if s["id"] == SEALED]
        assert entry["sealed"] is True
        opened = await call(client, "kestrel_session_open", {"scenario": SEALED, "label": "s"})
        sid = opened["sessionId"]
        source = f"buy 10 ACRN tif gtc\nbuy ACRN to 5%\nadvance {CLOCK}"
        stepped = await call(client, "kestrel_session_submit", {"sessionId": sid, "source": source})
        frame = stepped["delivery"]["frame"]
        assert frame["clock"]["bar"] == CLOCK
        clock = frame["clock"]["time"]
        assert frame["news"]  # the frame shows the newest visible items
        graded = await call(client, "kestrel_session_open", {"scenario": SEALED, "label": "g"})
        grade = await call(client, "kestrel_grade", {"sessionId": graded["sessionId"]})
        assert grade["kind"] == "kestrel.grade", grade

        samples: dict[str, Any] = {
            "scenario": SEALED,
            "sessionId": sid,
            "source": "cancel all",
            "token": "op_nope",
            "root": stepped["pentad"]["root"],
            "grade": grade,
            "gradeRoot": grade["root"],
            "bars": 1000,
        }
        last = len(items)
        calls = [
            (tool.name, sample_call(tool, samples))
            for tool in SURFACE.tools
            if tool.listed and tool.name not in ("kestrel_grade", "kestrel_session_close")
        ]
        calls += [
            ("kestrel_session_news", {"sessionId": sid, "limit": 100}),
            ("kestrel_session_news", {"sessionId": sid, "limit": 100, "before": f"n{last}"}),
            ("kestrel_session_news", {"sessionId": sid, "symbol": "ACRN", "limit": 100}),
            ("kestrel_session_news", {"sessionId": sid, "limit": 101}),
            ("kestrel_session_history", {"sessionId": sid, "bars": 1000, "symbol": "INDEX"}),
            ("kestrel_validate", {"source": "buy JNPR to 10%", "scenario": SEALED}),
        ]
        for name, arguments in calls:
            await call(client, name, arguments)
        page: dict[str, Any] = {"sessionId": sid, "limit": 100}
        while page.get("before", "") is not None:  # every visible item, page by page
            read = await call(client, "kestrel_session_news", page)
            page["before"] = read.get("nextBefore")
        for name in ("kestrel_session_close", "kestrel_grade"):
            await call(client, name, {"sessionId": sid})

        known = {"id": sid, "root": samples["root"], "gradeRoot": grade["root"]}
        for resource in SURFACE.resources:
            values = {v: known[v] for v in resource.variables}
            if resource.per_scenario:
                values["id"] = SEALED
            uri = resource.expand(**values)
            try:
                bodies.append((uri, (await client.read_resource(uri)).model_dump_json()))
            except MCPError as error:
                bodies.append((uri, f"{error} {json.dumps(error.data)}"))
        bodies.append(("resources/list", (await client.list_resources()).model_dump_json()))
        templates = await client.list_resource_templates()
        bodies.append(("templates", templates.model_dump_json()))
        for prompt in SURFACE.prompts:
            given = {"scenario": SEALED, "gradeRoot": grade["root"]}
            wanted = {a.name: given[a.name] for a in prompt.arguments if a.required}
            bodies.append(
                (prompt.name, (await client.get_prompt(prompt.name, wanted)).model_dump_json())
            )
        ref = PromptReference(type="ref/prompt", name="kestrel_trade_scenario")
        completed = await client.complete(ref, {"name": "scenario", "value": "bask"})
        bodies.append(("complete", completed.model_dump_json()))

    visible = [item for item in items if item["time"] <= clock]
    later = [item for item in items if item["time"] > clock]
    assert len(visible) > 50
    assert len(later) > 50
    seen = {item[part] for item in visible for part in ("headline", "body", "time")}
    secrets = {item[part] for item in later for part in ("headline", "body", "time")} - seen
    assert len(secrets) > 100
    for where, body in bodies:
        found = sorted(secret for secret in secrets if secret in body)
        assert not found, (where, found[:2])
    joined = "\n".join(body for _, body in bodies)
    assert all(item["headline"] in joined for item in visible)  # every visible item served
    assert visible[-1]["body"] in joined
    assert "SCENARIO_SEALED" in joined  # the tape is refused
    assert len(bodies) > 30
