"""Reliability suite fixtures: the support kit and the strategies, loaded by path.

Long variants are marked ``@pytest.mark.slow``; the root configuration deselects them
by default (``-m "not slow"`` in addopts), so CI runs the bounded ones and
``pytest tests/reliability -m slow`` runs the long ones.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent


def load_module(stem: str) -> ModuleType:
    """A sibling module by path (tests run in importlib mode, so there is no package)."""
    name = f"kestrel_reliability_{stem}"
    found = sys.modules.get(name)
    if found is not None:
        return found
    spec = importlib.util.spec_from_file_location(name, HERE / f"{stem}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def rs() -> ModuleType:
    """The support kit (``support.py``)."""
    return load_module("support")


@pytest.fixture
def strat() -> ModuleType:
    """The hypothesis strategies (``strategies.py``)."""
    return load_module("strategies")
