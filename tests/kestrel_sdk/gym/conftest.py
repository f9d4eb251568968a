"""A small shortable daily scenario for the env's tests (fast episodes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_sdk.scenarios import ScenarioTermsInput, scenario_from_file

BARS = 40


def day_text(day: int) -> str:
    month, rest = divmod(day, 28)
    return f"2024-{month + 1:02d}-{rest + 1:02d}"


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """A 40-bar daily scenario ``zig`` (ZIG zig-zags between 100 and 120), shortable.

    Odd bars open 1 below their close, even bars 1 above."""
    lines = ["Date,Open,High,Low,Close,Volume"]
    for day in range(BARS):
        close = 100 + 2 * (day % 10 if (day // 10) % 2 == 0 else 10 - day % 10)
        open_ = close - 1 if day % 2 else close + 1
        lines.append(f"{day_text(day)},{open_},{close + 1},{close - 2},{close},100000")
    source = tmp_path / "ZIG.csv"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    terms = ScenarioTermsInput(shortable=True)
    scenario_from_file(source, "zig", terms=terms).write(tmp_path / "catalog" / "zig")
    return tmp_path / "catalog"
