"""docs/baskets.md's worked example runs as written: a long CSV of three symbols becomes a
scenario, a program trades all three, and its proof verifies in an empty home.

The block after the ``worked example`` marker is a shell transcript: each ``$`` line is
run (``kestrel …`` through the CLI in process; ``export`` and ``NAME=value`` prefixes set
the environment; ``$PWD`` and ``$(mktemp -d)`` are expanded) in a directory holding a
copy of ``examples/basket``, and what it prints must be the lines under it, where ``…``
stands for any text (a temporary path, a root that names the machine's files).
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from kestrel_sdk.cli import cli

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs/baskets.md"
MARKER = "<!-- worked example:"


def _transcript() -> list[tuple[str, list[str]]]:
    """The marked block as (command, expected output lines) pairs."""
    text = DOC.read_text(encoding="utf-8")
    block = text[text.index(MARKER) :].split("```", 2)[1]
    steps: list[tuple[str, list[str]]] = []
    for line in block.strip("\n").splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def _matches(expected: str, line: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in expected.split("…"))
    return re.fullmatch(pattern, line) is not None


def _expand(command: str, cwd: Path, empty_home: Path) -> str:
    return command.replace("$PWD", str(cwd)).replace("$(mktemp -d)", str(empty_home))


def test_the_worked_example_of_a_basket_import_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(REPO / "examples/basket", tmp_path / "examples/basket")
    empty_home = tmp_path / "empty-home"
    empty_home.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KESTREL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KESTREL_CATALOG_PATH", raising=False)
    steps = _transcript()
    assert [command.split()[0] for command, _ in steps].count("kestrel") >= 3
    for command, expected in steps:
        words = shlex.split(_expand(command, tmp_path, empty_home))
        if words[0] == "export":
            name, value = words[1].split("=", 1)
            monkeypatch.setenv(name, value)
            continue
        env: dict[str, str | None] = {}
        while "=" in words[0]:
            name, value = words.pop(0).split("=", 1)
            env[name] = value
        assert words[0] == "kestrel", command
        result = CliRunner(env=env).invoke(cli, words[1:])
        assert result.exit_code == 0, (command, result.output)
        lines = result.output.splitlines()
        assert len(lines) == len(expected), (command, result.output)
        for want, got in zip(expected, lines, strict=True):
            assert _matches(want, got), (command, want, got)
    assert (tmp_path / "catalog/trio/tape.csv").is_file()
    assert list(empty_home.iterdir()) == []  # the verification stored nothing there
