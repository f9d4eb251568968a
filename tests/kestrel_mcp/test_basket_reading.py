"""A basket of twenty stocks and their index stays readable over MCP: the brief names
their common terms once, and a frame's text is short rows, not thousand-character lines.

The real ``kestrel-mcp`` over stdio with the official client, on the shipped
``basket-20``: what a model reads is the one text content of each result.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio

LONGEST_LINE = 130
"""Characters: the account line of a six-figure account is about 120."""


def _server(home: Path) -> StdioServerParameters:
    env = {**os.environ, "KESTREL_HOME": str(home), "KESTREL_SECRET_STORE": "file"}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "kestrel_mcp", "--home", str(home)], env=env
    )


async def _call(client: Client, name: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result
    [content] = result.content
    return _text(content), result.structured_content


def _rows(text: str) -> list[str]:
    """The lines of a frame's text before its news (prose, a line an item)."""
    lines = text.splitlines()
    return lines[: lines.index("news:")] if "news:" in lines else lines


def _text(content: Any) -> str:
    text: str = content.text
    return text


async def test_a_basket_brief_and_its_frames_stay_short(tmp_path: Path) -> None:
    async with Client(_server(tmp_path / "home"), read_timeout_seconds=60) as client:
        brief = await client.get_prompt("kestrel_trade_scenario", {"scenario": "basket-20"})
        text = _text(brief.messages[0].content)
        read = await client.read_resource("kestrel://catalog/scenarios/basket-20")
        scenario = json.loads(_text(read.contents[0]))
        symbols = [i["symbol"] for i in scenario["instruments"]]
        assert len(symbols) == 21
        assert f"- {', '.join(symbols)}: tick 0.01, lot 1\n" in text  # one line, not 21
        assert max(len(line) for line in text.splitlines()) < 400
        assert len(text) < 3_000

        _, opened = await _call(client, "kestrel_session_open", scenario="basket-20")
        sid = opened["sessionId"]
        source = "".join(f"buy 10 {s}\n" for s in symbols) + "advance 40\n"
        stepped, _ = await _call(client, "kestrel_session_submit", sessionId=sid, source=source)
        assert max(len(line) for line in _rows(stepped)) <= LONGEST_LINE

        # holding twenty-one positions, a step reads as a frame of short rows, then news
        held, data = await _call(client, "kestrel_session_submit", sessionId=sid, source="advance")
        frame = data["delivery"]["frame"]
        rows = _rows(held)
        assert max(len(line) for line in rows) <= LONGEST_LINE
        lines = held.splitlines()
        for symbol, bar in frame["bars"].items():  # each bar one row, its close the mark
            row = (
                f"{symbol} {bar['open']} {bar['high']} {bar['low']} {bar['close']} {bar['volume']}"
            )
            assert row in lines
            assert frame["marks"][symbol] == bar["close"]
        for p in frame["positions"]:
            assert f"{p['symbol']} {p['qty']} {p['avgPrice']} {p['unrealized']}" in lines
        assert len(frame["positions"]) == 21
        assert len("\n".join(rows)) < 1_700  # about 70 bytes a symbol: its bar, its position
        news = lines[len(rows) :]
        assert news[0] == "news:"
        assert 1 <= len(news) - 1 == len(frame["news"]) <= 5  # the newest few, one a line

        # the frame tool reads the same rows
        framed, _ = await _call(client, "kestrel_session_frame", sessionId=sid)
        assert framed == "\n".join(lines[1:])
