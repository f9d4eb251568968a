"""The shipped scenarios (``kestrel_sdk/catalog_data``), loaded once per process.

Their tapes are committed in canonical form, so loading one costs one hash; its columns
are parsed on first use (into the process's :mod:`.shared_tapes`). A damaged one (a
broken install) is left out and reported, never breaking the rest.
"""

from __future__ import annotations

import functools
import gzip
import logging
import zlib
from collections.abc import Callable
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from .model import CatalogProblem, LoadedScenario, Tape
from .news import NEWS_FILE, News, parse_news
from .objects import scenario_object
from .shared_tapes import cached_tape, shared_tape
from .tapes import TapeShape, parse_tape, shape_of_canonical
from .terms import SCENARIO_FILE, ScenarioTerms, parse_terms

__all__ = ["SHIPPED_PATH", "ShippedTapeError", "shipped_scenarios"]

SHIPPED_PATH = Path("kestrel_sdk/catalog_data")

logger = logging.getLogger("kestrel_sdk.runtime.catalog")


class ShippedTapeError(RuntimeError):
    """A shipped tape that does not parse: the installed package is damaged."""


def _read_tape_bytes(read: Callable[[], bytes], name: str) -> bytes:
    data = read()
    return gzip.decompress(data) if name.endswith(".gz") else data


def _shipped_dirs() -> list[Traversable]:
    root = resources.files("kestrel_sdk.catalog_data")
    return sorted(
        (entry for entry in root.iterdir() if entry.is_dir() and (entry / SCENARIO_FILE).is_file()),
        key=lambda entry: entry.name,
    )


def _shipped_one(directory: Traversable) -> LoadedScenario:
    terms = parse_terms((directory / SCENARIO_FILE).read_text(encoding="utf-8"))
    if isinstance(terms, list):
        raise ShippedTapeError(f"scenario.toml: {terms[0].reason}")
    tape_file = directory / terms.tape
    try:
        data = _read_tape_bytes(tape_file.read_bytes, terms.tape)
    except (OSError, EOFError, zlib.error) as error:
        raise ShippedTapeError(f"cannot read the tape: {error}") from error
    shape = shape_of_canonical(data, len(terms.instruments))
    if shape is None:
        raise ShippedTapeError("the tape is not in canonical form (header, rows, final LF)")
    del data
    news = _shipped_news(directory, terms, shape)
    scenario = scenario_object(terms, shape, None if news is None else news.root)

    def load() -> Tape:
        cached = cached_tape(shape.root)
        if cached is not None:
            return cached
        parsed = parse_tape(tape_file, terms.ticks, terms.scale)
        if isinstance(parsed, list) or parsed.root != shape.root or len(parsed) != shape.bars:
            detail = str(parsed[0].reason) if isinstance(parsed, list) else "not canonical"
            raise ShippedTapeError(f"the shipped tape of {terms.id} is damaged: {detail}")
        return shared_tape(parsed)

    return LoadedScenario(
        scenario,
        None,
        load,
        sealed=terms.sealed,
        max_open_orders=terms.max_open_orders,
        news=news,
        news_aliases=dict(terms.news_aliases),
    )


def _shipped_news(directory: Traversable, terms: ScenarioTerms, shape: TapeShape) -> News | None:
    """A shipped scenario's news (committed in canonical form), if it has any."""
    news_file = directory / NEWS_FILE
    if not news_file.is_file():
        return None
    data = news_file.read_bytes()
    news = parse_news(data, terms.symbols, last_time=shape.end)
    if isinstance(news, list):
        raise ShippedTapeError(f"{NEWS_FILE}: {news[0]}")
    if news.render() != data:
        raise ShippedTapeError(f"{NEWS_FILE} is not in canonical form")
    return news


@functools.cache
def shipped_scenarios() -> tuple[tuple[LoadedScenario, ...], tuple[CatalogProblem, ...]]:
    """The shipped scenarios, loaded once per process (their tapes stay lazy).

    A damaged one (a broken install) is left out and reported, never breaking the rest.
    """
    loaded: list[LoadedScenario] = []
    problems: list[CatalogProblem] = []
    for directory in _shipped_dirs():
        try:
            loaded.append(_shipped_one(directory))
        except (ShippedTapeError, OSError, UnicodeDecodeError) as error:
            problems.append(CatalogProblem(SHIPPED_PATH / directory.name, None, str(error)))
            logger.error("shipped scenario %s is damaged: %s", directory.name, error)
    return tuple(loaded), tuple(problems)
