"""A small shortable daily scenario for the env's tests (fast episodes), and copies of
the shipped two-symbol ``pairs-kx`` as user scenarios."""

from __future__ import annotations

from importlib import resources
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


def copy_pairs(
    catalog: Path, scenario_id: str, *, warp_after: int | None = None, shortable: bool = True
) -> None:
    """``pairs-kx`` as ``scenario_id`` in ``catalog``; with ``warp_after``, every bar
    after that one has prices tripled and volume times seven; ``shortable=False`` makes
    its account a long-only one."""
    shipped = resources.files("kestrel_sdk.catalog_data") / "pairs-kx"
    toml = shipped.joinpath("scenario.toml").read_text(encoding="utf-8")
    lines = shipped.joinpath("tape.csv").read_text(encoding="utf-8").splitlines()
    times: list[str] = []
    out = [lines[0]]
    for line in lines[1:]:
        time, symbol, *prices, volume = line.split(",")
        if not times or times[-1] != time:
            times.append(time)
        if warp_after is not None and len(times) - 1 > warp_after:
            prices = [_tripled(p) for p in prices]
            volume = str(int(volume) * 7)
        out.append(",".join([time, symbol, *prices, volume]))
    folder = catalog / scenario_id
    folder.mkdir(parents=True)
    folder.joinpath("scenario.toml").write_text(
        toml.replace('id = "pairs-kx"', f'id = "{scenario_id}"').replace(
            "shortable = true", f"shortable = {str(shortable).lower()}"
        ),
        encoding="utf-8",
    )
    folder.joinpath("tape.csv").write_text("\n".join(out) + "\n", encoding="utf-8")


def _tripled(price: str) -> str:
    """``price`` tripled, exactly (two decimals stay two)."""
    whole, _, cents = price.partition(".")
    value = (int(whole) * 100 + int(cents.ljust(2, "0"))) * 3
    return f"{value // 100}.{value % 100:02d}"
