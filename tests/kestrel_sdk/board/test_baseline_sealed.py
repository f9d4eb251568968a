"""A board's buy-and-hold baseline on a scenario sealed in the builder's catalog says so.

The baseline trades the tape to its end, which a sealed scenario does not serve: the
board said ``could not be traded: KeyError`` (and logged a traceback). It now names the
seal, and still shows no figure of the hidden tape.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kestrel_sdk.board import buy_and_hold
from kestrel_sdk.runtime.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"


def test_the_baseline_on_a_sealed_scenario_names_the_seal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "catalog" / "acme-sealed"
    directory.mkdir(parents=True)
    shutil.copy(SHIPPED / "acme-trend" / "tape.csv", directory / "tape.csv")
    toml = (SHIPPED / "acme-trend" / "scenario.toml").read_text("utf-8")
    toml = "sealed = true\n" + toml.replace('id = "acme-trend"', 'id = "acme-sealed"')
    (directory / "scenario.toml").write_text(toml, "utf-8")
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(tmp_path / "catalog"))
    loaded = load_catalog().get("acme-sealed")
    assert loaded is not None
    baseline = buy_and_hold("acme-sealed", loaded.scenario.root)
    assert baseline.metrics is None
    assert baseline.grade is None
    assert baseline.why == "sealed in this machine's catalog: its tape's end is not served"
