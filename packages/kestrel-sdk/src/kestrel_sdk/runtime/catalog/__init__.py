"""The catalog: shipped and user scenarios, their tapes as shared compact columns."""

from __future__ import annotations

from .builder import build_loaded_scenario
from .embedded import load_embedded
from .loader import CATALOG_PATH_ENV, catalog_entries, check_catalog, load_catalog, tape_csv
from .model import CatalogIndex, CatalogProblem, LoadedScenario, SymbolColumns, Tape
from .served import ServedCatalog
from .shipped import ShippedTapeError

__all__ = [
    "CATALOG_PATH_ENV",
    "CatalogIndex",
    "CatalogProblem",
    "LoadedScenario",
    "ServedCatalog",
    "ShippedTapeError",
    "SymbolColumns",
    "Tape",
    "build_loaded_scenario",
    "catalog_entries",
    "check_catalog",
    "load_catalog",
    "load_embedded",
    "tape_csv",
]
