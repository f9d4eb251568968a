"""The companies of a generated basket and the text of its news items.

Every name here is invented. A basket of ``n`` symbols takes the first ``n`` companies
of ``COMPANIES`` (which cycles through the five sectors, so any size has every sector
about equally); the headlines and bodies are built from the numbers the price model drew,
so the text states what the prices will then do (an earnings beat, then drift upward).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kestrel_protocol import canonical_json

__all__ = [
    "COMPANIES",
    "SECTORS",
    "Company",
    "NewsItem",
    "Outcome",
    "earnings_item",
    "macro_item",
    "news_jsonl",
    "notice_item",
]

Outcome = Literal["beat", "miss", "inline"]
SECTORS = ("Technology", "Health", "Energy", "Finance", "Consumer")


@dataclass(frozen=True, slots=True)
class Company:
    symbol: str
    name: str
    sector: str


_BY_SECTOR = {
    "Technology": [
        ("ACRN", "Acorn Robotics"),
        ("BLTX", "Boltex Semiconductor"),
        ("CLDY", "Cloudy Software"),
        ("DTWV", "Datawave Networks"),
        ("ENGM", "Enigma Security"),
        ("FTHM", "Fathom Devices"),
    ],
    "Health": [
        ("GNMX", "Genomix Therapeutics"),
        ("HLIO", "Helio Medical"),
        ("IMNR", "Immuner Biotech"),
        ("JNPR", "Juniper Clinics"),
        ("KLPH", "Kalpha Diagnostics"),
        ("LMNA", "Lumina Pharma"),
    ],
    "Energy": [
        ("MGMA", "Magma Drilling"),
        ("NRTH", "Northwind Power"),
        ("OLVN", "Olvine Refining"),
        ("PRSM", "Prism Solar"),
        ("QRTZ", "Quartz Pipelines"),
        ("RDGE", "Ridge Gas"),
    ],
    "Finance": [
        ("SLVR", "Silverline Bank"),
        ("TRST", "Trestle Insurance"),
        ("UNDR", "Underhill Capital"),
        ("VLTA", "Volta Payments"),
        ("WKFD", "Wakefield Trust"),
        ("XCHG", "Exchange Partners"),
    ],
    "Consumer": [
        ("YRDL", "Yardley Foods"),
        ("ZPHR", "Zephyr Apparel"),
        ("ARBR", "Arbor Home"),
        ("BKLN", "Brooklane Retail"),
        ("CSCD", "Cascade Beverages"),
        ("DRFT", "Driftwood Travel"),
    ],
}
COMPANIES = tuple(
    Company(_BY_SECTOR[sector][rank][0], _BY_SECTOR[sector][rank][1], sector)
    for rank in range(6)
    for sector in SECTORS
)


@dataclass(frozen=True, slots=True)
class NewsItem:
    """One line of ``news.jsonl``: ``symbol`` is ``None`` for market-wide news."""

    time: str
    symbol: str | None
    headline: str
    body: str

    def sort_key(self) -> tuple[str, str, str]:
        return (self.time, self.symbol or "", self.headline)

    def line(self) -> bytes:
        item = {"time": self.time, "headline": self.headline, "body": self.body}
        if self.symbol is not None:
            item["symbol"] = self.symbol
        return canonical_json(item) + b"\n"


def news_jsonl(items: list[NewsItem]) -> str:
    """The canonical ``news.jsonl`` text: sorted by (time, symbol or "", headline)."""
    return b"".join(item.line() for item in sorted(items, key=NewsItem.sort_key)).decode()


def _dollars(cent_value: int) -> str:
    return f"${cent_value // 100}.{cent_value % 100:02d}"


def _percent(tenths: int) -> str:
    return f"{tenths // 10}.{tenths % 10} %"


def earnings_item(
    time: str,
    company: Company,
    *,
    quarter: str,
    outcome: Outcome,
    expected: int,
    actual: int,
    growth_tenths: int,
) -> NewsItem:
    """Quarterly results: EPS in cents against the consensus, revenue growth in tenths of
    a percent (negative for a fall)."""
    eps = f"quarterly EPS {_dollars(actual)} vs {_dollars(expected)} expected"
    verb, guidance = {
        "beat": ("beats estimates", "raised its full-year outlook"),
        "miss": ("misses estimates", "cut its full-year outlook"),
        "inline": ("reports results in line", "kept its full-year outlook"),
    }[outcome]
    direction = "rose" if growth_tenths >= 0 else "fell"
    body = (
        f"{company.name} ({company.sector}) reported {quarter} results after the close:"
        f" earnings per share of {_dollars(actual)} against a consensus of"
        f" {_dollars(expected)}. Revenue {direction} {_percent(abs(growth_tenths))} on the"
        f" year. Management {guidance}."
    )
    return NewsItem(time, company.symbol, f"{company.symbol} {verb}: {eps}", body)


_NOTICES = (
    (
        "names a new chief financial officer",
        "appointed a new chief financial officer, effective next month.",
    ),
    ("to present at an industry conference", "will present at an industry conference next week."),
    ("opens a regional office", "opened a regional office to serve customers closer to home."),
    ("completes a routine debt refinancing", "refinanced maturing notes on similar terms."),
    ("announces its annual shareholder meeting", "set the date of its annual shareholder meeting."),
)


def notice_item(time: str, company: Company, which: int) -> NewsItem:
    """A company announcement that carries no news about earnings (prices ignore it)."""
    headline, body = _NOTICES[which % len(_NOTICES)]
    return NewsItem(time, company.symbol, f"{company.symbol} {headline}", f"{company.name} {body}")


def macro_item(time: str, easing: bool, basis_points: int) -> NewsItem:
    """A central-bank decision (market-wide): easing lifts the whole market for a while,
    tightening weighs on it."""
    if easing:
        headline = f"Central bank cuts its policy rate by {basis_points} bp"
        body = (
            f"The central bank lowered its policy rate by {basis_points} basis points and"
            " signalled further support for growth. Equity strategists expect a broad rally."
        )
    else:
        headline = f"Central bank raises its policy rate by {basis_points} bp"
        body = (
            f"The central bank raised its policy rate by {basis_points} basis points and"
            " warned of tighter conditions ahead. Equity strategists expect broad weakness."
        )
    return NewsItem(time, None, headline, body)
