"""Generated baskets: 10 to 30 stocks in sectors, their index, and news that moves them.

``basket(name, size, bars)`` is deterministic (the same arguments give the same bytes on
every machine: integer arithmetic on ``synthetic.Noise``). Each stock's daily return, in
parts per million, is its beta times a market factor, plus its sector's factor, plus its
own noise, plus the drift its news set off:

- **earnings**, about every 63 bars per stock, published after the close of bar ``t``
  (visible from bar ``t + 1``): a beat gaps the stock up at ``t + 1`` and is followed by
  ``DRIFT_BARS`` bars of upward drift (post-earnings drift); a miss the same downward;
  results in line move nothing. The headline says which, so reading pays.
- **central-bank decisions** (market-wide, no symbol): a cut lifts the market factor for
  ``MACRO_BARS`` bars, a hike weighs on it.
- **notices** (a new CFO, a conference): no effect, so an agent must tell news from noise.

``INDEX`` is the equal-weighted index of the stocks (starting at 1000.00), a tradable
symbol like the others. The news is ``news.jsonl`` in canonical form (docs/spec.md §4).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from .basket_news import (
    COMPANIES,
    SECTORS,
    Company,
    NewsItem,
    Outcome,
    earnings_item,
    macro_item,
    news_jsonl,
    notice_item,
)
from .synthetic import HEADER, MICRO, PPM, Bar, Noise, grow, make_bar, weekdays

__all__ = ["INDEX", "Basket", "basket"]

INDEX = "INDEX"
MIN_SIZE, MAX_SIZE = 10, 30
QUARTER_BARS = 63
DRIFT_BARS = 15
MACRO_EVERY, MACRO_BARS = 84, 10
MARKET_DRIFT, MARKET_SIGMA, SECTOR_SIGMA, OWN_SIGMA = 250, 8_000, 5_000, 11_000
AFTER_CLOSE = "T21:05:00Z"


@dataclass(frozen=True, slots=True)
class Basket:
    """A generated basket: the stocks (in ``COMPANIES`` order), every symbol of the tape
    (sorted, ``INDEX`` among them), its canonical ``tape.csv`` and ``news.jsonl`` texts."""

    companies: tuple[Company, ...]
    symbols: tuple[str, ...]
    times: tuple[str, ...]
    tape: str
    news: str

    def sectors(self) -> dict[str, list[str]]:
        """Sector name to its symbols, for a description."""
        out: dict[str, list[str]] = {sector: [] for sector in SECTORS}
        for company in self.companies:
            out[company.sector].append(company.symbol)
        return {sector: symbols for sector, symbols in out.items() if symbols}


@dataclass(slots=True)
class _Stock:
    company: Company
    beta: int  # ppm
    price: int  # micro-dollars
    eps: int  # cents a quarter
    drift: list[int]  # ppm added to each bar's return
    gap: list[int]  # ppm of each bar's opening gap beyond the usual
    bars: list[Bar]


def _times(bars: int) -> list[str]:
    days = weekdays(date(2022, 1, 3))
    return [f"{next(days).isoformat()}T00:00:00Z" for _ in range(bars)]


def _quarter_reported(time: str) -> str:
    """The calendar quarter that ended before ``time`` (results come after it closes)."""
    year, quarter = int(time[:4]), (int(time[5:7]) - 1) // 3
    return f"Q{quarter} {year}" if quarter else f"Q4 {year - 1}"


def _add(values: list[int], start: int, count: int, amount: int) -> None:
    for index in range(start, min(start + count, len(values))):
        values[index] += amount


def _earnings(noise: Noise, stock: _Stock, times: list[str], news: list[NewsItem]) -> None:
    """Quarterly results from a seeded first bar, each setting off its drift."""
    bars = len(times)
    for number, t in enumerate(range(5 + noise.below(55), bars - 1, QUARTER_BARS)):
        roll = noise.below(10)
        outcome: Outcome = "beat" if roll < 4 else "miss" if roll < 7 else "inline"
        size = 30_000 + noise.below(50_001)  # ppm: the surprise's whole move
        sign = {"beat": 1, "miss": -1, "inline": 0}[outcome]
        expected = stock.eps
        actual = (
            expected
            + sign * max(1, expected * size // 400_000)
            + (noise.below(3) - 1) * (1 - abs(sign))
        )
        growth = sign * (20 + noise.below(120)) + (1 - abs(sign)) * (noise.below(60) - 10)
        quarter = _quarter_reported(times[t])
        time = times[t][:10] + AFTER_CLOSE
        news.append(
            earnings_item(
                time,
                stock.company,
                quarter=quarter,
                outcome=outcome,
                expected=expected,
                actual=actual,
                growth_tenths=growth,
            )
        )
        stock.gap[t + 1] += sign * size // 3
        _add(stock.drift, t + 2, DRIFT_BARS, sign * (size - size // 3) // DRIFT_BARS)
        stock.eps = max(5, actual + noise.scaled(3))
        if noise.below(2) == 0:
            when = min(bars - 2, t + 10 + noise.below(40))
            news.append(notice_item(times[when][:10] + AFTER_CLOSE, stock.company, number))


def _macro(noise: Noise, times: list[str], news: list[NewsItem]) -> list[int]:
    """The market factor's drift per bar, set off by central-bank decisions."""
    drift = [MARKET_DRIFT] * len(times)
    for t in range(30 + noise.below(30), len(times) - 1, MACRO_EVERY):
        easing = noise.below(2) == 0
        points = 25 * (1 + noise.below(2))
        news.append(macro_item(times[t][:10] + AFTER_CLOSE, easing, points))
        _add(drift, t + 1, MACRO_BARS, (1 if easing else -1) * 60 * points)
    return drift


