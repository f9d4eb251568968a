"""Every Kestrel command line answers ``-h``, ``--help`` and ``--version`` alike, and every
subcommand says what it does (docs/cli.md).

The version runs through the installed console scripts (what a user types); the help of
every subcommand is walked in process over the same click objects.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from kestrel_door.cli import door_group
from kestrel_mcp.cli import main as kestrel_mcp
from kestrel_sdk.cli import cli as kestrel
from kestrel_secrets.cli import secrets_group

BIN = Path(sys.executable).parent

# console script -> (its click object, the global options it must take)
ENTRY_POINTS: dict[str, tuple[click.Command, set[str]]] = {
    "kestrel": (kestrel, {"--home", "--store", "--remote", "--catalog-path"}),
    "kestrel-mcp": (kestrel_mcp, {"--home", "--store", "--remote", "--catalog-path"}),
    "kestrel-door": (door_group, {"--home", "--store"}),
    "kestrel-secrets": (secrets_group, {"--home"}),
}


def _script(name: str) -> str:
    found = shutil.which(name, path=str(BIN))
    assert found is not None, f"console script {name} is not installed in {BIN}"
    return found


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_every_console_script_prints_its_version(name: str) -> None:
    done = subprocess.run(
        [_script(name), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{name}, version 0.1.0"


def test_python_m_kestrel_mcp_is_kestrel_mcp() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kestrel_mcp", "-h"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Serve Kestrel to an MCP host" in done.stdout


def _walk(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, (path, name)
            yield from _walk(sub, (*path, name))


def _commands() -> list[tuple[str, tuple[str, ...]]]:
    return [(name, path) for name, (cmd, _) in ENTRY_POINTS.items() for path in _walk(cmd)]


@pytest.mark.parametrize(
    ("name", "path"), _commands(), ids=[" ".join((n, *p)) for n, p in _commands()]
)
def test_every_command_and_subcommand_takes_h_and_help_and_says_what_it_does(
    name: str, path: tuple[str, ...]
) -> None:
    command, _ = ENTRY_POINTS[name]
    short = CliRunner().invoke(command, [*path, "-h"], prog_name=name)
    long = CliRunner().invoke(command, [*path, "--help"], prog_name=name)
    assert short.exit_code == 0, short.output
    assert short.output == long.output
    usage, _, rest = short.output.partition("\n")
    assert usage.startswith(f"Usage: {' '.join((name, *path))} ")
    described = rest.split("Options:")[0].strip()
    assert described, f"{' '.join((name, *path))} has no help text"


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_every_console_script_takes_the_global_options(name: str) -> None:
    command, options = ENTRY_POINTS[name]
    taken = {opt for param in command.params for opt in param.opts}
    assert options | {"--version"} <= taken, options - taken
