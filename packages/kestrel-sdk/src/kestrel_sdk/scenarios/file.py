"""``scenario_from_file``: a CSV or Parquet file of bars as a scenario."""

from __future__ import annotations

from pathlib import Path

from ..runtime.catalog.instrument_terms import SYMBOL_PATTERN
from .imported import ImportedScenario, ScenarioTermsInput, build_scenario
from .readers import read_bars

__all__ = ["scenario_from_file"]


def scenario_from_file(
    path: str | Path,
    scenario_id: str,
    *,
    symbol: str | None = None,
    interval: str | None = None,
    tick: str | None = None,
    terms: ScenarioTermsInput | None = None,
) -> ImportedScenario:
    """The scenario of a bar file (layouts: see ``kestrel_sdk.scenarios.layouts``).

    ``symbol`` names the symbol of a file without a symbol column (default: the file's
    name, ``GOOG.csv`` → ``GOOG``, when that is a valid symbol), or picks symbols
    (comma-separated) from a long file. ``interval`` (``1m``, ``5m``, ``1h``, ``1d``)
    defaults to the most common gap between bars; ``tick`` to the finest decimal the
    prices use (at least 0.01). Problems name the file's row (the header is row 1).

    Raises ``ScenarioImportError`` listing every problem.
    """
    file = Path(path)
    raw = read_bars(file)
    if symbol is None and not raw.named:
        stem = file.name.split(".")[0].upper()
        if SYMBOL_PATTERN.fullmatch(stem):
            symbol = stem
            raw.notes.append(f"symbol {stem} from the file name (--symbol names another)")
    return build_scenario(
        raw,
        scenario_id,
        source=file.name,
        file=True,
        symbol=symbol,
        interval=interval,
        tick=tick,
        terms=terms or ScenarioTermsInput(),
    )
