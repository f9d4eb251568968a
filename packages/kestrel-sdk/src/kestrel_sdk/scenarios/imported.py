"""An imported scenario: its ``scenario.toml`` and canonical tape, checked, ready to write.

The terms go through exactly the validation the catalog applies when it loads a user
scenario (``parse_terms``); the tape is made in the catalog's canonical form from bars
that passed every tape rule and more (``bars.py``), and is written to a temporary file
as it is made, so an import holds the file's rows compactly, never its text.
``write`` stores both files, which ``kestrel catalog --check`` accepts.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from kestrel_protocol import Scenario, kestrel_home

from ..runtime.catalog.instrument_terms import lot_member
from ..runtime.catalog.news import News, parse_news
from ..runtime.catalog.objects import scenario_object
from ..runtime.catalog.seal_salt import TapeSalt
from ..runtime.catalog.shapes import remember_shape
from ..runtime.catalog.tapes import TapeShape
from ..runtime.catalog.terms import BARS_PER_YEAR, parse_terms
from .bars import Bars, convert_bars
from .layouts import RawBars
from .problems import ImportProblem, Problems
from .series import scan_rows
from .staged import TAPE_FILE, write_staged
from .tapefile import write_tape

__all__ = [
    "ImportedScenario",
    "ScenarioImportError",
    "ScenarioTermsInput",
    "build_scenario",
    "scenario_row",
]


def scenario_row(scenario: Scenario) -> dict[str, Any]:
    """A scenario written here as its row in the catalog object (as ``kestrel catalog
    --json`` shows it)."""
    return {
        "id": scenario.id,
        "title": scenario.title,
        "symbols": [item.symbol for item in scenario.instruments],
        "interval": scenario.tape.interval,
        "bars": scenario.tape.bars,
        "root": scenario.root,
    }


_WORDS = {"1d": "daily", "1h": "hourly", "5m": "5-minute", "1m": "1-minute"}


class ScenarioImportError(ValueError):
    """The input cannot become a scenario: its problems, each with its row where known.

    ``lines`` is what the CLI prints, one problem a line (``GOOG.csv: row 7: High 95.96 <
    Low 100.50``): the first :data:`~.problems.SHOWN` by row. ``total`` counts every
    problem and ``counts`` each kind of them (:func:`~.problems.problem_kind`); ``more``
    is the line that tells of those not listed (``None`` when all are).
    """

    def __init__(self, source: str, problems: Iterable[ImportProblem], *, file: bool) -> None:
        found = problems if isinstance(problems, Problems) else Problems(problems)
        self.source = source
        self.problems = list(found)
        self.total = len(found)
        self.counts = found.counts()
        self.lines = [_line(source, problem, file=file) for problem in self.problems]
        kinds = ", ".join(f"{kind} ({count})" for kind, count in self.counts.items())
        self.more = (
            None
            if self.total <= len(self.lines)
            else f"... and {self.total - len(self.lines)} more; all {self.total} by kind: {kinds}"
        )
        super().__init__("\n".join([*self.lines, *([self.more] if self.more else [])]))


def _line(source: str, problem: ImportProblem, *, file: bool) -> str:
    if problem.row is None:
        return f"{source}: {problem.reason}"
    return (
        f"{source}: row {problem.row}: {problem.reason}"
        if file
        else (f"row {problem.row}: {problem.reason}")
    )


@dataclass(frozen=True, slots=True)
class ScenarioTermsInput:
    """The terms of an imported scenario that its bars do not decide (docs/spec.md §4 defaults)."""

    title: str | None = None
    description: str | None = None
    cash: str = "100000.00"
    shortable: bool = False
    max_position: int = 100000
    max_drawdown: str = "1.0"
    fee_bps: str = "10"
    fee_minimum: str = "0.00"
    participation: str = "1"
    slippage_bps: str = "0"
    lot: int | str = 1
    """Whole (``1``) or a decimal string (``"0.01"``: quantities in hundredths)."""
    margin: Mapping[str, str] | None = None
    """A margin account's terms by their ``scenario.toml`` keys (``leverage``,
    ``maintenance_margin``, ``borrow_rate``, ``cash_rate``); ``None``: a cash account."""
    bars_per_year: int | None = None
    sealed: bool = False
    """``sealed = true``: no face serves its tape; its default title and description
    then name neither its symbols' history nor its dates."""


