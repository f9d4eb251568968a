"""Building the process's catalog: the shipped scenarios (:mod:`.shipped`) plus
``KESTREL_CATALOG_PATH``'s.

User scenarios are validated in full when first met (a malformed one is skipped with a
warning, never breaking the rest), a block of lines at a time and keeping no columns, so
a large tape costs a listing time, not memory; a tape validated before and unchanged
since is listed from its remembered shape, not read (``shapes``, kept in the Kestrel home
the caller names: ``home``, else :func:`kestrel_protocol.kestrel_home`'s). Every tape's columns
are parsed on its first use, into the process's :mod:`.shared_tapes`, keyed by tape
root, so every session on a tape shares one copy.
"""

from __future__ import annotations

import functools
import logging
import os
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kestrel_protocol import KestrelError, RefusalCode, kestrel_home

from .forward_tape import empty_tape, forward_shape
from .model import CatalogIndex, CatalogProblem, LoadedScenario, Tape
from .news import NEWS_FILE, News, parse_news
from .objects import catalog_object, scenario_object
from .shapes import remember_shape, remembered_shape
from .shared_tapes import cached_tape, shared_tape
from .shipped import SHIPPED_PATH, ShippedTapeError, shipped_scenarios
from .tapes import TapeShape, check_tape, parse_tape, render_tape
from .terms import SCENARIO_FILE, ScenarioTerms, parse_terms

__all__ = ["CATALOG_PATH_ENV", "catalog_entries", "check_catalog", "load_catalog", "tape_csv"]

CATALOG_PATH_ENV = "KESTREL_CATALOG_PATH"
_CHECK_LIMIT = 100  # problems reported per tape by a check (a broken file can have many)

logger = logging.getLogger("kestrel_sdk.runtime.catalog")

# --- user scenarios ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _UserScenario:
    loaded: LoadedScenario
    terms: ScenarioTerms
    toml: Path


def catalog_entries(paths: Sequence[str | Path] | None) -> list[Path]:
    """The catalog directories ``paths`` lists (``None``: ``KESTREL_CATALOG_PATH``'s),
    ``~`` expanded, empty entries dropped."""
    if paths is None:
        raw = os.environ.get(CATALOG_PATH_ENV, "")
        return [Path(entry).expanduser() for entry in raw.split(os.pathsep) if entry.strip()]
    return [Path(entry).expanduser() for entry in paths if str(entry).strip()]


def _scenario_dirs(entries: list[Path], problems: list[CatalogProblem]) -> Iterator[Path]:
    """Every scenario directory, in path order then by name; an entry may be one itself.
    A hidden child (``.name``) is none: it is being written, or was left by a write
    that never finished.

    A directory reached twice (the same entry listed twice) is taken once.
    """
    seen: set[Path] = set()
    for directory in _candidate_dirs(entries, problems):
        key = directory.resolve()
        if key not in seen:
            seen.add(key)
            yield directory


def _candidate_dirs(entries: list[Path], problems: list[CatalogProblem]) -> Iterator[Path]:
    for entry in entries:
        if not entry.is_dir():
            problems.append(CatalogProblem(entry, None, "catalog path entry is not a directory"))
            continue
        if (entry / SCENARIO_FILE).is_file():
            yield entry
            continue
        try:
            children = sorted(entry.iterdir())
        except OSError as error:
            problems.append(CatalogProblem(entry, None, f"cannot list directory: {error}"))
            continue
        for child in children:
            if not child.name.startswith(".") and (child / SCENARIO_FILE).is_file():
                yield child


def _unsafe_file(directory: Path, path: Path) -> CatalogProblem | None:
    """A problem when ``path`` (a symbolic link, or through one) leads out of the
    scenario's directory: such a file is not read (a link to ``/etc/passwd`` is no tape);
    or when it is there but is no regular file (a FIFO would hold every listing up)."""
    try:
        inside = path.resolve().is_relative_to(directory.resolve())
    except (OSError, RuntimeError):  # a link loop
        inside = False
    if not inside:
        return CatalogProblem(path, None, f"{path.name} links outside the scenario directory")
    if path.exists() and not path.is_file():
        return CatalogProblem(path, None, f"{path.name} is not a regular file")
    return None


