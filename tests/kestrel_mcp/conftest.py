"""Fixtures for the MCP face: the scripted runtime module the faces run behind."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.kestrel_mcp import acme_script


@pytest.fixture
def acme() -> ModuleType:
    return acme_script
