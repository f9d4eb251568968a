"""An MCP agent learns every order form and how to read news from what it is served.

The real ``kestrel-mcp`` over stdio with the official client: the connection's
``instructions``, the catalog's ``statementKinds`` (its ``order`` kind lists its forms)
and the trading brief of the shipped ``basket-20`` each show every order form of
``kestrel_protocol.ORDER_FORMS`` (its syntax and example), and the instructions and the
brief say how news is read. Every example the catalog teaches is validated through the
same server against the shipped ``acme-trend``: it is valid there, so a grammar change
that breaks an example cannot leave what agents read stale (tests/kestrel_sdk/runtime/
lang/test_forms.py checks that each example reads as the form it names).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from kestrel_protocol import ORDER_FORMS
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.anyio


def _server(home: Path) -> StdioServerParameters:
    env = {**os.environ, "KESTREL_HOME": str(home), "KESTREL_SECRET_STORE": "file"}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "kestrel_mcp", "--home", str(home)], env=env
    )


async def _structured(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result
    structured: dict[str, Any] = result.structured_content
    return structured


async def test_every_face_an_agent_reads_teaches_the_order_forms_and_news(
    tmp_path: Path,
) -> None:
    async with Client(_server(tmp_path / "home"), read_timeout_seconds=60) as client:
        instructions = client.instructions
        assert instructions is not None
        catalog = await _structured(client, "kestrel_catalog")
        brief = await client.get_prompt("kestrel_trade_scenario", {"scenario": "basket-20"})
        text: str = brief.messages[0].content.text  # type: ignore[union-attr]

        kinds = {kind["kind"]: kind for kind in catalog["statementKinds"]}
        assert list(kinds) == ["order", "cancel", "advance", "stand-down"]  # no fifth
        taught = kinds["order"]["forms"]
        assert [f["form"] for f in taught] == [f.form for f in ORDER_FORMS]
        assert all("forms" not in kind for name, kind in kinds.items() if name != "order")
        for form in ORDER_FORMS:
            line = f"{form.form}: {form.syntax}  (e.g. {form.example}) - {form.summary}"
            assert line in instructions, form.form
            assert f"  - {line}" in text, form.form
        for word in ("take", "loss", "trail", "oco", '"to" TARGET'):
            assert word in kinds["order"]["syntax"]

        # news: what an item is, when it is visible, where to read it
        for where in (instructions, text):
            assert "at or before the clock bar's time" in where
            assert "kestrel_session_news {sessionId, limit, before, symbol}" in where
        plain = await client.get_prompt("kestrel_trade_scenario", {"scenario": "acme-trend"})
        assert "News:" not in plain.messages[0].content.text  # type: ignore[union-attr]

        # every example shown is valid on a shipped scenario, checked by the server
        examples = [kind["example"] for kind in kinds.values()]
        examples += [form["example"] for form in taught]
        assert len(examples) == 4 + len(ORDER_FORMS)
        for example in examples:
            report = await _structured(
                client, "kestrel_validate", source=example, scenario="acme-trend"
            )
            assert report["ok"], (example, report["diagnostics"])
        assert len(text) < 6_000  # the basket's brief stays short with the forms in it
