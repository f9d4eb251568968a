"""The SQLite ``RuntimeStore`` adapter: one file in the Kestrel home.

:mod:`.store` is the port (:class:`SqliteStore`, over :class:`..sql.SqlStore`);
:mod:`.database` opens the file, creates its schema and checkpoints it.
"""

from __future__ import annotations

from .store import SqliteStore

__all__ = ["SqliteStore"]
