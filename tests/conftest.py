"""Shared test configuration: async tests run on asyncio through anyio's plugin."""

from __future__ import annotations

import pytest


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
    monkeypatch.delenv("KESTREL_SECRET_STORE", raising=False)
    # Subprocesses never reach a real OS keyring either (auto selection then uses the file).
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
