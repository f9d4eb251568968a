"""Fixtures for the MCP face: the fake transport module and a server over it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent


def load_fake() -> ModuleType:
    """Load ``fake_transport.py`` by path (tests run in importlib mode, no package)."""
    name = "kestrel_mcp_tests_fake_transport"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / "fake_transport.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fake() -> ModuleType:
    return load_fake()
