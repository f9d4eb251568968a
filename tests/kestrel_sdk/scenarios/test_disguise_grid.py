"""A disguise's prices and volumes do not keep the source's grids (issue 48).

The disguised tick was chosen for 10,000 ticks at the lowest price, finer than the
source's tick times the secret factor on most tapes: every disguised price then sat on
a scaled copy of the source's grid, whose spacing an agent finds from the tape alone,
and dividing by it gave back every source price (acme-trend's lowest, 37.32; GOOG's,
95.96); so did its volumes (GOOG's in hundreds). The tick and the volume step are now
never finer than the factor times the source's grid. A disguise made under the earlier
rule keeps its ticks: its reveal still opens it, and so does one rebuilt from its secret.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from math import gcd
from pathlib import Path

import pytest
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.disguise import DisguiseTransform, disguise_transform
from kestrel_sdk.runtime.catalog.model import LoadedScenario, Tape
from kestrel_sdk.runtime.catalog.reveal import check_reveal
from kestrel_sdk.scenarios import disguise_scenario, scenario_from_file

from tests.kestrel_sdk.scenarios.twins import SECRET, backtesting_bars, disguised_twin


def _source(name: str, tmp_path: Path) -> LoadedScenario:
    """A shipped scenario, or one of backtesting.py's bar files imported."""
    if name.isupper():
        scenario_from_file(backtesting_bars(name), name.lower()).write(tmp_path / name.lower())
        loaded = load_catalog([tmp_path]).get(name.lower())
    else:
        loaded = load_catalog([]).get(name)
    assert loaded is not None
    return loaded


def _grid_spacings(prices: set[int]) -> list[int]:
    """An agent's attack on a disguise, from its tape alone: the ``k`` for which every
    price ``n`` (in disguised ticks) is ``round(c * m)`` for some whole ``m`` and one
    spacing ``c`` of at least two ticks, ``c`` near ``lowest / k``: the source's price
    grid, scaled. Such a ``k`` is the source's lowest price in its grid's units, and
    ``n / c`` gives back every source price."""
    ordered = sorted(prices)
    lowest = ordered[0]
    for k in range(1, lowest // 2 + 1):
        low, high = Fraction(2 * lowest - 1, 2 * k), Fraction(2 * lowest + 1, 2 * k)
        for n in ordered:  # narrow the spacings that put every price on the grid
            m = round(n * 2 / (low + high))
            low = max(low, Fraction(2 * n - 1, 2 * m))
            high = min(high, Fraction(2 * n + 1, 2 * m))
            if low > high:
                break
        else:
            return [k]
    return []


@pytest.mark.parametrize("name", ["GOOG", "BTCUSD", "acme-trend", "acme-chop", "pairs-kx"])
def test_the_disguised_prices_do_not_keep_the_source_tick_grid(name: str, tmp_path: Path) -> None:
    twin = disguised_twin(_source(name, tmp_path / "source"), tmp_path / "twin")
    for instrument in twin.scenario.instruments:
        columns = twin.tape.columns[instrument.symbol]
        prices = {v for c in (columns.open, columns.high, columns.low, columns.close) for v in c}
        unit = Decimal(instrument.tick).scaleb(twin.tape.scale)  # one tick, in tape units
        ticks = {v // int(unit) for v in prices}
        assert _grid_spacings(ticks) == [], instrument.symbol


@pytest.mark.parametrize("name", ["GOOG", "acme-trend", "pairs-kx"])
def test_the_disguised_volumes_do_not_keep_the_source_volume_grid(
    name: str, tmp_path: Path
) -> None:
    """GOOG's volumes are in hundreds: scaled by one secret factor and rounded to whole
    shares, they sat on a grid whose spacing gave back every source volume (840900,
    its lowest, exactly)."""
    twin = disguised_twin(_source(name, tmp_path / "source"), tmp_path / "twin")
    for symbol in twin.tape.symbols:
        volumes = twin.tape.columns[symbol].volume
        step = gcd(*volumes)  # the disguise's own step, a power of ten: not the source's
        assert _grid_spacings({v // step for v in volumes if v}) == [], symbol


def _finer(transform: DisguiseTransform) -> DisguiseTransform:
    """The transform with each tick a hundred times finer and volumes to one share (the
    earlier rule's kind)."""
    parts = tuple(
        replace(part, tick=f"{Decimal(part.tick).scaleb(-2):f}", volume_tick="1")
        for part in transform.symbols
    )
    return replace(transform, symbols=parts)


def test_a_disguise_made_under_the_earlier_tick_rule_still_opens_with_its_reveal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _source("acme-trend", tmp_path / "source")
    catalog = tmp_path / "catalog"
    monkeypatch.setattr(
        "kestrel_sdk.scenarios.disguised.disguise_transform",
        lambda tape, secret: _finer(disguise_transform(tape, secret)),
    )
    made = disguise_scenario(source, "tape-z9", SECRET)
    monkeypatch.undo()
    made.write(catalog / "tape-z9")
    twin = load_catalog([catalog]).get("tape-z9")
    assert twin is not None
    assert twin.scenario.instruments[0].tick == made.reveal["transform"]["symbols"][0]["tick"]
    check_reveal(twin, made.reveal, source)  # raises naming what differs

    # rebuilt from the secret (`kestrel scenario reveal --secret-file F --source SRC`)
    (tmp_path / "secret").write_text(SECRET.hex())
    env = {
        **os.environ,
        "KESTREL_HOME": str(tmp_path / "home"),
        "KESTREL_CATALOG_PATH": str(catalog),
    }
    command = [sys.executable, "-c", "from kestrel_sdk.cli import main; main()"]
    rebuilt = subprocess.run(
        [
            *command,
            "scenario",
            "reveal",
            "tape-z9",
            "--secret-file",
            str(tmp_path / "secret"),
            "--source",
            "acme-trend",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads(rebuilt.stdout)["commitment"] == made.reveal["commitment"]


def test_the_tick_is_never_finer_than_the_factor_times_the_source_grid() -> None:
    source = load_catalog([]).get("acme-trend")
    assert source is not None
    tape: Tape = source.tape
    (part,) = disguise_transform(tape, SECRET).symbols
    grid = Decimal(part.factor) * Decimal(1).scaleb(-tape.scale)  # acme-trend's grid: 0.01
    assert Decimal(part.tick) >= grid
    assert Decimal(part.tick) < grid * 10
