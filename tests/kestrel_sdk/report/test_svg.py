from __future__ import annotations

import re

from kestrel_sdk.report.svg import Chart, Marker, downsample, line_chart


def test_downsample_keeps_every_extreme_of_a_long_series() -> None:
    series = [100.0 + (i % 7) for i in range(200_000)]
    series[123_456] = 10.0  # a crash that lasts one bar
    series[54_321] = 500.0  # a spike that lasts one bar
    points = downsample(series, 900)
    values = [v for _, v in points]
    assert len(points) <= 900 * 4
    assert min(values) == 10.0
    assert max(values) == 500.0
    assert points[0] == (0, series[0])
    assert points[-1] == (len(series) - 1, series[-1])
    assert [i for i, _ in points] == sorted(i for i, _ in points)


def test_short_series_are_drawn_in_full() -> None:
    series = [1.0, 2.0, 3.0]
    assert downsample(series, 900) == [(0, 1.0), (1, 2.0), (2, 3.0)]


def test_every_marker_is_drawn_even_on_a_downsampled_line() -> None:
    series = [float(i) for i in range(50_000)]
    markers = [Marker(i, float(i), i % 2 == 0, f"fill {i}") for i in range(0, 50_000, 97)]
    svg = line_chart(series, chart=Chart(), color="#000", label="x", css_id="x", markers=markers)
    assert svg.count('class="fill-marker"') == len(markers)
    assert len(re.findall(r"<title>fill \d+</title>", svg)) == len(markers)


def test_the_x_axis_names_the_first_and_last_bar() -> None:
    svg = line_chart(
        [1.0, 2.0, 3.0],
        chart=Chart(),
        color="#000",
        label="x",
        css_id="x",
        span_labels=("2010-01-04T00:00:00Z", "2019-08-30T00:00:00Z"),
    )
    assert ">2010-01-04T00:00:00Z</text>" in svg
    assert 'text-anchor="end">2019-08-30T00:00:00Z</text>' in svg
