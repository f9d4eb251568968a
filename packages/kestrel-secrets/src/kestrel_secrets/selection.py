"""Which store holds the operator's secrets: ``KESTREL_SECRET_STORE=keyring|file|auto``.

``auto`` (the default) prefers the OS keyring, which encrypts at rest and unlocks with
the login, and falls back to the 0600 file only when no usable keyring backend exists;
the choice and its reason are kept so ``kestrel secrets path`` can say which.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from kestrel_protocol import RefusalCode, kestrel_home
from kestrel_protocol.ports import SecretStore

from .errors import SecretStoreError
from .file_store import DotenvSecretStore
from .keyring_store import KeyringSecretStore, keyring_backend_status

__all__ = ["SECRET_STORE_ENV", "SecretStoreChoice", "open_secret_store", "select_secret_store"]

SECRET_STORE_ENV = "KESTREL_SECRET_STORE"
KEYRING_LOCK_NAME = ".keyring-index.lock"


@dataclass(frozen=True, slots=True)
class SecretStoreChoice:
    """The opened store, which kind it is, the mode that asked for it, and why."""

    store: SecretStore
    kind: Literal["keyring", "file"]
    mode: Literal["keyring", "file", "auto"]
    reason: str

    def to_json(self) -> dict[str, str]:
        """The choice as ``kestrel secrets path --json`` prints it."""
        return {
            "store": self.kind,
            "path": self.store.location,
            "mode": self.mode,
            "reason": self.reason,
        }


def select_secret_store(
    home: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> SecretStoreChoice:
    """Open the store ``KESTREL_SECRET_STORE`` asks for and say why it was chosen.

    ``keyring`` refuses with ``SECRET_STORE_UNAVAILABLE`` when no usable backend exists
    rather than silently writing a file the operator did not ask for; ``auto`` falls
    back to the file in that case. An unknown mode is refused, never guessed.
    """
    environ = os.environ if env is None else env
    base = kestrel_home(home, environ)
    raw = environ.get(SECRET_STORE_ENV, "").strip().lower() or "auto"
    if raw == "file":
        return SecretStoreChoice(
            DotenvSecretStore(base / ".env"), "file", "file", f"{SECRET_STORE_ENV}=file"
        )
    if raw not in ("keyring", "auto"):
        raise SecretStoreError(
            RefusalCode.SECRET_STORE_UNAVAILABLE,
            f"{SECRET_STORE_ENV} must be keyring, file or auto (got {raw!r})",
            {"env": SECRET_STORE_ENV},
        )
    mode: Literal["keyring", "auto"] = "keyring" if raw == "keyring" else "auto"
    backend, why = keyring_backend_status(environ)
    if backend is not None:
        store = KeyringSecretStore(backend=backend, lock_path=base / KEYRING_LOCK_NAME)
        return SecretStoreChoice(store, "keyring", mode, f"{SECRET_STORE_ENV}={mode}: {why}")
    if mode == "keyring":
        raise SecretStoreError(
            RefusalCode.SECRET_STORE_UNAVAILABLE,
            f"{SECRET_STORE_ENV}=keyring but {why}; install or unlock an OS keyring, "
            f"or set {SECRET_STORE_ENV}=file",
            {"path": "keyring:kestrel"},
        )
    return SecretStoreChoice(
        DotenvSecretStore(base / ".env"),
        "file",
        "auto",
        f"{SECRET_STORE_ENV}=auto: {why}, so the file store is used",
    )


def open_secret_store(
    home: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> SecretStore:
    """The operator's secret store, as :func:`select_secret_store` chooses it."""
    return select_secret_store(home, env).store
