"""The official ``mcp`` client over stdio: prompts, their completion, progress during a
grade and log messages, in both eras (``legacy`` is the 2025-11-25 handshake,
``2026-07-28`` the modern envelope)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
MODES = ["legacy", "2026-07-28"]


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "KESTREL_HOME": str(home), "KESTREL_SECRET_STORE": "file", **extra}


def _kestrel(home: Path, **extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "kestrel_mcp", "--home", str(home)],
        env=_env(home, **extra),
    )


def _text(result: Any) -> str:
    assert len(result.messages) == 1
    message = result.messages[0]
    assert message.role == "user"
    text: str = message.content.text
    return text


@pytest.mark.parametrize("mode", MODES)
async def test_prompts_list_get_and_complete_over_stdio(mode: str, tmp_path: Path) -> None:
    async with Client(_kestrel(tmp_path / "home"), mode=mode, read_timeout_seconds=60) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == {"kestrel_trade_scenario", "kestrel_review_grade"}
        assert [a.name for a in prompts["kestrel_trade_scenario"].arguments or []] == [
            "scenario",
            "style",
        ]

        brief = _text(await client.get_prompt("kestrel_trade_scenario", {"scenario": "acme-trend"}))
        assert "acme-trend" in brief
        assert "ACME: tick 0.01" in brief
        assert "buy 10 ACME limit 101.25 tif gtc as entry" in brief  # the catalog's example
        assert "kestrel_session_open" in brief
        assert "Style (balanced)" in brief
        cautious = _text(
            await client.get_prompt(
                "kestrel_trade_scenario", {"scenario": "acme-trend", "style": "cautious"}
            )
        )
        assert "Style (cautious)" in cautious

        ids = await client.complete(
            PromptReference(type="ref/prompt", name="kestrel_trade_scenario"),
            {"name": "scenario", "value": "acme-c"},
        )
        assert ids.completion.values == ["acme-chop", "acme-crash"]

        opened = await client.call_tool("kestrel_session_open", {"scenario": "acme-trend"})
        sid = opened.structured_content["sessionId"]
        await client.call_tool(
            "kestrel_session_submit", {"sessionId": sid, "source": "buy 10 ACME\nadvance 5\n"}
        )
        grade = (await client.call_tool("kestrel_grade", {"sessionId": sid})).structured_content
        assert grade["kind"] == "kestrel.grade"

        roots = await client.complete(
            PromptReference(type="ref/prompt", name="kestrel_review_grade"),
            {"name": "gradeRoot", "value": grade["root"][7:15]},
        )
        assert roots.completion.values == [grade["root"]]

        review = _text(
            await client.get_prompt("kestrel_review_grade", {"gradeRoot": grade["root"]})
        )
        assert grade["root"] in review
        assert f"pnl: {grade['metrics']['pnl']}" in review
        assert "Fills (1):" in review
        for check in grade["conformance"]["checks"]:
            assert check["id"] in review


@pytest.mark.parametrize("mode", MODES)
async def test_prompt_errors_are_invalid_params_naming_the_problem(
    mode: str, tmp_path: Path
) -> None:
    async with Client(_kestrel(tmp_path / "home"), mode=mode, read_timeout_seconds=60) as client:
        cases = [
            ("kestrel_nope", {}, "Unknown prompt: kestrel_nope"),
            ("kestrel_trade_scenario", {}, "scenario: is required"),
            ("kestrel_trade_scenario", {"scenario": "nope"}, "no scenario 'nope'"),
            (
                "kestrel_trade_scenario",
                {"scenario": "acme-trend", "style": "wild"},
                "style: 'wild' is not one of",
            ),
            ("kestrel_trade_scenario", {"scenario": "acme-trend", "x": "1"}, "x: is not an arg"),
            ("kestrel_review_grade", {"gradeRoot": "sha256:" + "0" * 64}, "UNKNOWN_ARTIFACT"),
            # an id no tool takes, named as the prompt's argument, not the tool's
            (
                "kestrel_trade_scenario",
                {"scenario": "a/b"},
                "Invalid arguments for prompt kestrel_trade_scenario: scenario: an id is",
            ),
            (
                "kestrel_review_grade",
                {"gradeRoot": ".."},
                "Invalid arguments for prompt kestrel_review_grade: gradeRoot: an id is",
            ),
        ]
        for name, arguments, message in cases:
            with pytest.raises(MCPError) as caught:
                await client.get_prompt(name, arguments)
            assert caught.value.error.code == -32602, (name, arguments)
            assert message in caught.value.error.message


@pytest.mark.parametrize("mode", MODES)
async def test_progress_notifications_while_a_grade_runs(mode: str, tmp_path: Path) -> None:
    """A real runtime whose grade answers every 10 ms: a long session's grade, asked
    with a progressToken, reports rising progress and ends with the grade itself. The
    session is played and closed by one server and graded by the next: a runtime that
    holds the session live measures its engine at once, one that does not replays it."""
    server = StdioServerParameters(
        command=sys.executable,
        args=[str(HERE / "budget_server.py"), str(tmp_path / "home"), "--grade-budget", "0.01"],
        env=_env(tmp_path / "home"),
    )
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with Client(server, mode=mode, read_timeout_seconds=300) as client:
        opened = await client.call_tool("kestrel_session_open", {"scenario": "minute-200k"})
        sid = opened.structured_content["sessionId"]
        # Two pentads: the server holds the grade after the first until a resumption has
        # reported it, so rising progress is seen however soon the replay ends (with one
        # pentad the first report is the last, and a late poll saw only that one).
        for source in ("buy 10 ACME\nadvance 100000", "advance 99990"):
            await client.call_tool("kestrel_session_submit", {"sessionId": sid, "source": source})
        await client.call_tool("kestrel_session_close", {"sessionId": sid})
    async with Client(server, mode=mode, read_timeout_seconds=300) as client:
        result = await client.call_tool(
            "kestrel_grade", {"sessionId": sid}, progress_callback=on_progress
        )
    assert result.structured_content["kind"] == "kestrel.grade"
    assert len(seen) > 1, seen
    values = [done for done, _, _ in seen]
    assert values == sorted(set(values))  # strictly rising
    assert {total for _, total, _ in seen} == {199990}
    assert "of 199990 bars" in str(seen[-1][2])


async def test_set_level_then_a_skipped_user_scenario_is_a_warning(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog" / "broken"
    catalog.mkdir(parents=True)
    (catalog / "scenario.toml").write_text('id = "broken"\n', encoding="utf-8")
    messages: list[Any] = []

    async def on_log(params: Any) -> None:
        messages.append(params)

    server = _kestrel(tmp_path / "home", KESTREL_CATALOG_PATH=str(tmp_path / "catalog"))
    async with Client(server, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("warning")
        catalog_ids = [
            s["id"]
            for s in (await client.call_tool("kestrel_catalog", {})).structured_content["scenarios"]
        ]
    assert "broken" not in catalog_ids
    warnings = [m for m in messages if m.level == "warning"]
    assert warnings, messages
    assert any("missing account.cash" in str(m.data) for m in warnings)
    for message in warnings:  # one per problem of the skipped file
        assert str(message.data).startswith("skipping a user scenario: ")
        assert str(Path("broken") / "scenario.toml") in str(message.data)
        assert message.logger == "kestrel_sdk.runtime.catalog"


async def test_without_a_level_no_log_messages_are_sent(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog" / "broken"
    catalog.mkdir(parents=True)
    (catalog / "scenario.toml").write_text('id = "broken"\n', encoding="utf-8")
    messages: list[Any] = []

    async def on_log(params: Any) -> None:
        messages.append(params)

    server = _kestrel(tmp_path / "home", KESTREL_CATALOG_PATH=str(tmp_path / "catalog"))
    async with Client(server, mode="2026-07-28", logging_callback=on_log) as client:
        await client.call_tool("kestrel_catalog", {})
    assert messages == []
