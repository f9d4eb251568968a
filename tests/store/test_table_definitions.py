"""Each table of the stores is written once, runtime and door alike, and rendered for
SQLite and PostgreSQL by a dialect (``kestrel_protocol.tables``).

A second definition would be either a hand-written ``CREATE TABLE`` (or index, or
trigger) in some module beside the declarations, or a table declared twice, which two
ports would then both create (on PostgreSQL the runtime and the door share a database).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kestrel_door.tables import TABLES as DOOR_TABLES
from kestrel_protocol.sql import POSTGRES, SQLITE, Dialect
from kestrel_protocol.tables import META, Table, create_statements
from kestrel_sdk.runtime.stores.sql import PREFIXES, RUNTIME_TABLES

REPO = Path(__file__).resolve().parents[2]
RENDERERS = {"kestrel_protocol/tables.py", "kestrel_protocol/sql.py"}
"""Where DDL is spelled: the table renderer and the dialects' guards (triggers)."""
DDL = re.compile(r"\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:UNIQUE\s+)?(TABLE|INDEX|TRIGGER|FUNCTION)\b")


def test_no_module_writes_a_table_by_hand() -> None:
    found = []
    for path in sorted(REPO.glob("packages/*/src/**/*.py")):
        src = next(parent for parent in path.parents if parent.name == "src")
        if path.relative_to(src).as_posix() in RENDERERS:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if DDL.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not found, "DDL written outside kestrel_protocol.tables:\n" + "\n".join(found)


def _created(tables: list[tuple[tuple[Table, ...], str]], dialect: Dialect) -> list[str]:
    names = []
    for declared, prefix in tables:
        for statement in create_statements(declared, dialect, prefix):
            match = re.match(r"CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)", statement)
            if match:
                names.append(match[1])
    return names


@pytest.mark.parametrize("dialect", [SQLITE, POSTGRES], ids=lambda d: d.name)
def test_every_table_and_index_is_created_by_one_declaration(dialect: Dialect) -> None:
    runtime = PREFIXES[dialect.name]
    if dialect is POSTGRES:  # one database: kestrel_meta, the runtime's and the door's
        stores = [
            [((META,), "kestrel_"), (RUNTIME_TABLES, runtime), (DOOR_TABLES, "kestrel_door_")]
        ]
    else:  # two files: the runtime's (with its meta) and the door's
        stores = [[((META, *RUNTIME_TABLES), runtime)], [(DOOR_TABLES, "")]]
    for store in stores:
        names = _created(store, dialect)
        twice = sorted({name for name in names if names.count(name) > 1})
        assert not twice, f"created by two declarations in {dialect.name}: {twice}"


def test_a_table_declared_twice_is_seen() -> None:
    """The check above sees a port declaring the shared ``meta`` table again."""
    names = _created([((META,), "kestrel_"), ((*RUNTIME_TABLES, META), "kestrel_")], POSTGRES)
    assert names.count("kestrel_meta") == 2
