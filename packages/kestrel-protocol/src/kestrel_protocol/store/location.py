"""Which store a process uses: ``--store URL`` or ``$KESTREL_STORE``, one of
``sqlite:///PATH`` (default ``$KESTREL_HOME/kestrel.db``), ``postgresql://…`` (or
libpq's ``host=… dbname=…`` form) or ``memory:``. Printed, a location never shows a
password (:func:`~kestrel_protocol.redact.redact_store_url`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..home import kestrel_home
from ..redact import redact_store_url, unencoded_in_password

__all__ = ["MEMORY_URL", "STORE_ENV", "StoreLocation", "store_location"]

STORE_ENV = "KESTREL_STORE"
_KEY_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*=")  # libpq's host=… dbname=… form
MEMORY_URL = "memory:"
"""The memory store's URL: a new, empty store in the process that opens it."""


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """Which store a process uses: a SQLite file, a PostgreSQL database (its DSN), or
    the process's memory."""

    kind: Literal["sqlite", "postgresql", "memory"]
    path: Path | None = None  # sqlite: the runtime's file (the door's is door.db beside it)
    dsn: str | None = None  # postgresql: a libpq connection URL or key=value string

    @property
    def door_path(self) -> Path:
        """The door's SQLite file: ``door.db`` beside the runtime's."""
        assert self.path is not None
        return self.path.parent / "door.db"

    def __str__(self) -> str:
        """The location without a password (safe to print and log)."""
        if self.kind == "sqlite":
            return f"sqlite:///{self.path}"
        if self.kind == "memory":
            return MEMORY_URL
        assert self.dsn is not None
        return redact_store_url(self.dsn)


def store_location(
    url: str | None = None,
    home: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> StoreLocation:
    """``url`` if given, else ``$KESTREL_STORE`` (when non-empty), else SQLite at
    ``<home>/kestrel.db`` (home as :func:`kestrel_home` resolves it).

    Raises ``ValueError`` naming what was wrong for anything else.
    """
    text = url if url else (os.environ if env is None else env).get(STORE_ENV) or ""
    text = text.strip()
    if not text:
        return StoreLocation("sqlite", path=kestrel_home(home, env) / "kestrel.db")
    if text == MEMORY_URL:
        return StoreLocation("memory")
    shown = repr(redact_store_url(text))
    if text.startswith(("postgresql://", "postgres://")) or _KEY_VALUE.match(text):
        char = unencoded_in_password(text)
        if char is not None:
            raise ValueError(
                f"store URL {shown}: its password holds an unencoded {char!r}; "
                f"percent-encode it ({char!r} is %{ord(char):02X})"
            )
        return StoreLocation("postgresql", dsn=text)
    if text.startswith("sqlite:///"):
        path = Path(text[len("sqlite:///") :]).expanduser()
        if not path.name or text.endswith("/"):
            raise ValueError(f"store URL {shown} names a directory; name the database file")
        if path.name == "door.db":
            raise ValueError(
                f"store URL {shown}: door.db is the door's own file beside the runtime's; "
                "name the runtime's file otherwise (e.g. kestrel.db)"
            )
        # sqlite:////abs/path and sqlite:///rel/path (made absolute against the working
        # directory, as the home is)
        return StoreLocation("sqlite", path=Path(os.path.abspath(path)))
    raise ValueError(f"store URL {shown} is not sqlite:///PATH, postgresql://… or memory:")
