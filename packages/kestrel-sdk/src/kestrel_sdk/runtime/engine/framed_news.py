"""The news part of a frame: the newest items visible at the clock, bodies cut to a
budget (the news read gives the whole text), as canonical JSON text."""

from __future__ import annotations

from typing import Any, Final

from kestrel_protocol import canonical_json

from ..catalog.news import News

__all__ = ["FRAME_BODY_CHARS", "FramedNews"]

FRAME_BODY_CHARS: Final = 400
"""Characters of an item's body a frame shows; a longer one is cut, ``truncated``."""


class FramedNews:
    """A scenario's news as frames show it, remembered for the last visible count (the
    count changes only when the clock passes an item's time)."""

    def __init__(self, news: News, newest: int) -> None:
        self._news = news
        self._newest = newest
        self._count = -1
        self._json = ""
        self.shown: list[dict[str, Any]] = []
        """The items of the last :meth:`at` as JSON data (its ``news`` member)."""

    def at(self, time: str) -> str:
        """The items visible at a clock bar of ``time`` (the newest ``newest``, oldest
        first) as the frame's ``news`` member, ``,"news":[...]``."""
        count = self._news.visible(time)
        if count != self._count:
            shown = self._news.items[max(count - self._newest, 0) : count] if self._newest else ()
            data = [item.to_json(body_limit=FRAME_BODY_CHARS) for item in shown]
            self.shown = data
            self._json = ',"news":[' + ",".join(canonical_json(d).decode() for d in data) + "]"
            self._count = count
        return self._json
