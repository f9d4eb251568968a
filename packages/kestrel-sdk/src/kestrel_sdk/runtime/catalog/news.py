"""A scenario's news: timestamped text items beside its bars, read checked, kept canonical.

``news.jsonl`` in a scenario directory holds one JSON object per line: ``time`` (ISO-8601
UTC to the second, ``...Z``), ``symbol`` (optional: absent for market-wide news; else
one of the scenario's instruments), ``headline`` (non-empty) and ``body``. An import may
also give CSV with the header ``time,symbol,headline,body`` (an empty symbol is
market-wide). Canonical form: items sorted by (time, symbol or "", headline, body), each
line the item's canonical JSON (RFC 8785, no ``symbol`` member when market-wide), LF
ended; its root (``root_of_bytes``) is the scenario's ``newsRoot``. Each item's ``id`` is
``n1``, ``n2``, ... in canonical order, assigned here, never read from the file.

An item is visible at a session's clock when its time is at or before the time of the
clock's bar (:meth:`News.visible`): no face ever serves one after it.
"""

from __future__ import annotations

import csv
import io
import json
from bisect import bisect_right
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from kestrel_protocol import canonical_json, root_of_bytes

from .tape_format import TIME
from .terms_check import control_character

__all__ = [
    "CSV_HEADER",
    "MAX_BODY",
    "MAX_BYTES",
    "MAX_HEADLINE",
    "MAX_ITEMS",
    "NEWS_FILE",
    "News",
    "NewsItem",
    "NewsProblem",
    "news_of_items",
    "parse_news",
    "render_news",
    "visible_page",
]

NEWS_FILE = "news.jsonl"
CSV_HEADER = ("time", "symbol", "headline", "body")
MAX_HEADLINE = 500
"""Characters of a headline, at most."""
MAX_BODY = 20_000
"""Characters of a body, at most."""
MAX_ITEMS = 200_000
"""Items of one scenario, at most."""
MAX_BYTES = 64 * 1024 * 1024
"""Bytes of one news file, at most."""
_MEMBERS = frozenset(CSV_HEADER)


@dataclass(frozen=True, slots=True)
class NewsProblem:
    """One fault of a news file: its 1-based line (``None`` when global) and why."""

    line: int | None
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line is not None else self.reason


@dataclass(frozen=True, slots=True)
class NewsItem:
    """One item: ``id`` (``n1`` ...), time, symbol (``None``: market-wide), text."""

    id: str
    time: str
    symbol: str | None
    headline: str
    body: str

    def content(self) -> dict[str, str]:
        """The item as its canonical line holds it (no ``id``)."""
        members = {"time": self.time, "headline": self.headline, "body": self.body}
        if self.symbol is not None:
            members["symbol"] = self.symbol
        return members

    def to_json(self, *, body_limit: int | None = None) -> dict[str, object]:
        """The item as faces serve it; with ``body_limit`` a longer body is cut to that
        many characters and ``truncated`` is true (the full text is the news read's)."""
        members: dict[str, object] = {"id": self.id, **self.content()}
        if body_limit is not None and len(self.body) > body_limit:
            members["body"] = self.body[:body_limit]
            members["truncated"] = True
        return members


@dataclass(frozen=True, slots=True)
class News:
    """A scenario's items in canonical order, with the root of their canonical bytes."""

    items: tuple[NewsItem, ...]
    root: str
    times: tuple[str, ...]
    """Each item's time, in order (for :meth:`visible`)."""

    def __len__(self) -> int:
        return len(self.items)

    def visible(self, time: str) -> int:
        """How many items are visible at a clock bar of ``time`` (the first that many)."""
        return bisect_right(self.times, time)

    def render(self) -> bytes:
        """The canonical bytes (their root is :attr:`root`)."""
        return render_news(self.items)


def render_news(items: Iterable[NewsItem]) -> bytes:
    """Canonical bytes of items already in canonical order."""
    return b"".join(canonical_json(item.content()) + b"\n" for item in items)


def _sort_key(item: NewsItem) -> tuple[str, str, str, str]:
    return (item.time, item.symbol or "", item.headline, item.body)


def news_of_items(items: Iterable[NewsItem]) -> News:
    """The news of these items (any order, any ids): sorted, numbered, rooted."""
    ordered = sorted(items, key=_sort_key)
    numbered = tuple(
        NewsItem(f"n{index}", item.time, item.symbol, item.headline, item.body)
        for index, item in enumerate(ordered, start=1)
    )
    times = tuple(item.time for item in numbered)
    return News(numbered, root_of_bytes(render_news(numbered)), times)


def _valid_time(text: str) -> bool:
    if not TIME.fullmatch(text):
        return False
    try:
        datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return False
    return True


