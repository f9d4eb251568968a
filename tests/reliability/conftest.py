"""Reliability suite configuration: long variants are opt-in, the support kit is a fixture.

Slow tests (``@pytest.mark.slow``) run only when asked for: ``-m slow`` (or any ``-m``
expression naming ``slow``) or ``KESTREL_SLOW=1``. A plain ``pytest`` run, as CI does,
gets the bounded variants only.
"""

from __future__ import annotations

import importlib.util
import os
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


def slow_enabled(config: pytest.Config) -> bool:
    markexpr = str(config.getoption("markexpr", "") or "")
    return "slow" in markexpr.replace("not slow", "") or os.environ.get("KESTREL_SLOW") == "1"


@pytest.fixture(autouse=True)
def _slow_is_opt_in(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("slow") is not None and not slow_enabled(request.config):
        pytest.skip("long variant: run with -m slow or KESTREL_SLOW=1")


@pytest.fixture
def rs() -> ModuleType:
    """The support kit (``support.py``)."""
    return load_module("support")


@pytest.fixture
def strat() -> ModuleType:
    """The hypothesis strategies (``strategies.py``)."""
    return load_module("strategies")
