"""The SQLite ``RuntimeStore`` adapter: one file in the Kestrel home and its step files.

:mod:`.store` is the port (:class:`SqliteStore`); :mod:`.database` opens the file and
checkpoints it, :mod:`.journal` reads the journal table with the step files, and
:mod:`.sessions` holds the session rows and what hangs off them.
"""

from __future__ import annotations

from .store import SqliteStore

__all__ = ["SqliteStore"]
