"""A factory for user scenario directories on disk (``scenario.toml`` + ``tape.csv``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.user_scenario import TAPE, TOML, write_user_scenario

MakeScenario = Callable[..., Path]


@pytest.fixture
def good_toml() -> str:
    """The valid scenario.toml template (``{id}`` is filled in)."""
    return TOML


@pytest.fixture
def good_tape() -> str:
    return TAPE


@pytest.fixture
def make_scenario() -> MakeScenario:
    """``make_scenario(parent, id, tape=..., toml=..., tape_bytes=...)`` → the directory."""
    return write_user_scenario
