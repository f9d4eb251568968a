"""A disguise's news: the source's items moved with its bars and renamed with its symbols.

Each item's time moves by the transform's whole weeks (as every bar's does), its symbol
becomes the symbol's fictitious ticker, and in its headline and body every name the
source's ``news_aliases`` lists for a symbol, and the symbol itself, is replaced by that
ticker (whole words, any letter case, longest names first: "Acme Corporation" before
"Acme"). Other text is the source's: a body naming a date or a person tells of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .disguise import DisguiseTransform, shifted_time
from .news import News, NewsItem, news_of_items

__all__ = ["disguised_news"]


def _renamer(names: Mapping[str, str]) -> re.Pattern[str]:
    ordered = sorted(names, key=lambda name: (-len(name), name))
    return re.compile(
        r"(?<![\w])(?:" + "|".join(re.escape(name) for name in ordered) + r")(?![\w])",
        re.IGNORECASE,
    )


def disguised_news(
    news: News, transform: DisguiseTransform, aliases: Mapping[str, tuple[str, ...]]
) -> News:
    """The items of ``news`` as the disguise of ``transform`` shows them."""
    renamed = transform.renamed()
    names: dict[str, str] = {}
    for symbol, ticker in renamed.items():
        for name in (symbol, *aliases.get(symbol, ())):
            names.setdefault(name.lower(), ticker)
    pattern = _renamer(names)

    def rename(text: str) -> str:
        return pattern.sub(lambda match: names[match.group(0).lower()], text)

    return news_of_items(
        NewsItem(
            "",
            shifted_time(item.time, transform.weeks),
            None if item.symbol is None else renamed[item.symbol],
            rename(item.headline),
            rename(item.body),
        )
        for item in news.items
    )
