"""INTERFACE of the catalog work, consumed by the engine and the service.

A tape is held once per process as compact immutable columns and shared by every
session on it. Prices are integers in units of ``10**-scale`` (``scale`` is the tape's
number of decimal places) and volumes in units of ``10**-volume_scale`` (0 on a tape of
whole volumes), so the engine computes in exact integer arithmetic.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kestrel_protocol import Catalog, Scenario

from .news import News
from .volumes import volume_text

__all__ = [
    "NEWS_IN_FRAME",
    "CatalogIndex",
    "CatalogProblem",
    "LoadedScenario",
    "SymbolColumns",
    "Tape",
]

NEWS_IN_FRAME = 5
"""The newest visible news items a frame shows when the scenario does not say."""


@dataclass(frozen=True, slots=True)
class SymbolColumns:
    """One symbol's bars; every array has one entry per bar (``array('q')``): prices in
    units of ``10**-Tape.scale``, volumes in units of ``10**-Tape.volume_scale``."""

    open: array[int]
    high: array[int]
    low: array[int]
    close: array[int]
    volume: array[int]


@dataclass(frozen=True, slots=True)
class Tape:
    """The bars of a scenario: times (ISO-8601 UTC ``...Z``), the UTC day of each bar
    (a proleptic ordinal, for ``tif day``), and per-symbol columns.

    ``volume_scale`` is the most decimal places of any volume of the tape: 0 when every
    volume is whole (its volumes are then plain integers everywhere they are shown)."""

    symbols: tuple[str, ...]
    times: tuple[str, ...]
    days: array[int]
    scale: int
    columns: Mapping[str, SymbolColumns]
    root: str
    volume_scale: int = 0

    def __len__(self) -> int:
        return len(self.times)

    def price_text(self, value: int) -> str:
        """A scaled integer price as a decimal string with ``scale`` places."""
        sign = "-" if value < 0 else ""
        whole, frac = divmod(abs(value), 10**self.scale)
        return f"{sign}{whole}.{frac:0{self.scale}d}" if self.scale else f"{sign}{whole}"

    def volume_text(self, value: int) -> str:
        """A scaled volume's canonical text (``2012.25343589``; ``120000`` when whole)."""
        return volume_text(value, self.volume_scale)

    def volume_member(self, value: int) -> int | str:
        """A scaled volume as frames and history show it: an integer on a tape of whole
        volumes (as always), else its canonical decimal text (never a float)."""
        return volume_text(value, self.volume_scale) if self.volume_scale else value


class LoadedScenario:
    """A scenario ready to trade: its protocol object (with root), its origin, its tape.

    The tape's columns are parsed on first use and then shared by every session of the
    process (catalog loading only hashes bytes, so start-up stays fast).
    """

    def __init__(
        self,
        scenario: Scenario,
        origin: Path | None,
        load_tape: Callable[[], Tape],
        *,
        sealed: bool = False,
        max_open_orders: int | None = None,
        lineage: str | None = None,
        forward: bool = False,
        news: News | None = None,
        news_aliases: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.scenario = scenario
        self.origin = origin  # None for shipped scenarios
        self.sealed = sealed
        """``sealed = true`` in its ``scenario.toml`` (a runtime may seal more)."""
        self.max_open_orders = max_open_orders
        """``max_open_orders`` in its ``scenario.toml``: lowers the runtime's bound."""
        self.lineage = lineage
        """``lineage`` in its ``scenario.toml``: a disguise's tag of its source's bars
        (twins share it; :mod:`.lineage`). Not part of the root, never served."""
        self.forward = forward
        """``forward = true`` in its ``scenario.toml``: its tape is a declared prefix that
        grows by appends (:mod:`kestrel_sdk.runtime.feed`); always served sealed until
        its feed is unsealed."""
        self.prefix_roots: Sequence[str] | None = None
        """A forward scenario's prefix root by bar, when known (:mod:`..engine.edge`)."""
        self.news = news
        """Its news items (``news.jsonl``; their root is the object's ``newsRoot``)."""
        self.news_aliases = dict(news_aliases or {})
        """``news_aliases`` in its ``scenario.toml``: the names a disguise renames in news
        text beside each symbol. Not part of the root, never served."""
        self._load_tape = load_tape
        self._tape: Tape | None = None
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        return self.scenario.id

    @property
    def news_in_frame(self) -> int:
        """The newest visible news items a frame shows."""
        given = self.scenario.news_in_frame
        return NEWS_IN_FRAME if given is None else given

    @property
    def tape(self) -> Tape:
        tape = self._tape
        if tape is None:
            with self._lock:
                if self._tape is None:
                    self._tape = self._load_tape()
                tape = self._tape
        return tape

    def with_tape(self, tape: Tape) -> LoadedScenario:
        """This scenario over ``tape`` (a forward tape grown past its declared prefix, or
        as its door published it), every other member kept; ``prefix_roots`` unknown."""
        return LoadedScenario(
            self.scenario,
            self.origin,
            lambda: tape,
            sealed=self.sealed,
            max_open_orders=self.max_open_orders,
            lineage=self.lineage,
            forward=self.forward,
            news=self.news,
            news_aliases=self.news_aliases,
        )


@dataclass(frozen=True, slots=True)
class CatalogProblem:
    """A malformed user scenario: where, and why."""

    path: Path
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        return f"{where}: {self.reason}"


class CatalogIndex:
    """The catalog of one process: shipped scenarios plus valid user scenarios."""

    def __init__(
        self,
        catalog: Catalog,
        scenarios: Mapping[str, LoadedScenario],
        problems: list[CatalogProblem],
    ) -> None:
        self.catalog = catalog
        self._scenarios = dict(scenarios)
        self.problems = problems

    def get(self, scenario_id: str) -> LoadedScenario | None:
        return self._scenarios.get(scenario_id)

    def ids(self) -> list[str]:
        return list(self._scenarios)
