"""Shared test configuration: async tests run on asyncio through anyio's plugin."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import postgres
from tests.doors import Door
from tests.peers import INSTALL_SERVICES, require_peer
from tests.postgres import Cluster
from tests.stdio_pipe import Stdio, stdio_beside_a_door


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test touches the operator's real ~/.kestrel or keyring."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KESTREL_HOME", str(home / ".kestrel"))
    monkeypatch.delenv("KESTREL_CATALOG_PATH", raising=False)
    monkeypatch.delenv("KESTREL_REMOTE", raising=False)
    monkeypatch.delenv("KESTREL_API_TOKEN", raising=False)
    monkeypatch.delenv("KESTREL_STORE", raising=False)
    monkeypatch.delenv("KESTREL_SECRET_STORE", raising=False)
    # Subprocesses never reach a real OS keyring either (auto selection then uses the file).
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")


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
