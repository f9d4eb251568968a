"""``KeyringSecretStore``: values in the OS keyring (macOS Keychain, Windows Credential
Locker, Secret Service/KWallet) through the ``keyring`` package.

An OS keyring cannot list the entries of a service portably, so the store keeps a name
index (a JSON array of key names) under a reserved entry whose name, ``kestrel.index``,
can never match the key grammar and so never collide with a key.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import keyring
import keyring.core
from filelock import FileLock, Timeout
from kestrel_protocol import RefusalCode
from kestrel_protocol.ports import SecretWrite
from keyring.backend import KeyringBackend
from keyring.backends import fail, null
from keyring.errors import KeyringError, PasswordDeleteError
from keyring.util import platform_

from .errors import SecretStoreError
from .keys import check_operator_secret_key, check_secret_key_name, check_secret_value
from .private_files import FILE_MODE, ensure_private_dir

__all__ = ["INDEX_ENTRY", "KeyringSecretStore", "keyring_backend_status"]

log = logging.getLogger("kestrel_secrets")

INDEX_ENTRY = "kestrel.index"
_HINT = "set KESTREL_SECRET_STORE=file to keep secrets in $KESTREL_HOME/.env instead"


def _name(backend: KeyringBackend) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def _explicitly_configured(env: Mapping[str, str]) -> bool:
    if env.get("PYTHON_KEYRING_BACKEND"):
        return True
    try:
        return (Path(platform_.config_root()) / "keyringrc.cfg").is_file()
    except Exception:  # pragma: no cover - keyring internals moved
        return False


def keyring_backend_status(
    env: Mapping[str, str] | None = None,
) -> tuple[KeyringBackend | None, str]:
    """The keyring backend Kestrel would use, or ``None``, and a sentence saying why.

    Usable means ``keyring`` recommends it (priority >= 1), or the operator chose it
    explicitly (``PYTHON_KEYRING_BACKEND`` or ``keyringrc.cfg``). keyring's ``fail`` and
    ``null`` backends (what a headless Linux box gets) are never usable.
    """
    environ = os.environ if env is None else env
    try:
        backend = keyring.get_keyring()
    except Exception as exc:
        return None, f"keyring could not load a backend ({type(exc).__name__}: {exc})"
    name = _name(backend)
    if isinstance(backend, fail.Keyring | null.Keyring):
        return None, f"no recommended OS keyring backend is available (keyring chose {name})"
    if keyring.core.recommended(backend):
        return backend, f"recommended OS keyring backend {name}"
    if _explicitly_configured(environ):
        return backend, f"keyring backend {name}, configured explicitly by the operator"
    return None, (
        f"no recommended OS keyring backend is available (only {name}, which keyring "
        "does not recommend)"
    )


def _unavailable(message: str, service: str) -> SecretStoreError:
    return SecretStoreError(
        RefusalCode.SECRET_STORE_UNAVAILABLE, message, {"path": f"keyring:{service}"}
    )


class KeyringSecretStore:
    """A ``SecretStore`` over the OS keyring, service ``kestrel`` by default.

    ``backend`` pins a backend (tests, embedding); without it the store uses keyring's
    configured backend and refuses with ``SECRET_STORE_UNAVAILABLE`` when that is not a
    usable one. ``lock_path`` names a file lock that serialises index updates across
    processes (``open_secret_store`` puts it in ``$KESTREL_HOME``); without one, index
    updates are only safe within one process.
    """

    def __init__(
        self,
        service: str = "kestrel",
        *,
        backend: KeyringBackend | None = None,
        lock_path: str | os.PathLike[str] | None = None,
        lock_timeout: float = 60.0,
    ) -> None:
        if backend is None:
            backend, reason = keyring_backend_status()
            if backend is None:
                raise _unavailable(f"{reason}; {_HINT}", service)
        elif isinstance(backend, fail.Keyring | null.Keyring):
            raise _unavailable(
                f"no recommended OS keyring backend is available ({_name(backend)}); {_HINT}",
                service,
            )
        self._backend = backend
        self._service = service
        self._lock_path = None if lock_path is None else Path(lock_path)
        self._lock_timeout = lock_timeout

    @property
    def location(self) -> str:
        """``keyring:<service>``: where every write result says the value went."""
        return f"keyring:{self._service}"

    @property
    def backend(self) -> KeyringBackend:
        """The keyring backend in use."""
        return self._backend

    def __repr__(self) -> str:
        return f"KeyringSecretStore({self._service!r}, backend={_name(self._backend)})"

    @contextmanager
    def _index_lock(self) -> Iterator[None]:
        if self._lock_path is None:
            yield
            return
        ensure_private_dir(self._lock_path.parent)
        lock = FileLock(self._lock_path, timeout=self._lock_timeout, mode=FILE_MODE)
        try:
            lock.acquire()
        except Timeout:
            raise _unavailable(
                f"another process has held {self._lock_path} for {self._lock_timeout:g}s; "
                "try again",
                self._service,
            ) from None
        try:
            yield
        finally:
            lock.release()

    def _fault(self, action: str, exc: BaseException) -> SecretStoreError:
        # Only the exception type: a backend's message is not ours to vouch for.
        return _unavailable(
            f"the OS keyring ({_name(self._backend)}) failed to {action} "
            f"({type(exc).__name__}); {_HINT}",
            self._service,
        )

    def _get(self, entry: str, action: str) -> str | None:
        try:
            return self._backend.get_password(self._service, entry)
        except (KeyringError, RuntimeError, OSError) as exc:
            raise self._fault(action, exc) from None

    def _put(self, entry: str, value: str, action: str) -> None:
        try:
            self._backend.set_password(self._service, entry, value)
            stored = self._backend.get_password(self._service, entry)
        except (KeyringError, RuntimeError, OSError) as exc:
            raise self._fault(action, exc) from None
        if stored != value:
            raise _unavailable(
                f"the OS keyring ({_name(self._backend)}) did not keep {action}: "
                "reading it back gave something else",
                self._service,
            )

    def _read_index(self) -> list[str]:
        raw = self._get(INDEX_ENTRY, "read the name index")
        if raw is None:
            return []
        try:
            names = json.loads(raw)
        except ValueError:
            names = None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _unavailable(
                f"the name index entry {INDEX_ENTRY!r} of service {self._service!r} is "
                "corrupt; delete it (e.g. `keyring del "
                f"{self._service} {INDEX_ENTRY}`) and set the keys again",
                self._service,
            )
        return sorted(set(names))

    def _write_index(self, names: set[str]) -> None:
        self._put(INDEX_ENTRY, json.dumps(sorted(names)), "the name index")

    def set(self, key: str, value: str) -> SecretWrite:
        """Store ``value`` under ``key``, read it back, then record the name."""
        check_operator_secret_key(key)
        check_secret_value(value)
        with self._index_lock():
            self._put(key, value, f"the value of {key}")
            names = set(self._read_index())
            if key not in names:
                self._write_index(names | {key})
        log.debug("set %s in %s", key, self.location)
        return SecretWrite(key=key, path=self.location)

    def unset(self, key: str) -> SecretWrite:
        """Delete ``key`` and drop it from the index; ``removed`` says whether it existed."""
        check_secret_key_name(key)
        with self._index_lock():
            names = set(self._read_index())
            removed = key in names
            try:
                self._backend.delete_password(self._service, key)
                removed = True
            except PasswordDeleteError:
                pass
            except (KeyringError, RuntimeError, OSError) as exc:
                raise self._fault(f"delete {key}", exc) from None
            if key in names:
                self._write_index(names - {key})
        log.debug("unset %s in %s (removed=%s)", key, self.location, removed)
        return SecretWrite(key=key, path=self.location, removed=removed)

    def names(self) -> list[str]:
        """The indexed key names, sorted."""
        return self._read_index()

    def reveal(self, key: str) -> str | None:
        """The value of ``key`` for a local composition root; never exposed as a verb."""
        return self._get(key, f"read {key}")