class ImportedScenario:
    """A checked scenario: the files to write and the catalog entry they make.

    The tape waits in a temporary file (removed with this object) until ``write``.
    """

    __slots__ = (
        "__weakref__",
        "_lock",
        "_tape",
        "layout",
        "news",
        "notes",
        "scenario",
        "toml",
    )

    def __init__(
        self, scenario: Scenario, toml: str, tape: IO[bytes], layout: str, notes: list[str]
    ) -> None:
        self.scenario = scenario
        self.toml = toml
        self.layout = layout
        self.notes = notes
        self._tape = tape
        self._lock = threading.Lock()
        self.news: News | None = None
        """The scenario's news (``add_news``), written as ``news.jsonl``."""
        weakref.finalize(self, tape.close)

    def add_news(self, data: bytes, source: str, *, csv_form: bool) -> None:
        """Take news items (JSONL, or CSV with the header ``time,symbol,headline,body``)
        beside the bars: each checked (``ScenarioImportError`` names every fault's line
        and field), kept in canonical form, its root committed as ``newsRoot``."""
        info = self.scenario.tape
        symbols = [item.symbol for item in self.scenario.instruments]
        news = parse_news(data, symbols, last_time=info.end, csv_form=csv_form, limit=100)
        if isinstance(news, list):
            problems = [ImportProblem(None, str(problem)) for problem in news]
            raise ScenarioImportError(source, problems, file=True)
        terms = parse_terms(self.toml)
        assert not isinstance(terms, list)  # made by build_scenario, checked there
        shape = TapeShape(bars=info.bars, start=info.start, end=info.end, root=info.root)
        self.scenario = scenario_object(terms, shape, news.root)
        self.news = news

    @property
    def id(self) -> str:
        return self.scenario.id

    @property
    def tape(self) -> str:
        """The canonical tape as text (read back whole: a large one is better written)."""
        with self._lock:
            self._tape.seek(0)
            return self._tape.read().decode("utf-8")

    def entry(self) -> dict[str, Any]:
        """The scenario's row in the catalog object (as ``kestrel catalog --json`` shows it)."""
        return scenario_row(self.scenario)

    def write(self, directory: str | Path, *, home: str | Path | None = None) -> Path:
        """Write ``scenario.toml`` and ``tape.csv`` into ``directory`` by
        :func:`~.staged.write_staged` (which refuses a target the catalog would not list
        with ``ScenarioTargetError``): both appear at once, nothing is left behind on
        failure. Returns the absolute path written. The tape's shape is remembered in the
        Kestrel home ``home`` (``load_catalog``'s), so the catalog lists it unread."""

        def tape(out: IO[bytes]) -> None:
            with self._lock:
                self._tape.seek(0)
                shutil.copyfileobj(self._tape, out)

        target = write_staged(directory, tape, self.toml, self.news)
        info = self.scenario.tape  # made as the catalog validates: remembered so
        shape = TapeShape(bars=info.bars, start=info.start, end=info.end, root=info.root)
        toml = self.toml.encode("utf-8")
        remember_shape(kestrel_home(home), target / TAPE_FILE, toml, shape)  # no re-read
        return target


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _lot_toml(lot: int | str) -> str:
    """A lot as ``scenario.toml`` writes it: an integer when whole (as always), else a
    quoted decimal; a malformed one (or one of more digits than Python writes out) quoted
    as given, for the terms check to name."""
    if isinstance(lot, str):
        try:
            member = lot_member(lot)
            return _toml_string(member) if isinstance(member, str) else str(member)
        except (ArithmeticError, ValueError):
            return _toml_string(lot)
    return str(lot)