def _volume(noise: Noise, base: int) -> int:
    return max(1_000, base + noise.scaled(base * 3 // 10))


def basket(name: str, size: int, bars: int) -> Basket:
    """The basket of the first ``size`` companies over ``bars`` daily bars, seeded by
    ``name`` (10 <= size <= 30)."""
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"a basket has {MIN_SIZE} to {MAX_SIZE} stocks, not {size}")
    noise = Noise(name)
    times = _times(bars)
    news: list[NewsItem] = []
    market_drift = _macro(noise, times, news)
    stocks = [
        _Stock(
            company,
            beta=700_000 + noise.below(600_001),
            price=(20 + noise.below(181)) * MICRO,
            eps=40 + noise.below(260),
            drift=[0] * bars,
            gap=[0] * bars,
            bars=[],
        )
        for company in COMPANIES[:size]
    ]
    for stock in stocks:
        _earnings(noise, stock, times, news)
    level = 1000 * MICRO
    index_bars: list[Bar] = []
    for t in range(bars):
        market = market_drift[t] + noise.scaled(MARKET_SIGMA)
        sector = {name: noise.scaled(SECTOR_SIGMA) for name in SECTORS}
        total = gaps = 0
        for stock in stocks:
            factor = stock.beta * market // PPM + sector[stock.company.sector]
            gap = stock.gap[t] + noise.scaled(2_000)
            move = factor + stock.drift[t] + stock.gap[t] + noise.scaled(OWN_SIGMA) if t else 0
            open_micro = grow(stock.price, gap) if t else stock.price
            close = max(MICRO, grow(stock.price, move))
            volume = _volume(noise, 1_000_000) * (3 if stock.gap[t] else 1)
            stock.bars.append(make_bar(noise, open_micro, close, 8_000, volume))
            stock.price = close
            total, gaps = total + move, gaps + gap
        open_level = grow(level, gaps // size) if t else level
        level = grow(level, total // size)
        index_bars.append(make_bar(noise, open_level, level, 5_000, _volume(noise, 5_000_000)))
    columns = {stock.company.symbol: stock.bars for stock in stocks} | {INDEX: index_bars}
    symbols = tuple(sorted(columns))
    rows = [HEADER, "\n"]
    for t, time in enumerate(times):
        rows.extend(columns[symbol][t].row(time, symbol) for symbol in symbols)
    return Basket(
        tuple(stock.company for stock in stocks),
        symbols,
        tuple(times),
        "".join(rows),
        news_jsonl(news),
    )
