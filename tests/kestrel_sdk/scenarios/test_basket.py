"""The shipped basket: sectors that move together, an index, and news that pays to read."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from kestrel_protocol import canonical_json
from kestrel_sdk.runtime.catalog import Tape, load_catalog
from kestrel_sdk.scenarios.basket import INDEX, basket
from kestrel_sdk.scenarios.basket_news import COMPANIES

DATA = Path(__file__).resolve().parents[3] / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"
SECTOR = {company.symbol: company.sector for company in COMPANIES}


def _tape() -> Tape:
    loaded = load_catalog([]).get("basket-20")
    assert loaded is not None
    return loaded.tape


def _news() -> list[dict[str, str]]:
    text = (DATA / "basket-20" / "news.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def _returns(tape: Tape, symbol: str) -> list[float]:
    close = tape.columns[symbol].close
    return [close[i] / close[i - 1] - 1 for i in range(1, len(close))]


def _correlation(a: list[float], b: list[float]) -> float:
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    cov = sum((x - mean_a) * (y - mean_b) for x, y in zip(a, b, strict=True))
    var_a = sum((x - mean_a) ** 2 for x in a)
    var_b = sum((y - mean_b) ** 2 for y in b)
    return cov / math.sqrt(var_a * var_b)


def test_the_shipped_basket_is_twenty_stocks_in_five_sectors_and_their_index() -> None:
    tape = _tape()
    stocks = [symbol for symbol in tape.symbols if symbol != INDEX]
    assert len(stocks) == 20
    assert INDEX in tape.symbols
    assert sorted({SECTOR[symbol] for symbol in stocks}) == [
        "Consumer", "Energy", "Finance", "Health", "Technology",
    ]  # fmt: skip
    assert len(tape) == 504


def test_stocks_of_a_sector_move_together_more_than_across_sectors() -> None:
    tape = _tape()
    stocks = [symbol for symbol in tape.symbols if symbol != INDEX]
    returns = {symbol: _returns(tape, symbol) for symbol in stocks}
    same: list[float] = []
    across: list[float] = []
    for i, a in enumerate(stocks):
        for b in stocks[i + 1 :]:
            (same if SECTOR[a] == SECTOR[b] else across).append(
                _correlation(returns[a], returns[b])
            )
    assert sum(across) / len(across) > 0.1  # a market factor
    assert sum(same) / len(same) > sum(across) / len(across) + 0.1  # and a sector factor


def test_the_index_is_the_equal_weighted_mean_of_the_stocks() -> None:
    tape = _tape()
    stocks = [symbol for symbol in tape.symbols if symbol != INDEX]
    index = _returns(tape, INDEX)
    means = [sum(_returns(tape, s)[t] for s in stocks) / len(stocks) for t in range(len(index))]
    assert max(abs(a - b) for a, b in zip(index, means, strict=True)) < 0.001
    assert _correlation(index, means) > 0.999


def test_news_is_canonical_sorted_and_within_the_tape() -> None:
    tape = _tape()
    text = (DATA / "basket-20" / "news.jsonl").read_bytes()
    items = _news()
    assert text == b"".join(canonical_json(item) + b"\n" for item in items)
    keys = [(item["time"], item.get("symbol", ""), item["headline"]) for item in items]
    assert keys == sorted(keys)
    assert tape.times[0] <= items[0]["time"]
    assert items[-1]["time"] < tape.times[-1]
    assert {item.get("symbol") for item in items} <= {*tape.symbols, None}
    assert any("symbol" not in item for item in items)  # market-wide news too
    assert all(item["headline"] and item["body"] for item in items)


def _reaction(tape: Tape, symbol: str, published: str) -> float:
    """What buying at the first open after the item was visible and selling 15 bars
    later made over the index: the item shows at the first bar at or after its time,
    an order then fills at the next bar's open."""
    seen = next(t for t, time in enumerate(tape.times) if time >= published)
    entry, leave = seen + 1, seen + 15
    col, index = tape.columns[symbol], tape.columns[INDEX]
    return (col.close[leave] / col.open[entry]) - (index.close[leave] / index.open[entry])


@pytest.mark.parametrize(("word", "low", "high"), [("beats", 0.02, 1), ("misses", -1, -0.02)])
def test_reading_earnings_pays_after_they_are_published(word: str, low: float, high: float) -> None:
    """A beat is followed by drift up, a miss by drift down, after the item is visible."""
    tape = _tape()
    moves = [
        _reaction(tape, item["symbol"], item["time"])
        for item in _news()
        if word in item["headline"] and item["time"] < tape.times[-20]
    ]
    assert len(moves) >= 30
    assert low < sum(moves) / len(moves) < high


def test_notices_move_nothing() -> None:
    tape = _tape()
    moves = [
        _reaction(tape, item["symbol"], item["time"])
        for item in _news()
        if "symbol" in item and "estimates" not in item["headline"]
        and "in line" not in item["headline"] and item["time"] < tape.times[-20]
    ]  # fmt: skip
    assert len(moves) >= 10
    assert abs(sum(moves) / len(moves)) < 0.02


@pytest.mark.parametrize("size", [10, 30])
def test_a_basket_of_ten_to_thirty_stocks_is_generated_alike_twice(size: int) -> None:
    one, two = basket("mine", size, 120), basket("mine", size, 120)
    assert one == two
    assert len(one.symbols) == size + 1
    assert one.tape.count("\n") == 1 + 120 * (size + 1)
    assert basket("other", size, 120).tape != one.tape


@pytest.mark.parametrize("size", [9, 31])
def test_a_basket_outside_ten_to_thirty_is_refused(size: int) -> None:
    with pytest.raises(ValueError, match=f"a basket has 10 to 30 stocks, not {size}"):
        basket("mine", size, 120)
