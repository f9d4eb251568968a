"""A disguise's news: the source's items moved with its bars and renamed with its symbols.

Each item's time moves as the bars do (:mod:`.disguise_calendar`: between the same two
bars, visible at the same clocks), its symbol becomes the symbol's fictitious ticker,
and in its headline and body every name the source's ``news_aliases`` lists for a
symbol, and the symbol itself, is replaced by that ticker (whole words, any letter case,
longest names first: "Acme Corporation" before "Acme"). Other text is the source's, so
:func:`news_tells` finds what in it would date the disguise or tell its price level, for
the disguise to refuse: a year from ten before the source's first bar to the one after
its last ("Q4 2021 results", "FY21", "Q3 '21"), a day of the year ("reported on March
3", "on 3/3/21", "into Christmas": with the weekday, it tells which years), a day of the
month after "on", "by" or a weekday ("on the 14th", "Thursday the 14th": it narrows
them), a month ("sales in March": the item's date is the disguise's, laid on a calendar
of its own, so a month named beside it tells where in the year the source is), a price
(a number with decimals, a point or a comma, or a currency sign, not a percentage,
whatever letters touch it: "EUR104.50", "104,50 €") within 5 % of the source's range,
or a price move in money ("fell $4.50", "up 3.25 points", "lost 45 cents": divided into
the disguised bar's move, it gives the secret factor, and with it every source price).
A name no ``news_aliases`` lists (a company, a person) cannot be found and is shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fractions import Fraction

from .disguise import DisguiseTransform
from .model import Tape
from .news import News, NewsItem, news_of_items

__all__ = ["disguised_news", "news_tells", "text_tells"]

_YEAR = re.compile(r"(?<![\d.,$])(\d{4})(?![\d]|[.,]\d)")
_SHORT_YEAR = re.compile(
    r"(?<![\w'’])(?:(?:FY|CY|Q[1-4]|H[12])\s?['’]?|['’])(\d{2})(?![\d%]|[.,]\d)",
    re.IGNORECASE,
)
_PRICE = re.compile(
    r"(?<![\d.,])(\$\s?)?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+|,\d{1,2}(?!\d))?"
    r"(?![\d,]|\.\d|\s?%|\s?per ?cent)",
    re.IGNORECASE,
)
_NUMERIC_DAY = re.compile(r"(?<![\d/.,])(\d{1,2})/(\d{1,2})/(?:\d{2}|\d{4})(?![\d/]|[.,]\d)")
_HOLIDAY = re.compile(
    r"(?<!\w)(?:Christmas|X-?mas|New Year|Thanksgiving|Independence Day|Labou?r Day"
    r"|Memorial Day|Martin Luther King|Presidents'? Day|Good Friday|Easter|Halloween"
    r"|Black Friday|Cyber Monday|Juneteenth|Veterans'? Day|Columbus Day|Boxing Day"
    r"|Valentine'?s Day|Ides of March)(?!\w)",
    re.IGNORECASE,
)
_FULL_MONTHS = (
    r"January|February|March|April|May|June|July|August|September|October|November|December"
)
_SHORT_MONTHS = r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec"
_MONTH = rf"(?:{_FULL_MONTHS}|{_SHORT_MONTHS})\.?"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_MONTH_DAY = re.compile(
    rf"(?<![\w.])(?:{_MONTH}\s+{_DAY}(?![\d%]|[.,]\d)|{_DAY}\s+(?:of\s+)?{_MONTH}(?!\w))"
)
_MONTH_NAME = re.compile(rf"(?<![\w.])(?:{_FULL_MONTHS}|(?:{_SHORT_MONTHS})\.?)(?!\w)")
_WEEKDAY = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,?"
_ORDINAL_DAY = re.compile(
    rf"(?<!\w)(?:(?:on|by|until|till|since|from|before|after|through|around)\s+"
    rf"(?:{_WEEKDAY}\s+)?|{_WEEKDAY}\s+)the\s+(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)(?!\w)"
    r"(?!\s+(?!(?:of|and|or|to|at|as|when|in|with)\b)[a-z])",  # "on the 3rd attempt": no day
    re.IGNORECASE,
)
_MOVE = re.compile(
    r"(?<!\w)(?:r[io]se[sn]?|rising|f[ae]ll(?:s|en|ing)?|gain(?:s|ed|ing)?|los(?:es|t|ing|e)"
    r"|add(?:s|ed|ing)?|shed(?:s|ding)?|drop(?:s|ped|ping)?|climb(?:s|ed|ing)?"
    r"|jump(?:s|ed|ing)?|sl(?:id|ide|ides|iding)|s[ai]nk(?:s|ing)?|sank"
    r"|declin(?:e|es|ed|ing)|(?:in|de)creas(?:e|es|ed|ing)|surg(?:e|es|ed|ing)"
    r"|tumbl(?:e|es|ed|ing)|plung(?:e|es|ed|ing)|rall(?:y|ies|ied|ying)|up|down|off)"
    r"\s+(?:by\s+)?(?:(?:[$€£¥]|US\$|EUR|USD|GBP)\s?\d(?:,?\d)*(?:\.\d+)?(?!\d|[.,]\d){_NOT_PRICE}"
    r"|\d[\d,]*(?:\.\d+)?\s?(?:points?|pts|cents?|pence|p\b|pips?|dollars?|euros?)"
    r"|\d(?:,?\d)*\.\d+(?!\d|[.,]\d){_NOT_PRICE})(?!\w)".format(
        _NOT_PRICE=r"(?!\s?%|\s?(?:per ?cent|pc|times|x|fold|bps|basis|million|billion"
        r"|trillion|bn|mn|m|k)\b)"  # "rose 4.5 %", "rose 2.5 times", "rose $2 billion"
    ),
    re.IGNORECASE,
)
_MARGIN = Fraction(105, 100)  # exact, whatever the caller's decimal context


def _renamer(names: Mapping[str, str]) -> re.Pattern[str]:
    ordered = sorted(names, key=lambda name: (-len(name), name))
    return re.compile(
        r"(?<![\w])(?:" + "|".join(re.escape(name) for name in ordered) + r")(?![\w])",
        re.IGNORECASE,
    )


def disguised_news(
    news: News,
    transform: DisguiseTransform,
    aliases: Mapping[str, tuple[str, ...]],
    times: Sequence[str],
) -> News:
    """The items of ``news`` as the disguise of ``transform`` shows them (``times``: the
    source's bar times)."""
    calendar = transform.calendar_of(times)
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
            calendar.time(item.time),
            None if item.symbol is None else renamed[item.symbol],
            rename(item.headline),
            rename(item.body),
        )
        for item in news.items
    )


