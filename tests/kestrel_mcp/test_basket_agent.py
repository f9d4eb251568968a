"""A scripted agent trades the shipped basket through MCP as an evaluated LLM agent would:
it reads the news, rebalances by target weights, and its proof verifies in an empty home.

The real ``kestrel-mcp`` over stdio with the official client, on ``basket-20``. Each step
the agent reads the frame (its ``news`` lists the newest items visible at the clock),
pages every item it has not seen through ``kestrel_session_news``, and keeps the book of
the ``kestrel/news`` offline agent (``kestrel_inspect.news``): a stock whose earnings
beat is held for 15 bars (a miss drops it), the rest of 90 % of equity in ``INDEX``.
It trades only by target weight (``buy ACRN to 22%``, ``sell INDEX to 24%``). Every
response is searched for a news item published after the clock: none is
ever served.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from kestrel_inspect.news import NewsBook, rebalance
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data/basket-20"


def _server(home: Path) -> StdioServerParameters:
    env = {**os.environ, "KESTREL_HOME": str(home), "KESTREL_SECRET_STORE": "file"}
    env.pop("KESTREL_CATALOG_PATH", None)
    return StdioServerParameters(
        command=sys.executable, args=["-m", "kestrel_mcp", "--home", str(home)], env=env
    )


class Leaks:
    """Every response, checked for a news item after the clock it was served at."""

    def __init__(self) -> None:
        lines = (DATA / "news.jsonl").read_text(encoding="utf-8").splitlines()
        self.items = [json.loads(line) for line in lines]
        self.by_id = {f"n{i}": item for i, item in enumerate(self.items, 1)}
        heads = [item["headline"] for item in self.items]
        self.unique = [item for item in self.items if heads.count(item["headline"]) == 1]
        self.responses = 0

    def check(self, clock: str, text: str, served: list[dict[str, Any]]) -> None:
        self.responses += 1
        for item in served:
            assert item["time"] <= clock, (clock, item)
            assert self.by_id[item["id"]]["headline"] == item["headline"]
        for item in self.unique:
            if item["time"] > clock:
                assert item["headline"] not in text, (clock, item)


async def test_a_news_reading_agent_rebalances_the_basket_by_target_weights(
    tmp_path: Path,
) -> None:
    leaks, book = Leaks(), NewsBook()
    targets: list[str] = []
    async with Client(_server(tmp_path / "home"), read_timeout_seconds=120) as client:

        async def call(name: str, **arguments: Any) -> dict[str, Any]:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, result
            [content] = result.content
            data: dict[str, Any] = result.structured_content
            text = getattr(content, "text", "")
            frame = (data.get("delivery") or {}).get("frame") or data
            clock = (frame.get("clock") or {}).get("time")
            if clock is not None:
                served = frame.get("news") or data.get("items") or []
                leaks.check(clock, text + json.dumps(data), served)
            return data

        opened = await call("kestrel_session_open", scenario="basket-20", label="news-agent")
        sid = opened["sessionId"]
        frame = (await call("kestrel_session_frame", sessionId=sid))["frame"]
        while frame["status"] == "open":
            bar = frame["clock"]["bar"]
            unseen = [n for n in frame.get("news", []) if n["id"] not in book.seen]
            if unseen:  # whole items, and any older than the frame's few
                page = await call("kestrel_session_news", sessionId=sid, limit=20)
                book.read(page["items"], bar)
            weights = book.weights(bar, frame["marks"])
            statements = rebalance(
                frame["marks"], frame["positions"], frame["account"]["equity"], weights
            )
            targets += statements
            source = "\n".join([*statements, "advance"])
            frame = (await call("kestrel_session_submit", sessionId=sid, source=source))[
                "delivery"
            ]["frame"]
        grade = await call("kestrel_grade", sessionId=sid)
        proof = await call("kestrel_proof", sessionId=sid)

    assert leaks.responses > 500
    assert book.beats >= 30
    assert book.misses >= 20
    assert any(s.startswith("buy INDEX to ") for s in targets)
    assert any(s.startswith("sell INDEX to ") for s in targets)
    assert len({s.split()[1] for s in targets if s.startswith("buy ")}) >= 15
    assert grade["passed"] is True, grade
    # reading paid: the agent beat holding INDEX alone
    closes = [
        Decimal(row.split(",")[5])
        for row in (DATA / "tape.csv").read_text(encoding="utf-8").splitlines()[1:]
        if row.split(",")[1] == "INDEX"
    ]
    assert Decimal(grade["metrics"]["return"]) > closes[-1] / closes[0] - 1

    # the proof verifies in an empty home, with no catalog path
    path = tmp_path / "proof.json"
    path.write_text(json.dumps(proof), encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "KESTREL_CATALOG_PATH"}
    verified = subprocess.run(
        [str(Path(sys.executable).parent / "kestrel"), "verify", str(path)],
        env={**env, "KESTREL_HOME": str(empty), "HOME": str(empty)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith(f"ok: proof {proof['root']} of grade {grade['root']}")
