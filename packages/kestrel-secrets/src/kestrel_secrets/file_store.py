"""``DotenvSecretStore``: the operator's secrets in ``$KESTREL_HOME/.env``.

Chosen when no OS keyring is available (headless Linux, containers, CI). The file is
ordinary ``.env`` text any dotenv loader reads; Kestrel edits only its own keys and
keeps every other line and comment byte for byte.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from filelock import FileLock, Timeout
from kestrel_protocol import RefusalCode, kestrel_home
from kestrel_protocol.ports import SecretWrite

from .dotenv_format import DotenvEditError, parse_dotenv, remove_key, set_key
from .errors import SecretStoreError
from .keys import check_operator_secret_key, check_secret_key_name, check_secret_value
from .private_files import (
    FILE_MODE,
    atomic_write_private,
    ensure_private_dir,
    read_private_text,
    remove_stale_temporaries,
)

__all__ = ["DotenvSecretStore"]

log = logging.getLogger("kestrel_secrets")
_T = TypeVar("_T")


class DotenvSecretStore:
    """A ``SecretStore`` over one ``.env`` file.

    Every write holds an inter-process lock (``<file>.lock`` beside it) across
    read-modify-replace, so concurrent writers in several processes lose nothing; the
    replace is atomic and fsynced. Reads take no lock: they always see a whole file.
    A path that is a symlink is refused (see the package README).
    """

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, lock_timeout: float = 60.0
    ) -> None:
        if path is None:
            self._path = kestrel_home() / ".env"
        else:
            self._path = Path(os.path.abspath(Path(path).expanduser()))
        self._lock_timeout = lock_timeout

    @property
    def path(self) -> Path:
        """The ``.env`` file."""
        return self._path

    @property
    def location(self) -> str:
        """The file path, as every write result reports it."""
        return str(self._path)

    def __repr__(self) -> str:
        return f"DotenvSecretStore({self.location!r})"

    def _edit(self, edit: Callable[[str], str | None]) -> None:
        """Apply ``edit`` to the current text under the lock; ``None`` means no change."""
        ensure_private_dir(self._path.parent)
        lock = FileLock(
            self._path.with_name(self._path.name + ".lock"),
            timeout=self._lock_timeout,
            mode=FILE_MODE,
        )
        try:
            with lock:
                remove_stale_temporaries(self._path)
                current = read_private_text(self._path)
                new = edit(current or "")
                if new is not None:
                    atomic_write_private(self._path, new)
        except Timeout:
            raise SecretStoreError(
                RefusalCode.SECRET_STORE_UNAVAILABLE,
                f"another process has held the lock on {self._path} for "
                f"{self._lock_timeout:g}s; try again",
                {"path": self.location},
            ) from None

    def _edited(self, key: str, edit: Callable[[], _T]) -> _T:
        """Run a text edit; one that malformed lines would garble is refused, unwritten."""
        try:
            return edit()
        except DotenvEditError as exc:
            raise SecretStoreError(
                RefusalCode.SECRET_STORE_UNAVAILABLE,
                f"{self._path}: {exc}; nothing was written",
                {"key": key, "path": self.location, "line": exc.line},
            ) from None

    def set(self, key: str, value: str) -> SecretWrite:
        """Bind ``key`` to ``value``; the result names the key and the file, never the value."""
        check_operator_secret_key(key)
        check_secret_value(value)

        def edit(text: str) -> str:
            return self._edited(key, lambda: set_key(text, key, value))

        self._edit(edit)
        log.debug("set %s in %s", key, self._path)
        return SecretWrite(key=key, path=self.location)

    def unset(self, key: str) -> SecretWrite:
        """Remove every binding of ``key``; ``removed`` says whether there was one."""
        check_secret_key_name(key)
        removed = False

        def edit(text: str) -> str | None:
            nonlocal removed
            new, removed = self._edited(key, lambda: remove_key(text, key))
            return new if removed else None

        if self._path.exists() or self._path.is_symlink():
            self._edit(edit)
        log.debug("unset %s in %s (removed=%s)", key, self._path, removed)
        return SecretWrite(key=key, path=self.location, removed=removed)

    def names(self) -> list[str]:
        """Every key that has a value in the file, sorted, without duplicates."""
        text = read_private_text(self._path) or ""
        return sorted(
            {b.key for b in parse_dotenv(text) if b.key is not None and b.value is not None}
        )

    def reveal(self, key: str) -> str | None:
        """The value of ``key`` for a local composition root; never exposed as a verb."""
        return _value_of(read_private_text(self._path) or "", key)


def _value_of(text: str, key: str) -> str | None:
    value: str | None = None
    for binding in parse_dotenv(text):
        if binding.key == key:
            value = binding.value
    return value
