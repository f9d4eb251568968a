"""Rich output of the CLI: catalog and grade tables, diagnostics, JSON."""

from __future__ import annotations

import json
from typing import Any

from kestrel_protocol import Catalog, GradeResult, ValidationReport, canonical_json
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

__all__ = [
    "catalog_table",
    "diagnostics_lines",
    "grade_table",
    "json_text",
    "pretty_json",
    "progress_bar",
    "size_text",
    "stdout",
]


def stdout() -> Console:
    """A console on stdout (plain when not a terminal, so scripts can read it)."""
    return Console(highlight=False, soft_wrap=True)


def json_text(data: Any) -> str:
    """Canonical JSON text (what roots are computed over), one line."""
    return canonical_json(data).decode("utf-8")


def pretty_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True)


def diagnostics_lines(path: str, report: ValidationReport) -> list[str]:
    """``file:line:col: CODE message`` for every diagnostic."""
    return [
        f"{path}:{d.line}:{d.column}: {d.code} {d.message}"
        + ("" if d.severity == "error" else " (warning)")
        for d in report.diagnostics
    ]


def size_text(size: int) -> str:
    """A byte count as people read it: ``512 B``, ``1.5 kB``, ``163.3 MB`` (powers of 1000)."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if abs(value) < 1000 or unit == "GB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def catalog_table(catalog: Catalog) -> Table:
    table = Table(title="Kestrel catalog", title_justify="left")
    for column in ("id", "title", "symbols", "interval", "bars"):
        table.add_column(column, justify="right" if column == "bars" else "left")
    for s in catalog.scenarios:
        bars = "sealed" if s.bars is None else f"{s.bars:,}"
        table.add_row(s.id, s.title, " ".join(s.symbols), s.interval, bars)
    return table


def grade_table(grade: GradeResult) -> Table:
    table = Table(title=f"Grade of {grade.session} on {grade.scenario.id}", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    metrics = grade.metrics.to_json()
    for name, value in metrics.items():
        table.add_row(name, "—" if value is None else str(value))
    for check in grade.conformance.checks:
        mark = "pass" if check.passed else "FAIL"
        table.add_row(f"check {check.id}", f"{mark}  {check.detail}".strip())
    table.add_row("passed", "yes" if grade.passed else "NO")
    table.add_row("record", grade.record)
    table.add_row("head", grade.head)
    table.add_row("grade root", grade.root)
    return table


def progress_bar(label: str, quiet: bool) -> Progress:
    """The bar a long CLI wait shows (gone when done; none with ``--quiet``)."""
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        disable=quiet,
        console=stdout(),
    )
