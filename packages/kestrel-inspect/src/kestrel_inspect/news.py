"""The ``kestrel/news`` offline agent's reading and trading: earnings news into target
weights.

It keeps a book of what it has read: a stock whose earnings beat estimates is held for
``HOLD_BARS`` bars from the bar the item was first seen (a miss drops it at once), each
at an equal share of ``INVESTED`` percent of equity (at most ``MOST`` percent a stock),
and what the picks leave of ``INVESTED`` goes to ``INDEX`` when the scenario has one (as
``basket-20`` does). It trades only by target weight (``buy ACRN to 22%``, ``sell INDEX
to 24%``, docs/spec.md), sells first, and leaves a holding within ``BAND`` points of its
target alone. The same book serves a scripted agent reading a frame's JSON
(``tests/kestrel_mcp/test_basket_agent.py``) and one reading its text (``scripted``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from typing import Any

from kestrel_protocol import DEFAULT_DECIMAL_CONTEXT

__all__ = ["BAND", "HOLD_BARS", "INDEX", "INVESTED", "MOST", "NewsBook", "news_lines", "rebalance"]

HOLD_BARS, INVESTED, MOST, BAND = 15, 90, 20, 2
INDEX = "INDEX"
_ITEM = re.compile(r"^  (n\d+) (\S+Z)(?: ([A-Z][A-Z0-9.]*))?: (.*?)(?: \| .*)?$", re.MULTILINE)


def news_lines(text: str) -> list[dict[str, str]]:
    """The news items of a frame's text (its ``news:`` lines, compact.py), as
    ``{id, time, headline}`` plus ``symbol`` when the item has one."""
    if "\nnews:" not in text:
        return []
    items: list[dict[str, str]] = []
    for match in _ITEM.finditer(text.split("\nnews:", 1)[1]):
        item = {"id": match[1], "time": match[2], "headline": match[4]}
        if match[3]:
            item["symbol"] = match[3]
        items.append(item)
    return items


@dataclass
class NewsBook:
    """What the agent has read: the items seen, and each held stock's last bar."""

    seen: set[str] = field(default_factory=set)
    held_until: dict[str, int] = field(default_factory=dict)
    beats: int = 0
    misses: int = 0

    def read(self, items: Iterable[Mapping[str, Any]], bar: int) -> None:
        """Read ``items`` at clock ``bar`` (an item read before is skipped)."""
        for item in items:
            if item["id"] in self.seen:
                continue
            self.seen.add(item["id"])
            symbol, headline = item.get("symbol"), str(item["headline"])
            if symbol is None:
                continue
            if "beats estimates" in headline:
                self.held_until[str(symbol)] = bar + HOLD_BARS
                self.beats += 1
            elif "misses estimates" in headline:
                self.held_until.pop(str(symbol), None)
                self.misses += 1

    def weights(self, bar: int, symbols: Iterable[str]) -> dict[str, int]:
        """Target weights (percent of equity) at clock ``bar`` over ``symbols``."""
        tradable = set(symbols)
        picks = sorted(s for s, until in self.held_until.items() if until > bar and s in tradable)
        each = min(MOST, INVESTED // len(picks)) if picks else 0
        weights = dict.fromkeys(picks, each)
        if INDEX in tradable:
            weights[INDEX] = INVESTED - each * len(picks)
        return weights


def rebalance(
    marks: Mapping[str, str],
    positions: Iterable[Mapping[str, Any]],
    equity: str,
    weights: Mapping[str, int],
) -> list[str]:
    """Target-weight statements taking the holdings to ``weights`` (sells first),
    skipping a symbol within ``BAND`` points of its target."""
    total = Decimal(equity)
    sells: list[str] = []
    buys: list[str] = []
    with localcontext(DEFAULT_DECIMAL_CONTEXT):
        now = {
            str(p["symbol"]): Decimal(str(p["qty"]))
            * Decimal(marks[str(p["symbol"])])
            * 100
            / total
            for p in positions
        }
        for symbol in sorted(set(weights) | set(now)):
            want, have = weights.get(symbol, 0), now.get(symbol, Decimal(0))
            if want < have - BAND or (want == 0 and have > 0):
                sells.append(f"sell {symbol} to {want}%")
            elif want > have + BAND:
                buys.append(f"buy {symbol} to {want}%")
    return sells + buys
