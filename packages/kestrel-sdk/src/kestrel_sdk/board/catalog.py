"""This machine's catalog as a board reads it: loaded once per build.

Every row's verification, window and forgery check, every baseline and every reveal
reads the catalog; a user catalog of large tapes is read (its scenario directories
walked, its tapes' shapes checked against the home's cache) once per build, not once
per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runtime.catalog import CatalogIndex

__all__ = ["BoardCatalog"]


class BoardCatalog:
    """The catalog of ``paths`` (``kestrel --catalog-path``; ``None``:
    ``KESTREL_CATALOG_PATH``'s), its tapes' shapes remembered in the Kestrel home
    ``home`` (``load_catalog``'s), loaded on first use and then kept."""

    def __init__(self, paths: Sequence[Path] | None = None, home: Path | None = None) -> None:
        self.paths, self.home = paths, home
        self._index: CatalogIndex | None = None

    @property
    def index(self) -> CatalogIndex:
        """The catalog (loaded the first time it is asked for)."""
        if self._index is None:
            from ..runtime.catalog import load_catalog  # noqa: PLC0415 - the engine loads here

            self._index = load_catalog(self.paths, home=self.home)
        return self._index
