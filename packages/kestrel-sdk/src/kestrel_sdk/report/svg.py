"""Inline SVG line charts: no script, no network, readable in any browser or viewer.

Long tapes are downsampled per pixel column to that column's first, min, max and last
point, which keeps every spike (a crash still shows) while drawing ~4 points a column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["Chart", "Marker", "downsample", "line_chart"]


@dataclass(frozen=True, slots=True)
class Marker:
    """A point drawn on top of a line (a fill)."""

    index: int
    value: float
    up: bool
    title: str


@dataclass(frozen=True, slots=True)
class Chart:
    """Geometry shared by the charts on one page."""

    width: int = 960
    height: int = 240
    pad_left: int = 64
    pad_right: int = 12
    pad_top: int = 12
    pad_bottom: int = 24


def downsample(values: Sequence[float], columns: int) -> list[tuple[int, float]]:
    """(index, value) points that draw like the full series at ``columns`` pixels wide."""
    n = len(values)
    if n <= columns * 4:
        return list(enumerate(values))
    points: list[tuple[int, float]] = []
    per = n / columns
    for col in range(columns):
        lo, hi = int(col * per), min(n, int((col + 1) * per))
        if lo >= hi:
            continue
        segment = values[lo:hi]
        imin = lo + min(range(hi - lo), key=segment.__getitem__)
        imax = lo + max(range(hi - lo), key=segment.__getitem__)
        for idx in sorted({lo, imin, imax, hi - 1}):
            points.append((idx, values[idx]))
    return points


def line_chart(
    series: Sequence[float],
    *,
    chart: Chart,
    color: str,
    label: str,
    css_id: str,
    markers: Sequence[Marker] = (),
    fill_below: bool = False,
    value_format: str = "{:,.2f}",
    span_labels: tuple[str, str] | None = None,
) -> str:
    """An SVG element with one polyline, its y-axis extremes, optional markers, and the
    first and last bar's time under the x axis (``span_labels``)."""
    if not series:
        return f'<svg id="{css_id}" class="chart" role="img" aria-label="{escape(label)}"></svg>'
    inner_w = chart.width - chart.pad_left - chart.pad_right
    inner_h = chart.height - chart.pad_top - chart.pad_bottom
    lo, hi = min(series), max(series)
    for m in markers:
        lo, hi = min(lo, m.value), max(hi, m.value)
    span = (hi - lo) or 1.0
    last = max(1, len(series) - 1)

    def x(i: int) -> float:
        return chart.pad_left + inner_w * i / last

    def y(v: float) -> float:
        return chart.pad_top + inner_h * (1 - (v - lo) / span)

    pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in downsample(series, inner_w))
    parts = [
        f'<svg id="{css_id}" class="chart" viewBox="0 0 {chart.width} {chart.height}" '
        f'role="img" aria-label="{escape(label)}">',
        f'<text x="4" y="{chart.pad_top + 10}" class="axis">{value_format.format(hi)}</text>',
        f'<text x="4" y="{chart.height - chart.pad_bottom}" class="axis">'
        f"{value_format.format(lo)}</text>",
    ]
    if fill_below:
        base = chart.pad_top + inner_h
        parts.append(
            f'<polygon points="{x(0):.1f},{base:.1f} {pts} {x(last):.1f},{base:.1f}" '
            f'fill="{color}" fill-opacity="0.15" stroke="none"/>'
        )
    parts.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="1.5"/>')
    if span_labels is not None:
        base = chart.height - 6
        parts.append(
            f'<text x="{chart.pad_left}" y="{base}" class="axis">{escape(span_labels[0])}</text>'
            f'<text x="{chart.width - chart.pad_right}" y="{base}" class="axis" '
            f'text-anchor="end">{escape(span_labels[1])}</text>'
        )
    for m in markers:
        cx, cy = x(m.index), y(m.value)
        tip = cy + 7 if m.up else cy - 7
        mark_color = "#1a7f37" if m.up else "#cf222e"
        parts.append(
            f'<path class="fill-marker" d="M{cx - 4:.1f},{tip:.1f} L{cx + 4:.1f},{tip:.1f} '
            f'L{cx:.1f},{cy:.1f} Z" fill="{mark_color}"><title>{escape(m.title)}</title></path>'
        )
    parts.append("</svg>")
    return "".join(parts)
