"""Fixtures for the MCP face: the fake transport module and a server over it."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.kestrel_mcp import fake_transport


@pytest.fixture
def fake() -> ModuleType:
    return fake_transport