def _item(
    line: int,
    members: Mapping[str, object],
    symbols: Collection[str],
    last_time: str | None,
) -> NewsItem | NewsProblem:
    def fault(field: str, why: str) -> NewsProblem:
        return NewsProblem(line, f"{field}: {why}")

    unknown = sorted(set(members) - _MEMBERS)
    if unknown:
        return fault(unknown[0], "unknown field (time, symbol, headline, body only)")
    time = members.get("time")
    if not isinstance(time, str) or not _valid_time(time):
        return fault("time", f"{time!r} is not an ISO-8601 UTC time like 2024-01-02T14:30:00Z")
    if last_time is not None and time > last_time:
        return fault("time", f"{time} is after the tape's last bar ({last_time})")
    symbol = members.get("symbol")
    if symbol == "":
        symbol = None
    if symbol is not None and (not isinstance(symbol, str) or symbol not in symbols):
        known = ", ".join(sorted(symbols))
        return fault("symbol", f"{symbol!r} is not one of the scenario's symbols ({known})")
    headline = members.get("headline")
    if not isinstance(headline, str) or not headline.strip():
        return fault("headline", "missing or empty")
    if len(headline) > MAX_HEADLINE:
        return fault("headline", f"longer than {MAX_HEADLINE} characters")
    body = members.get("body", "")
    if not isinstance(body, str):
        return fault("body", "not a string")
    if len(body) > MAX_BODY:
        return fault("body", f"longer than {MAX_BODY} characters")
    for field, text in (("headline", headline), ("body", body)):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return fault(field, "not valid Unicode text")
        # a headline is one line (a tab is only a space); a body may break lines
        found = control_character(text, lines=field == "body", tabs=True)
        if found is not None:
            return fault(
                field, f"holds the control character {found[0]!r} (character {found.start() + 1})"
            )
    return NewsItem("", time, symbol, headline, body)


def _jsonl_rows(text: str) -> Iterable[tuple[int, Mapping[str, object] | NewsProblem]]:
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as error:
            yield number, NewsProblem(number, f"not a JSON object: {error.msg}")
            continue
        except RecursionError:
            yield number, NewsProblem(number, "not a JSON object: nested too deeply")
            continue
        except ValueError:  # an integer of more digits than Python converts
            yield number, NewsProblem(number, "not a JSON object: a number too long")
            continue
        if not isinstance(value, dict):
            yield number, NewsProblem(number, "not a JSON object")
            continue
        yield number, value


def _csv_rows(text: str) -> Iterable[tuple[int, Mapping[str, object] | NewsProblem]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as error:  # a field longer than the csv module reads, say
        yield 1, NewsProblem(1, f"not CSV: {error}")
        return
    if header is None or tuple(field.strip() for field in header) != CSV_HEADER:
        yield 1, NewsProblem(1, f"the header must be {','.join(CSV_HEADER)}")
        return
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            yield reader.line_num, NewsProblem(reader.line_num, f"not CSV: {error}")
            return
        number = reader.line_num
        if not any(row):
            continue
        if len(row) != len(CSV_HEADER):
            yield number, NewsProblem(number, f"{len(row)} fields; expected {len(CSV_HEADER)}")
            continue
        yield number, dict(zip(CSV_HEADER, row, strict=True))


def parse_news(
    data: bytes,
    symbols: Collection[str],
    *,
    last_time: str | None = None,
    csv_form: bool = False,
    limit: int = 1,
) -> News | list[NewsProblem]:
    """The news of a JSONL (or, with ``csv_form``, CSV) text, or up to ``limit`` faults,
    each naming its line and field. ``symbols`` are the scenario's instruments; an item
    after ``last_time`` (the tape's last bar) is refused."""
    if len(data) > MAX_BYTES:
        return [NewsProblem(None, f"larger than {MAX_BYTES} bytes")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return [NewsProblem(data.count(b"\n", 0, error.start) + 1, "not UTF-8 text")]
    if text.startswith("\ufeff"):
        text = text[1:]
    rows = _csv_rows(text) if csv_form else _jsonl_rows(text)
    items: list[NewsItem] = []
    problems: list[NewsProblem] = []
    for number, row in rows:
        found = row if isinstance(row, NewsProblem) else _item(number, row, symbols, last_time)
        if isinstance(found, NewsProblem):
            problems.append(found)
            if len(problems) >= limit:
                break
        else:
            items.append(found)
        if len(items) > MAX_ITEMS:
            return [NewsProblem(number, f"more than {MAX_ITEMS} items")]
    if problems:
        return problems
    return news_of_items(items)


def visible_page(news: News, visible: int, *, before: int | None, limit: int) -> Sequence[NewsItem]:
    """Up to ``limit`` visible items older than item number ``before`` (1-based; all
    visible when ``None``), newest last."""
    end = visible if before is None else min(visible, max(before - 1, 0))
    return news.items[max(end - limit, 0) : end]
