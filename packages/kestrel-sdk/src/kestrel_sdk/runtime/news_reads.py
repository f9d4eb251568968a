"""A session's news read: the scenario's items visible at its clock, never one after.

An item is visible at a clock when its time is at or before the time of the clock's bar
(the rule frames follow too), so the read moves no horizon: like a history, it shows
nothing the session's own clock has not reached.
"""

from __future__ import annotations

from kestrel_protocol import Clock, KestrelError, NewsItem, NewsPage, RefusalCode, ScenarioRef

from .catalog.model import LoadedScenario
from .engine.wire import construct

__all__ = ["news_page"]


def _item_number(before: str) -> int:
    if before.startswith("n") and before[1:].isdigit() and not before[1:].startswith("0"):
        return int(before[1:])
    raise KestrelError(
        RefusalCode.INVALID_ARGUMENT,
        f"before {before!r} is not a news item id such as n12 (a page's nextBefore)",
        {"before": before},
    )


def news_page(
    loaded: LoadedScenario,
    session: str,
    scenario: ScenarioRef,
    clock: Clock,
    *,
    limit: int,
    before: str | None,
    symbol: str | None,
) -> NewsPage:
    """Up to ``limit`` items visible at ``clock`` (of ``symbol`` and market-wide ones, if
    given), older than item ``before`` if given, oldest first. An unknown symbol is
    INVALID_ARGUMENT, as in a history."""
    symbols = [item.symbol for item in loaded.scenario.instruments]
    if symbol is not None and symbol not in symbols:
        raise KestrelError(
            RefusalCode.INVALID_ARGUMENT,
            f"symbol {symbol!r} is not in this scenario (it has {', '.join(symbols)})",
            {"symbol": symbol, "symbols": symbols},
        )
    end = 0 if loaded.news is None else loaded.news.visible(clock.time)
    if before is not None:
        end = min(end, _item_number(before) - 1)
    items = () if loaded.news is None else loaded.news.items[:end]
    if symbol is not None:
        items = tuple(item for item in items if item.symbol in {symbol, None})
    page = items[max(len(items) - limit, 0) :]
    more = len(items) > len(page)
    members = {
        "session": session,
        "scenario": scenario,
        "clock": clock,
        "items": [construct(NewsItem, item.to_json()) for item in page],
    }
    if more:
        members["next_before"] = page[0].id
    return NewsPage.model_validate(members)
