"""One refusal convention on every Kestrel command line (docs/cli.md): a failure is one
line ``kestrel: CODE: message`` on stderr and exits 1 (check failed / invalid input),
2 (usage) or 3 (refusal). Table-driven over the five entry points."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from kestrel_door.cli import door_group
from kestrel_mcp.cli import main as kestrel_mcp
from kestrel_sdk.cli import cli as kestrel
from kestrel_sdk.runtime import SqliteStore
from kestrel_secrets.cli import main as kestrel_secrets


def _foreign_store(home: Path) -> Path:
    """A home whose store has another schema: every runtime refuses BACKEND_UNAVAILABLE."""
    SqliteStore(home).close()
    with sqlite3.connect(home / "kestrel.db") as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    return home


def _not_a_grade(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "grade.json"
    path.write_text("{}", encoding="utf-8")
    return path


Args = Callable[[Path], list[str]]

# (entry point, command, argv from a fresh home, exit code, CODE)
CASES: list[tuple[str, click.Command, Args, int, str]] = [
    ("kestrel", kestrel, lambda h: ["--bogus"], 2, "USAGE"),
    (
        "kestrel",
        kestrel,
        lambda h: ["--home", str(h), "verify", str(_not_a_grade(h))],
        1,
        "INVALID_INPUT",
    ),
    (
        "kestrel",
        kestrel,
        lambda h: ["--home", str(_foreign_store(h)), "artifact", "sha256:0"],
        3,
        "BACKEND_UNAVAILABLE",
    ),
    ("kestrel secrets", kestrel, lambda h: ["secrets", "set"], 2, "USAGE"),
    (
        "kestrel secrets",
        kestrel,
        lambda h: ["--home", str(h), "secrets", "unset", "lower"],
        1,
        "SECRET_KEY_INVALID",
    ),
    (
        "kestrel secrets",
        kestrel,
        lambda h: ["--home", str(h), "secrets", "set", "X_LIVE"],
        3,
        "SECRET_KEY_LIVE",
    ),
    ("kestrel door", kestrel, lambda h: ["door", "token", "issue"], 2, "USAGE"),
    (
        "kestrel door",
        kestrel,
        lambda h: ["--home", str(h), "door", "token", "revoke", "tk_x"],
        1,
        "INVALID_INPUT",
    ),
    (
        "kestrel door",
        kestrel,
        lambda h: ["--home", str(_foreign_store(h)), "door", "serve"],
        3,
        "BACKEND_UNAVAILABLE",
    ),
    ("kestrel-mcp", kestrel_mcp, lambda h: ["--bogus"], 2, "USAGE"),
    (
        "kestrel-mcp",
        kestrel_mcp,
        lambda h: ["--home", str(_foreign_store(h))],
        3,
        "BACKEND_UNAVAILABLE",
    ),
    ("kestrel-door", door_group, lambda h: ["token", "revoke"], 2, "USAGE"),
    (
        "kestrel-door",
        door_group,
        lambda h: ["--home", str(h), "token", "revoke", "tk_x"],
        1,
        "INVALID_INPUT",
    ),
    (
        "kestrel-door",
        door_group,
        lambda h: ["--home", str(_foreign_store(h)), "serve"],
        3,
        "BACKEND_UNAVAILABLE",
    ),
]


Case = tuple[str, click.Command, Args, int, str]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[4]}" for c in CASES])
def test_every_cli_fails_with_one_line_and_the_one_exit_table(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry, command, argv, exit_code, code = case
    monkeypatch.setenv("KESTREL_HOME", str(tmp_path / "unused"))
    monkeypatch.setenv("KESTREL_SECRET_STORE", "file")
    result = CliRunner().invoke(command, argv(tmp_path / "home"), input="")
    assert result.exit_code == exit_code, (entry, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, (entry, result.stderr)
    assert lines[0].startswith(f"kestrel: {code}: "), (entry, lines[0])
    assert len(lines[0]) > len(f"kestrel: {code}: ")  # a message, not just a code
    assert "Traceback" not in result.output
    assert not (tmp_path / "unused").exists()  # flags win over the environment


BARE_GROUPS: list[tuple[click.Command, list[str], str, str]] = [
    (kestrel, ["--home", "unused", "scenario"], "kestrel scenario", "disguise, new, reveal"),
    (kestrel, ["--home", "unused", "secrets"], "kestrel secrets", "list, path, set, unset"),
    (door_group, [], "kestrel-door", "feed, keys, serve, token"),
    (door_group, ["token"], "kestrel-door token", "issue, list, revoke"),
]


@pytest.mark.parametrize("case", BARE_GROUPS, ids=[c[2] for c in BARE_GROUPS])
def test_a_group_given_no_command_names_its_commands_in_one_line(
    case: tuple[click.Command, list[str], str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not its whole help squeezed into the one line (what click's error carries)."""
    command, argv, path, some = case
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(command, argv, prog_name=path.split(maxsplit=1)[0])
    assert result.exit_code == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(f"kestrel: USAGE: missing command: {path} takes one of "), line
    assert some in line
    assert line.endswith(f"(see '{path} --help')")
    assert "Options:" not in line


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([], "missing command: kestrel-secrets takes one of list, path, set, unset"),
        (["--bogus"], "No such option '--bogus'."),
        (["set"], "Missing argument 'KEY'. (see 'kestrel-secrets set --help')"),
    ],
)
def test_the_kestrel_secrets_script_fails_in_one_line_too(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its refusals were one line; its usage errors were click's three."""
    with pytest.raises(SystemExit) as ended:
        kestrel_secrets(argv)
    assert ended.value.code == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("kestrel: USAGE: ")
    assert said in line
