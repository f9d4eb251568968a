"""Secret-store tests never reach the operator's real OS keyring.

keyring is pinned to its ``fail`` backend in this process and, through
``PYTHON_KEYRING_BACKEND``, in every subprocess; a test that wants a working keyring
installs one explicitly (``memory_keyring``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import keyring
import pytest
from jaraco.classes import properties
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import PasswordDeleteError


class MemoryKeyring(KeyringBackend):
    """A recommended (priority 1) backend holding passwords in a dict.

    keyring registers every backend subclass globally; ``priority`` raises unless a test
    has switched the class on, so keyring's own detection never picks this one.
    """

    enabled: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.entries: dict[tuple[str, str], str] = {}
        self.tamper: str | None = None

    @properties.classproperty
    def priority(cls) -> float:
        if not cls.enabled:
            raise RuntimeError("test-only backend")
        return 1

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        # ``tamper`` simulates a backend that silently stores something else.
        self.entries[(service, username)] = password if self.tamper is None else self.tamper

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.entries[(service, username)]
        except KeyError:
            raise PasswordDeleteError(username) from None


@pytest.fixture(autouse=True)
def _no_real_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """A fresh in-memory keyring installed as keyring's current backend."""
    MemoryKeyring.enabled = True
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        MemoryKeyring.enabled = False