def _load_user(directory: Path, limit: int, home: Path) -> _UserScenario | list[CatalogProblem]:
    toml = directory / SCENARIO_FILE
    unsafe = _unsafe_file(directory, toml)
    if unsafe is not None:
        return [unsafe]
    try:
        toml_bytes = toml.read_bytes()
        text = toml_bytes.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return [CatalogProblem(toml, None, f"cannot read scenario.toml: {error}")]
    terms = parse_terms(text)
    if isinstance(terms, list):
        return [CatalogProblem(toml, problem.line, problem.reason) for problem in terms]
    tape_path = directory / terms.tape
    unsafe = _unsafe_file(directory, tape_path)
    if unsafe is not None:
        return [unsafe]
    if terms.forward:
        return _load_forward(directory, terms, toml, tape_path, limit)
    shape = remembered_shape(home, tape_path, toml_bytes)
    if shape is None:  # not validated before, or changed since: read it (columns not kept)
        try:
            checked = check_tape(tape_path, terms.ticks, terms.scale, limit=limit)
        except FileNotFoundError:
            line = _line_of(text, "tape")
            return [CatalogProblem(toml, line, f"tape file {terms.tape} does not exist")]
        except (OSError, EOFError, zlib.error) as error:
            return [CatalogProblem(tape_path, None, f"cannot read the tape: {error}")]
        if isinstance(checked, list):
            return [CatalogProblem(tape_path, problem.line, problem.reason) for problem in checked]
        shape = checked
        remember_shape(home, tape_path, toml_bytes, shape)
    news = _user_news(directory, terms, shape, limit)
    if isinstance(news, list):
        return news
    loaded = LoadedScenario(
        scenario_object(terms, shape, None if news is None else news.root),
        directory,
        functools.partial(_load_checked, tape_path, terms, shape),
        sealed=terms.sealed,
        max_open_orders=terms.max_open_orders,
        lineage=terms.lineage,
        news=news,
        news_aliases=dict(terms.news_aliases),
    )
    return _UserScenario(loaded, terms, toml)


def _load_forward(
    directory: Path, terms: ScenarioTerms, toml: Path, tape_path: Path, limit: int
) -> _UserScenario | list[CatalogProblem]:
    """A forward scenario: its declared prefix (absent or header-only: none), served
    sealed whatever its ``sealed`` says (its tape grows while agents trade)."""
    try:
        shape = forward_shape(tape_path, terms, limit)
    except (OSError, EOFError, zlib.error) as error:
        return [CatalogProblem(tape_path, None, f"cannot read the tape: {error}")]
    if isinstance(shape, list):
        return [CatalogProblem(tape_path, problem.line, problem.reason) for problem in shape]
    load: Callable[[], Tape]
    if shape.bars:
        load = functools.partial(_load_checked, tape_path, terms, shape)
    else:
        load = functools.partial(empty_tape, terms.symbols, terms.scale)
    loaded = LoadedScenario(
        scenario_object(terms, shape),
        directory,
        load,
        sealed=True,
        max_open_orders=terms.max_open_orders,
        lineage=terms.lineage,
        forward=True,
    )
    return _UserScenario(loaded, terms, toml)


def _user_news(
    directory: Path, terms: ScenarioTerms, shape: TapeShape, limit: int
) -> News | list[CatalogProblem] | None:
    """A user scenario's news (``news.jsonl`` beside its tape), checked; ``None`` without."""
    path = directory / NEWS_FILE
    if not path.exists():
        return None
    unsafe = _unsafe_file(directory, path)
    if unsafe is not None:
        return [unsafe]
    try:
        data = path.read_bytes()
    except OSError as error:
        return [CatalogProblem(path, None, f"cannot read {NEWS_FILE}: {error}")]
    news = parse_news(data, terms.symbols, last_time=shape.end, limit=limit)
    if isinstance(news, list):
        return [CatalogProblem(path, problem.line, problem.reason) for problem in news]
    return news


