"""Shared test configuration: async tests run on asyncio through anyio's plugin; the
suite and each test have a home of their own."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import (
    postgres,
    started_home,  # noqa: F401  (read HOME now, before it is pointed away)
)
from tests.doors import Door
from tests.peers import INSTALL_SERVICES, require_peer
from tests.postgres import Cluster
from tests.stdio_pipe import Stdio, stdio_beside_a_door


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _isolate(patch: pytest.MonkeyPatch, home: Path) -> None:
    """Point ``HOME`` at ``home`` (so ``~/.kestrel`` is ``home/.kestrel``) and drop the
    operator's Kestrel settings and keyring."""
    patch.setenv("HOME", str(home))
    patch.setenv("KESTREL_HOME", str(home / ".kestrel"))
    patch.delenv("KESTREL_CATALOG_PATH", raising=False)
    patch.delenv("KESTREL_REMOTE", raising=False)
    patch.delenv("KESTREL_API_TOKEN", raising=False)
    patch.delenv("KESTREL_STORE", raising=False)
    patch.delenv("KESTREL_SECRET_STORE", raising=False)
    # Subprocesses never reach a real OS keyring either (auto selection then uses the file).
    patch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")


def pytest_configure(config: pytest.Config) -> None:
    """Before any test module is imported or any fixture runs, the suite has a home of its
    own: what a module's import or a module- or session-wide fixture writes under ``~``
    (a catalog's remembered shapes, a store) goes there, never to the operator's
    ``~/.kestrel`` (``tests/test_suite_home.py``)."""
    home = Path(tempfile.mkdtemp(prefix="kestrel-suite-home-"))
    patch = pytest.MonkeyPatch()
    _isolate(patch, home)
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))
    config.add_cleanup(patch.undo)


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test has a home of its own (see :func:`pytest_configure` for the rest)."""
    _isolate(monkeypatch, tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """One throwaway PostgreSQL cluster for the whole run (``tests/postgres.py``).

    Skipped locally, with the install command, when PostgreSQL is absent; under
    ``CI=true`` that is a failure: CI installs it (``.ci/services``) and requires it.
    """
    why = postgres.missing()
    require_peer(None if why else True, what=f"PostgreSQL ({why})", install=INSTALL_SERVICES)
    with postgres.cluster() as started:
        yield started


@pytest.fixture
def postgres_dsn(postgres_cluster: Cluster) -> str:
    """A DSN whose tables live in a fresh schema of the shared cluster (one per test)."""
    return postgres_cluster.schema()


@pytest.fixture(scope="module")
def stdio_and_door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stdio, Door]]:
    """``kestrel-mcp`` on a pipe and the door on loopback, for one test module."""
    homes = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("door")
    with stdio_beside_a_door(*homes) as faces:
        yield faces
