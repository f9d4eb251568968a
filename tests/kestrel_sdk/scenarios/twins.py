"""A disguise's twin of a source, made with the tests' fixed secret, and backtesting.py's
bar files to import as sources. Shared by the disguise calendar and grid tests."""

from __future__ import annotations

from pathlib import Path

from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.model import LoadedScenario
from kestrel_sdk.scenarios import disguise_scenario

__all__ = ["SECRET", "backtesting_bars", "disguised_twin"]

SECRET = bytes(range(32))


def backtesting_bars(name: str) -> Path:
    """backtesting.py's bar file ``name`` (``GOOG``, ``EURUSD``, ``BTCUSD`` …)."""
    import backtesting.test  # type: ignore[import-untyped]

    return Path(backtesting.test.__file__).with_name(f"{name}.csv")


def disguised_twin(source: LoadedScenario, directory: Path) -> LoadedScenario:
    """``source`` disguised as ``tape-z9`` with ``SECRET``, written under ``directory``
    and loaded back."""
    disguise_scenario(source, "tape-z9", SECRET).write(directory / "tape-z9")
    loaded = load_catalog([directory]).get("tape-z9")
    assert loaded is not None
    return loaded
