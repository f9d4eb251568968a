"""The store contract suites run every behaviour against both adapters.

``store_kind`` is ``sqlite`` or ``postgresql``; PostgreSQL tests use the session's
throwaway cluster (a fresh schema each), and skip locally when it is absent.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Raw = Callable[[str, tuple[Any, ...]], None]
"""Runs one SQL statement straight on the store's database (to corrupt it on purpose):
``?`` placeholders, and ``{name}`` for a table, named as each adapter names it."""

_SQLITE_TABLES = {"artifacts": "artifacts", "journal": "journal", "audit": "audit"}
_POSTGRES_TABLES = {
    "artifacts": "kestrel_artifacts",
    "journal": "kestrel_journal",
    "audit": "kestrel_door_audit",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty store of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'home' / 'kestrel.db'}"
    dsn: str = request.getfixturevalue("postgres_dsn")
    return dsn


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