def _load_checked(path: Path, terms: ScenarioTerms, shape: TapeShape) -> Tape:
    """A checked tape's columns, on first use: its bytes must still be the tape the
    shape was found for (else it is refused, never served)."""
    cached = cached_tape(shape.root)
    if cached is not None:
        return cached
    try:
        parsed = parse_tape(path, terms.ticks, terms.scale)
    except (OSError, EOFError, zlib.error) as error:
        raise _changed(terms, path, f"it cannot be read ({error})") from None
    if isinstance(parsed, list) or parsed.root != shape.root:
        raise _changed(terms, path, "it is no longer the tape the catalog listed")
    return shared_tape(parsed)


def _changed(terms: ScenarioTerms, path: Path, why: str) -> KestrelError:
    return KestrelError(
        RefusalCode.BACKEND_UNAVAILABLE,
        f"the tape of scenario {terms.id} changed: {why}; `kestrel catalog --check` says "
        "what is wrong with it",
        {"scenario": terms.id, "path": str(path)},
    )


def _line_of(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(key) and line.lstrip()[len(key) :].lstrip().startswith("="):
            return number
    return None


def _collect(
    paths: Sequence[str | Path] | None, limit: int, home: str | Path | None
) -> tuple[dict[str, LoadedScenario], list[CatalogProblem]]:
    shapes_home = kestrel_home(home)
    shipped, shipped_problems = shipped_scenarios()
    scenarios: dict[str, LoadedScenario] = {item.id: item for item in shipped}
    origins: dict[str, str] = {item.id: "a shipped scenario" for item in scenarios.values()}
    problems: list[CatalogProblem] = list(shipped_problems)
    for directory in _scenario_dirs(catalog_entries(paths), problems):
        result = _load_user(directory, limit, shapes_home)
        if isinstance(result, list):
            problems.extend(result)
            continue
        scenario_id = result.loaded.id
        if scenario_id in scenarios:
            problems.append(
                CatalogProblem(
                    result.toml,
                    result.terms.id_line,
                    f"id {scenario_id!r} is already taken by {origins[scenario_id]}",
                )
            )
            continue
        scenarios[scenario_id] = result.loaded
        origins[scenario_id] = str(directory)
    return scenarios, problems


def load_catalog(
    paths: Sequence[str | Path] | None = None, *, home: str | Path | None = None
) -> CatalogIndex:
    """The catalog: shipped scenarios plus every valid user scenario.

    ``paths`` lists catalog directories (each holds scenario directories, or is one);
    ``None`` reads ``KESTREL_CATALOG_PATH``. ``home`` is the Kestrel home the shapes of
    checked tapes are remembered in (``None``: ``$KESTREL_HOME``, else ``~/.kestrel``);
    every face passes the home it runs with. A malformed user scenario is skipped and
    logged as a warning; the problems are also on ``CatalogIndex.problems``.
    """
    scenarios, problems = _collect(paths, 1, home)
    for problem in problems:
        logger.warning("skipping a user scenario: %s", problem)
    ordered = {scenario_id: scenarios[scenario_id] for scenario_id in sorted(scenarios)}
    sealed = [item.id for item in ordered.values() if item.sealed]
    catalog = catalog_object((item.scenario for item in ordered.values()), sealed)
    return CatalogIndex(catalog, ordered, problems)


def check_catalog(
    paths: Sequence[str | Path] | None = None, *, home: str | Path | None = None
) -> list[CatalogProblem]:
    """Every problem of the catalog, shipped tapes parsed in full too (no warnings logged);
    ``paths`` and ``home`` as :func:`load_catalog` takes them.

    An empty list means every scenario loads; ``kestrel catalog --check`` prints these.
    """
    problems: list[CatalogProblem] = []
    for item in shipped_scenarios()[0]:
        try:
            item.tape  # noqa: B018 - parsing it is the check
        except ShippedTapeError as error:
            problems.append(CatalogProblem(SHIPPED_PATH / item.id, None, str(error)))
    problems.extend(_collect(paths, _CHECK_LIMIT, home)[1])
    return problems


def tape_csv(loaded: LoadedScenario) -> str:
    """The canonical CSV text of a scenario's tape (its sha256 is the tape root)."""
    return render_tape(loaded.tape)
