"""The SQLite ``RuntimeStore`` adapter: one file in the Kestrel home and its step files.

:mod:`.store` is the port (:class:`SqliteStore`); :mod:`.database` opens the file and
checkpoints it, :mod:`.journal` reads the journal table with the step files, and
:mod:`.sessions` holds the session rows and what hangs off them. :mod:`.store` runs
compiled when a matching mypyc build is there (``runtime.native``).
"""

from __future__ import annotations

from .. import native

native.activate(__name__, __path__)

from .store import SqliteStore  # noqa: E402 (after activate)

__all__ = ["SqliteStore"]
