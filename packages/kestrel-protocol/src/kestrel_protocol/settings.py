"""The settings a Kestrel process is built from, resolved once: flags > environment >
defaults.

Each console script (``kestrel``, ``kestrel-mcp``, ``kestrel-door``) resolves one
:class:`KestrelSettings` at its start and hands it to its bootstrap; the ``kestrel``
CLI also hands it to its plugin verbs (``ctx.find_object(KestrelSettings)``), so no
plugin reads ``os.environ`` or its parent's options for these.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .home import kestrel_home
from .store import STORE_ENV

__all__ = ["REMOTE_ENV", "KestrelSettings"]

REMOTE_ENV = "KESTREL_REMOTE"


@dataclass(frozen=True, slots=True)
class KestrelSettings:
    """Where a process keeps its state and what it talks to.

    ``home``: the Kestrel home (runtime store, door store, secrets file, reports).
    ``remote``: a door's URL when the process drives a remote Kestrel, else ``None``.
    ``catalog_paths``: extra scenario directories (``--catalog-path``; else
    ``KESTREL_CATALOG_PATH``, read by the catalog itself, docs/spec.md §4): every reader of
    the catalog takes them as :attr:`catalog_dirs`.
    ``store``: the store URL (``sqlite:///PATH``, ``postgresql://…`` or ``memory:``), else ``None``
    for the default, SQLite in the home (``kestrel_protocol.store.store_location``).
    """

    home: Path
    remote: str | None = None
    catalog_paths: tuple[Path, ...] = ()
    store: str | None = None

    @property
    def catalog_dirs(self) -> list[Path] | None:
        """The scenario directories the catalog is read from, as the catalog takes them:
        those ``catalog_paths`` names (in place of ``KESTREL_CATALOG_PATH``), else ``None``
        (the catalog reads ``KESTREL_CATALOG_PATH``). Every face and verb that reads the
        catalog, through the runtime or from files, takes it from here."""
        return list(self.catalog_paths) or None

    @classmethod
    def resolve(
        cls,
        home: str | os.PathLike[str] | None = None,
        remote: str | None = None,
        catalog_paths: tuple[str | os.PathLike[str], ...] = (),
        env: Mapping[str, str] | None = None,
        store: str | None = None,
    ) -> KestrelSettings:
        """Flags (the arguments) win over the environment (``KESTREL_HOME``,
        ``KESTREL_REMOTE``, ``KESTREL_STORE``), which wins over the defaults
        (``~/.kestrel``, local, SQLite in the home)."""
        environ = os.environ if env is None else env
        return cls(
            home=kestrel_home(home, environ),
            remote=remote or environ.get(REMOTE_ENV) or None,
            catalog_paths=tuple(Path(p) for p in catalog_paths),
            store=store or environ.get(STORE_ENV) or None,
        )

    def with_flags(
        self,
        home: str | os.PathLike[str] | None = None,
        remote: str | None = None,
        store: str | None = None,
    ) -> KestrelSettings:
        """These settings with a plugin's own flags applied on top (a flag given to
        ``kestrel secrets --home`` wins over ``kestrel --home``)."""
        return KestrelSettings(
            home=kestrel_home(home) if home is not None else self.home,
            remote=remote or self.remote,
            catalog_paths=self.catalog_paths,
            store=store or self.store,
        )