def _tell(text: str, years: tuple[int, int], tape: Tape, prices: tuple[int, int]) -> str | None:
    """The first words of ``text`` naming a year from ten before the first of ``years``
    to the one after the last, a day of the year ("March 3", "3rd of Mar."), a day of
    the month ("on the 14th"), a month ("in March"), a price move in money, or a price
    within 5 % of ``prices`` (the lowest and highest of ``tape``), and why."""
    near = f"a year near the source's bars ({years[0]} to {years[1]})"
    for year in _YEAR.finditer(text):
        if years[0] - 10 <= int(year.group(1)) <= years[1] + 1:
            return f"{year.group(0)!r}, {near}"
    for year in _SHORT_YEAR.finditer(text):
        if any(years[0] - 10 <= c + int(year.group(1)) <= years[1] + 1 for c in (1900, 2000)):
            return f"{year.group(0).strip()!r}, {near}"
    numeric = (
        day.group(0)
        for day in _NUMERIC_DAY.finditer(text)
        if 1 <= min(int(day.group(1)), int(day.group(2))) <= 12
        and max(int(day.group(1)), int(day.group(2))) <= 31
    )
    found = _MONTH_DAY.search(text) or _HOLIDAY.search(text)
    day_text = found.group(0) if found is not None else next(numeric, None)
    if day_text is not None:  # the weekday is kept: a day of the year tells which years
        return f"{day_text!r}, a day of the year (with its weekday, it dates the source)"
    ordinal = _ORDINAL_DAY.search(text)
    if ordinal is not None:
        return f"{ordinal.group(0)!r}, a day of the month (with its weekday, it narrows the years)"
    month = _MONTH_NAME.search(text)
    if month is not None:  # the item's date is the disguise's: the month is the source's
        return f"{month.group(0)!r}, a month (beside the disguised date, it tells the source's)"
    low = Fraction(prices[0], 10**tape.scale) / _MARGIN
    high = Fraction(prices[1], 10**tape.scale) * _MARGIN
    move = _MOVE.search(text)
    if move is not None:  # divided into the disguised move, it gives the factor
        return f"{move.group(0)!r}, a price move in money (it tells the disguise's price factor)"
    for price in _PRICE.finditer(text):
        sign, whole, decimals = price.groups()
        number = whole.replace(",", "") + (decimals or "").replace(",", ".")
        if (sign or decimals) and low <= Fraction(number) <= high:
            lowest, highest = (tape.price_text(bound) for bound in prices)
            return (
                f"{price.group(0).strip()!r}, within 5 % of the source's prices "
                f"({lowest} to {highest})"
            )
    return None


def _bounds(tape: Tape) -> tuple[tuple[int, int], tuple[int, int]]:
    """The years of ``tape``'s first and last bars, and its lowest and highest prices."""
    years = (int(tape.times[0][:4]), int(tape.times[-1][:4]))
    prices = (
        min(min(columns.low) for columns in tape.columns.values()),
        max(max(columns.high) for columns in tape.columns.values()),
    )
    return years, prices


def text_tells(text: str, tape: Tape) -> str | None:
    """What ``text`` (a disguise's id or title, served as it is) names that would date
    the disguise of ``tape`` or tell its price level, and why; ``None`` when nothing."""
    years, prices = _bounds(tape)
    return _tell(text, years, tape, prices)


def news_tells(news: News, tape: Tape) -> str | None:
    """What the first item of ``news`` (a source's, on ``tape``) that would date its
    disguise or tell its price level names: the item, the field, the words and why;
    ``None`` when no item does."""
    years, prices = _bounds(tape)
    for item in news.items:
        for field in ("headline", "body"):
            told = _tell(getattr(item, field), years, tape, prices)
            if told is not None:
                return (
                    f"news item {item.id} ({item.time}) {field} names {told}: its disguise "
                    "would show it"
                )
    return None
