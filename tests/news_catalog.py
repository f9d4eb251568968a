"""A user catalog scenario with news, for the tests of news on every face.

``news-acme``: daily bars of ACME and BETA at midnight UTC and news items at noon
between them (so an item of day ``d`` is visible from the bar of day ``d + 1`` on),
each headline and body carrying a marker (``NEWSMARK-017``) a leak search can look for,
and the symbol's alias (``Acme Corporation``) a disguise must rename.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from kestrel_sdk.runtime.catalog.builder import terms_toml

__all__ = ["BARS", "NEWS_ID", "bar_time", "marker", "write_news_scenario"]

NEWS_ID = "news-acme"
BARS = 60
_START = datetime(2024, 1, 1, tzinfo=UTC)


def bar_time(index: int) -> str:
    return (_START + timedelta(days=index)).strftime("%Y-%m-%dT%H:%M:%SZ")


def marker(number: int) -> str:
    return f"NEWSMARK-{number:03d}"


def _item(day: int) -> dict[str, str]:
    """The item of noon on ``day`` (-3 .. BARS - 2): alternately of ACME, BETA and the
    market; every fourth one long (its body is cut in frames)."""
    time = (_START + timedelta(days=day, hours=12)).strftime("%Y-%m-%dT%H:%M:%SZ")
    tag = marker(day + 3)
    body = f"Acme Corporation said {tag} in its statement. " * (30 if day % 4 == 0 else 1)
    item = {"time": time, "headline": f"Acme Corporation update {tag}", "body": body}
    kind = day % 3
    if kind == 0:
        item["symbol"] = "ACME"
    elif kind == 1:
        item["symbol"] = "BETA"
    return item


def news_items() -> list[dict[str, str]]:
    return [_item(day) for day in range(-3, BARS - 1)]


def write_news_scenario(root: Path, *, scenario_id: str = NEWS_ID, extra: str = "") -> Path:
    """The scenario directory under ``root`` (tape, terms with ``news_aliases``, news)."""
    directory = root / scenario_id
    directory.mkdir(parents=True)
    rows = ["time,symbol,open,high,low,close,volume"]
    for index in range(BARS):
        for symbol, base in (("ACME", 100), ("BETA", 50)):
            price = base + (index * 7 % 11) + (index % 5) / 4
            rows.append(
                f"{bar_time(index)},{symbol},{price:.2f},{price + 1:.2f},{price - 1:.2f},"
                f"{price + 0.5:.2f},{1000 + index}"
            )
    (directory / "tape.csv").write_text("\n".join(rows) + "\n", "utf-8")
    toml = terms_toml(
        scenario_id=scenario_id,
        title="News test",
        description="Two symbols with news.",
        interval="1d",
        bars_per_year=252,
        cash="100000.00",
        shortable=False,
        max_position=100000,
        max_drawdown="1.0",
        fee_bps="10",
        fee_minimum="0.00",
        participation="1",
        slippage_bps="0",
        instruments=[
            {"symbol": "ACME", "tick": "0.01", "lot": 1},
            {"symbol": "BETA", "tick": "0.01", "lot": 1},
        ],
    )
    aliases = 'news_aliases = { ACME = ["Acme Corporation", "Acme"] }\n'
    (directory / "scenario.toml").write_text(aliases + extra + toml, "utf-8")
    lines = "".join(json.dumps(item) + "\n" for item in news_items())
    (directory / "news.jsonl").write_text(lines, "utf-8")
    return directory