def _toml(
    scenario_id: str, bars: Bars, terms: ScenarioTermsInput, title: str, description: str
) -> str:
    given = terms.bars_per_year  # 0 too is written, for the terms check to refuse
    per_year = BARS_PER_YEAR[bars.interval] if given is None else given
    lines = [
        *(["sealed = true"] if terms.sealed else []),
        f"id = {_toml_string(scenario_id)}",
        f"title = {_toml_string(title)}",
        f"description = {_toml_string(description)}",
        f"tape = {_toml_string(TAPE_FILE)}",
        f"interval = {_toml_string(bars.interval)}",
        f"bars_per_year = {per_year}",
        "",
        "[account]",
        f"cash = {_toml_string(terms.cash)}",
        f"shortable = {'true' if terms.shortable else 'false'}",
        f"max_position = {terms.max_position}",
        f"max_drawdown = {_toml_string(terms.max_drawdown)}",
        *(
            []
            if terms.margin is None
            else ['kind = "margin"']
            + [f"{key} = {_toml_string(value)}" for key, value in terms.margin.items()]
        ),
        "",
        "[fees]",
        f"bps = {_toml_string(terms.fee_bps)}",
        f"minimum = {_toml_string(terms.fee_minimum)}",
        "",
        "[fill]",
        f"participation = {_toml_string(terms.participation)}",
        f"slippage_bps = {_toml_string(terms.slippage_bps)}",
    ]
    for symbol in bars.symbols:
        lines += ["", "[[instruments]]", f"symbol = {_toml_string(symbol)}"]
        lines += [f"tick = {_toml_string(f'{bars.tick:f}')}", f"lot = {_lot_toml(terms.lot)}"]
    return "\n".join(lines) + "\n"


def _salted(description: str, tape: IO[bytes]) -> str:
    """A sealed scenario's default ``description`` salted with its tape, written to
    ``tape`` (:mod:`..runtime.catalog.seal_salt`: without the salt, its root would
    tell the tape's length and end to anyone trying them)."""
    salt = TapeSalt()
    tape.seek(0)
    while chunk := tape.read(1 << 20):
        salt.update(chunk)
    return salt.salted(description)


def build_scenario(
    raw: RawBars,
    scenario_id: str,
    *,
    source: str,
    file: bool,
    symbol: str | None,
    interval: str | None,
    tick: str | None,
    terms: ScenarioTermsInput,
) -> ImportedScenario:
    """The scenario of recognised rows, or ``ScenarioImportError`` with every problem."""
    scanned = scan_rows(raw.bars, named=raw.named, symbol=symbol)  # reads every row
    if raw.problems:
        raise ScenarioImportError(source, raw.problems, file=file)
    bars = convert_bars(scanned, interval=interval, tick=tick)
    if isinstance(bars, Problems):
        raise ScenarioImportError(source, bars, file=file)
    start, end = bars.start, bars.end
    word = _WORDS[bars.interval]
    names = ", ".join(bars.symbols)
    tape = tempfile.TemporaryFile(prefix="kestrel-tape-")  # noqa: SIM115 - kept by the result
    try:
        shape = write_tape(bars, tape)
        if terms.sealed:  # served: nothing of the source beyond its symbols
            title = terms.title or f"Sealed {word} scenario"
            description = terms.description or _salted(f"Sealed {word} bars of {names}.", tape)
        else:  # the dates are in the tape's terms, not in the title
            title = terms.title or f"{' '.join(bars.symbols)} {word}"
            description = terms.description or (
                f"{len(bars)} {word} bars of {names} ({start} to {end}), imported from "
                f"{source} ({raw.layout} layout)."
            )
        toml = _toml(scenario_id, bars, terms, title, description)
        checked = parse_terms(toml)
        if isinstance(checked, list):
            problems = [ImportProblem(None, problem.reason) for problem in checked]
            raise ScenarioImportError(source, problems, file=file)
    except BaseException:
        tape.close()
        raise
    notes = [*raw.notes, *bars.notes]
    return ImportedScenario(scenario_object(checked, shape), toml, tape, raw.layout, notes)
