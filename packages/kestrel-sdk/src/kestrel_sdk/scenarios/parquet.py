"""A Parquet bar file as the header and rows of text its CSV would hold (pyarrow, else polars),
read a batch of rows at a time.

Each cell becomes the text ``DataFrame.to_csv`` would write for it, so a Parquet file and
the CSV of the same bars import alike: floats in their shortest round-trip form
(``187.15``), decimals exactly, dates as ``2024-01-02``, timestamps as ISO-8601 (those
with a time zone in its local time with the offset; a naive one means UTC) keeping any
fraction of a second down to the nanosecond, so it is reported rather than dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .cells import cell_text

__all__ = ["parquet_table"]

_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_BATCH = 65_536  # rows converted to text at a time


def parquet_table(path: Path) -> tuple[list[str], Iterator[list[str]]]:
    """The column names of a Parquet file and its rows as text, read as they are consumed.

    Raises ``ImportError`` when neither pyarrow nor polars is installed, and the reader's
    own error for a file that is not Parquet (while the rows are read too, for a file
    damaged part-way).
    """
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]  # noqa: PLC0415
    except ImportError:
        return _polars_table(path)
    file = pq.ParquetFile(path)
    return [str(name) for name in file.schema_arrow.names], _arrow_rows(file)


def _arrow_rows(file: Any) -> Iterator[list[str]]:
    with file:
        for batch in file.iter_batches(batch_size=_BATCH):
            columns = [_arrow_texts(batch.column(index)) for index in range(batch.num_columns)]
            yield from map(list, zip(*columns, strict=True))


def _arrow_texts(column: Any) -> list[str]:
    import pyarrow as pa  # noqa: PLC0415

    kind = column.type
    if pa.types.is_dictionary(kind):  # pandas' categorical columns (a symbol, say)
        column = column.cast(kind.value_type)
        kind = column.type
    if pa.types.is_timestamp(kind):
        return _timestamp_texts(column, kind.unit, kind.tz)
    return [cell_text(value) for value in column.to_pylist()]


def _timestamp_texts(column: Any, unit: str, zone: str | None) -> list[str]:
    """ISO-8601 texts of a timestamp column, whatever its unit, without pandas' help.

    The whole seconds go through pyarrow (which knows the zone); the fraction, which a
    Python ``datetime`` cannot hold below the microsecond, is written from the integer.
    """
    import pyarrow as pa  # noqa: PLC0415

    per_second = _PER_SECOND[unit]
    ticks: list[int | None] = column.cast(pa.int64()).to_pylist()
    whole = pa.array(
        [None if tick is None else tick // per_second for tick in ticks], pa.int64()
    ).cast(pa.timestamp("s", zone))
    fractions = [None if tick is None else tick % per_second for tick in ticks]
    return _stamp_texts(whole.to_pylist(), fractions, len(str(per_second)) - 1)


def _stamp_texts(moments: list[Any], fractions: list[int | None], digits: int) -> list[str]:
    """ISO-8601 texts of whole-second ``moments`` with their ``fractions`` of ``digits``."""
    texts: list[str] = []
    for moment, fraction in zip(moments, fractions, strict=True):
        if moment is None:
            texts.append("")
            continue
        text = moment.replace(microsecond=0).isoformat()
        if fraction:
            text = f"{text[:19]}.{fraction:0{digits}d}{text[19:]}"
        texts.append(text)
    return texts


def _polars_table(path: Path) -> tuple[list[str], Iterator[list[str]]]:
    import polars as pl  # noqa: PLC0415

    frame = pl.read_parquet(path)  # columnar: the text of its rows is made a slice at a time
    return [str(name) for name in frame.columns], _polars_rows(frame)


def _polars_rows(frame: Any) -> Iterator[list[str]]:
    for part in frame.iter_slices(n_rows=_BATCH):
        columns = [_polars_texts(part.get_column(name)) for name in part.columns]
        yield from map(list, zip(*columns, strict=True))


def _polars_texts(series: Any) -> list[str]:
    import polars as pl  # noqa: PLC0415

    values = series.to_list()
    if isinstance(series.dtype, pl.Datetime):  # a datetime holds microseconds: nanoseconds apart
        return _stamp_texts(values, series.dt.nanosecond().to_list(), 9)
    return [cell_text(value) for value in values]
