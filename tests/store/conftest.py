"""The store contract suites run every behaviour against every adapter.

``store_url`` names an empty SQLite or PostgreSQL store (both ports have those);
``runtime_store_url`` adds ``memory:`` (the runtime's port alone has a memory adapter).
PostgreSQL tests use the session's throwaway cluster (a fresh schema each), and skip
locally when it is absent (under ``CI=true`` they fail instead).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

Raw = Callable[[str, tuple[Any, ...]], None]
"""Runs one SQL statement straight on the store's database (to corrupt it on purpose):
``?`` placeholders, and ``{name}`` for a table, named as each adapter names it."""

_SQLITE_TABLES = {
    "artifacts": "artifacts",
    "journal": "journal",
    "sessions": "sessions",
    "meta": "meta",
    "audit": "audit",
    "tokens": "tokens",
    "horizons": "horizons",
    "unkeyed_horizons": "unkeyed_horizons",
    "feed_bars": "feed_bars",
}
_POSTGRES_TABLES = {
    "artifacts": "kestrel_artifacts",
    "journal": "kestrel_journal",
    "sessions": "kestrel_sessions",
    "meta": "kestrel_meta",
    "audit": "kestrel_door_audit",
    "tokens": "kestrel_door_tokens",
    "horizons": "kestrel_horizons",
    "unkeyed_horizons": "kestrel_unkeyed_horizons",
    "feed_bars": "kestrel_feed_bars",
}


def _url(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'home' / 'kestrel.db'}"
    if kind == "memory":
        return "memory:"
    dsn: str = request.getfixturevalue("postgres_dsn")
    return dsn


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty store of each kind both ports have."""
    return _url(request.param, request, tmp_path)


@pytest.fixture(params=["sqlite", "postgresql", "memory"])
def runtime_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty runtime store of each kind."""
    return _url(request.param, request, tmp_path)


class Tamper(Protocol):
    """An adversary with access to a runtime store's own tables (its rows, not its port)."""

    def artifact_body(self, root: str, body: bytes) -> None:
        """Overwrite the bytes stored under ``root``."""

    def journal_source(self, pentad_root: str, source: str) -> None:
        """Overwrite the source of the journal row whose pentad root is ``pentad_root``."""

    def drop_journal_row(self, pentad_root: str) -> None:
        """Delete the journal rows whose pentad root is ``pentad_root`` (``""``: row 0)."""


class SqlTamper:
    """:class:`Tamper` by SQL on the store's database."""

    def __init__(self, url: str) -> None:
        self._raw = raw_sql(url)

    def artifact_body(self, root: str, body: bytes) -> None:
        self._raw("UPDATE {artifacts} SET body = ? WHERE root = ?", (body, root))

    def journal_source(self, pentad_root: str, source: str) -> None:
        self._raw("UPDATE {journal} SET source = ? WHERE pentad_root = ?", (source, pentad_root))

    def drop_journal_row(self, pentad_root: str) -> None:
        self._raw("DELETE FROM {journal} WHERE pentad_root = ?", (pentad_root,))


class MemoryTamper:
    """:class:`Tamper` on a memory store's dictionaries (its tables)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def artifact_body(self, root: str, body: bytes) -> None:
        self._store._artifacts[root] = body

    def _rows(self) -> Iterator[tuple[list[Any], int]]:
        for session in self._store._sessions.values():
            for index in range(len(session.journal) - 1, -1, -1):
                yield session.journal, index

    def journal_source(self, pentad_root: str, source: str) -> None:
        for journal, index in self._rows():
            seq, _, root, frame = journal[index]
            if root == pentad_root:
                journal[index] = (seq, source, root, frame)

    def drop_journal_row(self, pentad_root: str) -> None:
        for journal, index in list(self._rows()):
            if journal[index][2] == pentad_root:
                del journal[index]


def tamper(url: str, store: Any) -> Tamper:
    """The adversary for the store at ``url`` (``store``: that store, opened)."""
    return MemoryTamper(store) if url == "memory:" else SqlTamper(url)


def horizon_key(scenario_id: str) -> str:
    """The horizon key of a shipped scenario: its lineage's tag (catalog/lineage.py)."""
    from kestrel_sdk.runtime.catalog import load_catalog
    from kestrel_sdk.runtime.catalog.lineage import Lineages

    return Lineages(load_catalog([])).key(scenario_id)


def raw_sql(url: str, door: bool = False) -> Raw:
    """``raw(sql, args)`` on the database of ``url`` (the door's, with ``door``)."""
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///") :]
        if door:
            path = str(Path(path).parent / "door.db")

        def run_sqlite(sql: str, args: tuple[Any, ...]) -> None:
            with sqlite3.connect(path) as conn:
                conn.execute(sql.format(**_SQLITE_TABLES), args)
            conn.close()

        return run_sqlite
    import psycopg

    def run_postgres(sql: str, args: tuple[Any, ...]) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            statement = sql.format(**_POSTGRES_TABLES).replace("?", "%s")
            conn.execute(statement, args)

    return run_postgres
