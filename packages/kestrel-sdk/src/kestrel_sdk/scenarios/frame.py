"""``scenario_from_frame``: a pandas DataFrame of bars as a scenario (pandas imported here only)."""

from __future__ import annotations

from typing import Any

from .cells import cell_text
from .imported import ImportedScenario, ScenarioTermsInput, build_scenario
from .layouts import raw_bars

__all__ = ["scenario_from_frame"]


def scenario_from_frame(
    frame: Any,
    scenario_id: str,
    *,
    symbol: str | None = None,
    interval: str | None = None,
    tick: str | None = None,
    source: str = "DataFrame",
    terms: ScenarioTermsInput | None = None,
) -> ImportedScenario:
    """The scenario of a pandas DataFrame of bars; ``.write(directory)`` stores it.

    Takes the layouts ``scenario_from_file`` does: backtesting.py's ``Open,High,Low,Close,
    Volume`` with a ``DatetimeIndex``, Yahoo's (also yfinance's ``(Price, Ticker)``
    column MultiIndex), lower-case Alpaca/Polygon columns, and long format with a
    ``symbol`` column or index level (alpaca-py's ``(symbol, timestamp)`` index).
    Problems name the row by position (``row 0`` is ``frame.iloc[0]``).

    Raises ``ScenarioImportError`` listing every problem.
    """
    import pandas as pd  # type: ignore[import-untyped]  # noqa: PLC0415 - optional dependency

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, not {type(frame).__name__}")
    table = frame if isinstance(frame.index, pd.RangeIndex) else frame.reset_index()
    records = (  # a row's text is made as it is checked
        (position, [cell_text(value) for value in values])
        for position, values in enumerate(table.itertuples(index=False, name=None))
    )
    if isinstance(table.columns, pd.MultiIndex) and table.columns.nlevels == 2:
        header = [str(name) for name in table.columns.get_level_values(0)]
        symbols = [str(name) for name in table.columns.get_level_values(1)]
        raw = raw_bars(header, records, header_row=None, symbols=symbols)
    else:
        raw = raw_bars([str(name) for name in table.columns], records, header_row=None)
    return build_scenario(
        raw,
        scenario_id,
        source=source,
        file=False,
        symbol=symbol,
        interval=interval,
        tick=tick,
        terms=terms or ScenarioTermsInput(),
    )
