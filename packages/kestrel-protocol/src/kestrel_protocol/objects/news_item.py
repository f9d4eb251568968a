"""One timestamped text item of a scenario, as frames and the news read serve it."""

from __future__ import annotations

from ..model import ProtocolModel

__all__ = ["NewsItem"]


class NewsItem(ProtocolModel):
    """One timestamped text item of a scenario (news, a filing, an earnings report).

    ``id`` is ``n1``, ``n2``, ... in the scenario's canonical order; ``symbol`` is absent
    for market-wide items. In a frame a long ``body`` is cut and ``truncated`` is true:
    the session's news read gives the whole text.
    """

    id: str
    time: str
    symbol: str | None = None
    headline: str
    body: str
    truncated: bool | None = None
