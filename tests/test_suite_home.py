"""The suite never writes under the ``HOME`` it was started with: a developer's real
``~/.kestrel`` is untouched by a test run.

Each test has a home of its own (``tests/conftest.py``), and so does the suite as a whole
for what runs outside a test: a module's import, a module- or session-wide fixture (here:
one that lists a user scenario, so its tape's shape is remembered in the default home).

Was: such a fixture ran before any test's home was set, so the shapes went to the real
``~/.kestrel/catalog-shapes`` (the module fixtures of the board, catalog and engine tests).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kestrel_protocol import kestrel_home
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.runtime.catalog.shapes import remembered_shape

from tests.user_scenario import write_user_scenario

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def listed_by_a_module_fixture(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A user scenario listed by a module-wide fixture (no home named: its shape is
    remembered in the default home): that home, and the scenario's directory."""
    directory = write_user_scenario(tmp_path_factory.mktemp("catalog"), "mine")
    assert load_catalog([directory.parent]).get("mine") is not None
    return kestrel_home(), directory


def test_a_module_fixture_remembers_in_a_home_of_the_suites(
    listed_by_a_module_fixture: tuple[Path, Path],
) -> None:
    home, directory = listed_by_a_module_fixture
    toml = (directory / "scenario.toml").read_bytes()
    assert remembered_shape(home, directory / "tape.csv", toml) is not None


def test_nothing_is_written_under_the_home_the_suite_started_with(tmp_path: Path) -> None:
    """The module above, run by pytest with a fresh ``HOME`` (``KESTREL_HOME`` unset, so
    ``~/.kestrel`` is the default home): afterwards that ``HOME`` is still empty."""
    started = tmp_path / "started"
    started.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env["HOME"] = str(started)
    probe = test_a_module_fixture_remembers_in_a_home_of_the_suites.__name__
    node = f"{Path(__file__).relative_to(ROOT)}::{probe}"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", node],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(str(p.relative_to(started)) for p in started.rglob("*")) == []
