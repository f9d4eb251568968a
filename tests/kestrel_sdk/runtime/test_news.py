"""News in frames and the news read: exactly the items whose time is at or before the
clock bar's time, the newest N in a frame (bodies cut), older ones and whole bodies by
the paged read; never an item after the clock."""

from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_protocol import KestrelError, root_of
from kestrel_sdk import create_sdk, local_transport
from kestrel_sdk.runtime.catalog import load_catalog

from tests.news_catalog import NEWS_ID, bar_time, news_items, write_news_scenario

pytestmark = pytest.mark.anyio


def _visible(clock: int) -> list[dict[str, str]]:
    """The items visible at bar ``clock``, in canonical (time) order."""
    return sorted(
        (item for item in news_items() if item["time"] <= bar_time(clock)),
        key=lambda item: item["time"],
    )


async def test_a_frame_shows_exactly_the_newest_items_up_to_the_clock(tmp_path: Path) -> None:
    write_news_scenario(tmp_path / "catalog")
    transport = local_transport(home=tmp_path / "home", catalog_paths=[tmp_path / "catalog"])
    async with create_sdk(transport) as sdk:
        session = (await sdk.open_session(NEWS_ID)).session
        assert session is not None
        clock = 0
        for step in (0, 1, 1, 5, 20, 30):
            if step:
                response = await session.submit(f"advance {step}")
                frame = response.delivery.frame
                assert response.delivery.frame_root == root_of(frame.to_json())
            else:
                frame = (await session.frame()).frame
            clock += step
            assert frame.clock.bar == clock
            shown = frame.news
            assert shown is not None
            want = _visible(clock)[-5:]
            assert [item.headline for item in shown] == [item["headline"] for item in want]
            assert all(item.time <= frame.clock.time for item in shown)
            for item, given in zip(shown, want, strict=True):
                full = given["body"]
                assert item.truncated is (True if len(full) > 400 else None)
                assert full.startswith(item.body)
            # the read pages through every visible item, whole, and nothing later
            pages: list[str] = []
            before = None
            while True:
                page = await session.news(limit=7, before=before)
                pages[:0] = [item.body for item in page.items]
                if page.next_before is None:
                    break
                before = page.next_before
            assert pages == [item["body"] for item in _visible(clock)]
        acme = await session.news(limit=100, symbol="ACME")
        assert {item.symbol for item in acme.items} == {"ACME", None}
        with pytest.raises(KestrelError, match="not a news item id"):
            await session.news(before="12")
        with pytest.raises(KestrelError, match="'NOPE' is not in this scenario"):
            await session.news(symbol="NOPE")


async def test_a_scenario_without_news_has_frames_without_a_news_member(tmp_path: Path) -> None:
    async with create_sdk(local_transport(home=tmp_path)) as sdk:
        session = (await sdk.open_session("acme-trend")).session
        assert session is not None
        frame = (await session.submit("advance 3")).delivery.frame
        assert "news" not in frame.to_json()
        assert (await session.news()).items == []


async def test_news_in_frame_sets_the_frame_budget(tmp_path: Path) -> None:
    write_news_scenario(tmp_path / "catalog", extra="news_in_frame = 2\n")
    loaded = load_catalog([tmp_path / "catalog"]).get(NEWS_ID)
    assert loaded is not None
    assert loaded.scenario.to_json()["newsInFrame"] == 2
    transport = local_transport(home=tmp_path / "home", catalog_paths=[tmp_path / "catalog"])
    async with create_sdk(transport) as sdk:
        session = (await sdk.open_session(NEWS_ID)).session
        assert session is not None
        frame = (await session.submit("advance 10")).delivery.frame
        assert [item.headline for item in frame.news or []] == [
            item["headline"] for item in _visible(10)[-2:]
        ]


async def test_the_trading_brief_of_a_scenario_with_news_says_how_to_read_it(
    tmp_path: Path,
) -> None:
    from kestrel_mcp import create_kestrel_mcp_server

    write_news_scenario(tmp_path / "catalog")
    transport = local_transport(home=tmp_path / "home", catalog_paths=[tmp_path / "catalog"])
    async with create_sdk(transport) as sdk:
        server = create_kestrel_mcp_server(sdk.transport, secrets=False)
        texts = {}
        for scenario in (NEWS_ID, "acme-trend"):
            params = {"name": "kestrel_trade_scenario", "arguments": {"scenario": scenario}}
            answer = await server.handle(
                {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": params}
            )
            assert answer is not None
            texts[scenario] = answer["result"]["messages"][0]["content"]["text"]
    assert "newest 5 visible items" in texts[NEWS_ID]
    assert "kestrel_session_news {sessionId, limit, before, symbol} gives" in texts[NEWS_ID]
    assert "News:" not in texts["acme-trend"]
