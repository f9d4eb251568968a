"""A scenario's news as sessions see it: items up to the clock, never one after."""

from __future__ import annotations

from typing import Literal

from ..model import ProtocolModel
from .news_item import NewsItem
from .session import Clock, ScenarioRef

__all__ = ["NewsPage"]


class NewsPage(ProtocolModel):
    """Visible news items of a session, oldest first, ending before ``before`` (or with
    the newest visible one). ``nextBefore``, when present, pages on to older items."""

    kind: Literal["kestrel.news"] = "kestrel.news"
    session: str
    scenario: ScenarioRef
    clock: Clock
    items: list[NewsItem]
    next_before: str | None = None
