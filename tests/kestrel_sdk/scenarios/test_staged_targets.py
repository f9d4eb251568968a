"""Every scenario writer refuses the same targets in the same words, and writes through
one staged writer (issue 48).

``kestrel scenario new``, ``disguise`` and ``sealed-copy`` (and the SDK's ``write``
behind them) refuse a directory the catalog would never list (hidden, inside another
scenario, reached through ``..`` to a full directory, a file, under a file) with one
text; a target the system cannot write, or a write that crashes half-way, leaves
nothing the catalog can see, and a refused disguise keeps no reveal (but never removes
one kept before).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, NamedTuple

import pytest
from click.testing import CliRunner, Result
from kestrel_protocol import kestrel_home
from kestrel_sdk.cli import cli
from kestrel_sdk.runtime.catalog import load_catalog
from kestrel_sdk.scenarios import (
    ScenarioTargetError,
    disguise_scenario,
    scenario_from_file,
    write_staged,
)

from tests.kestrel_sdk.scenarios.test_scenario_new import YAHOO

SECRET = bytes(range(32))
COMMANDS = ("new", "disguise", "sealed-copy")


class World(NamedTuple):
    root: Path
    catalog: Path
    csv: Path

    def run(self, command: str, out: Path) -> Result:
        secret = self.root / "secret.hex"
        args = {
            "new": ("new", "fresh", "--from", str(self.csv)),
            "disguise": ("disguise", "acme", "--as", "tape-q7", "--secret-file", str(secret)),
            "sealed-copy": ("sealed-copy", "acme", "--as", "tape-s1"),
        }[command]
        return CliRunner().invoke(cli, ["scenario", *args, "--out", str(out)])

    def listed(self) -> list[str]:
        """The ids this test's writers use that the catalog lists."""
        index = load_catalog([self.catalog])
        return [name for name in ("fresh", "tape-q7", "tape-s1") if index.get(name) is not None]

    def files(self) -> list[str]:
        """Every path under the test's directory and the kept reveals (hidden ones too)."""
        reveals = kestrel_home() / "reveals"
        found = [*self.root.rglob("*"), *(reveals.iterdir() if reveals.is_dir() else ())]
        return sorted(str(path) for path in found)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """A catalog holding ``acme`` (imported from five Yahoo rows), on the catalog path."""
    csv = tmp_path / "ACME.csv"
    csv.write_text(YAHOO, encoding="utf-8")
    (tmp_path / "secret.hex").write_text(SECRET.hex(), encoding="ascii")
    catalog = tmp_path / "catalog"
    scenario_from_file(csv, "acme").write(catalog / "acme")
    monkeypatch.setenv("KESTREL_CATALOG_PATH", str(catalog))
    return World(tmp_path, catalog, csv)


def _hidden(world: World) -> tuple[Path, str]:
    out = world.catalog / ".fresh"
    return out, (
        f"{out} is a hidden directory, which the catalog does not read; name it without "
        "the leading dot"
    )


def _not_empty(world: World) -> tuple[Path, str]:
    out = world.root / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    return out, f"{out} already exists and is not an empty directory"


def _inside_a_scenario(world: World) -> tuple[Path, str]:
    out = world.catalog / "acme" / "inner"
    return out, (
        f"{out} is inside the scenario directory {world.catalog / 'acme'}, which the "
        "catalog reads as one scenario; choose a directory outside it"
    )


def _dot_dot_to_the_catalog(world: World) -> tuple[Path, str]:
    out = world.catalog / "fresh" / ".."  # the catalog itself, which holds acme
    return out, f"{out} already exists and is not an empty directory"


def _dot_dot_to_hidden(world: World) -> tuple[Path, str]:
    out = world.catalog / "fresh" / ".." / ".fresh"
    return out, (
        f"{out} is a hidden directory, which the catalog does not read; name it without "
        "the leading dot"
    )


def _a_file(world: World) -> tuple[Path, str]:
    out = world.catalog / "fresh"
    out.write_text("a file", encoding="utf-8")
    return out, f"{out} is a file, not a directory"


def _under_a_file(world: World) -> tuple[Path, str]:
    blocker = world.root / "blocker"
    blocker.write_text("a file", encoding="utf-8")
    out = blocker / "fresh"
    return out, f"{out}: {blocker} is a file, not a directory"


REFUSED: dict[str, Callable[[World], tuple[Path, str]]] = {
    "hidden": _hidden,
    "not-empty": _not_empty,
    "inside-a-scenario": _inside_a_scenario,
    "dot-dot-to-the-catalog": _dot_dot_to_the_catalog,
    "dot-dot-to-hidden": _dot_dot_to_hidden,
    "a-file": _a_file,
    "under-a-file": _under_a_file,
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", list(REFUSED))
def test_every_writer_refuses_a_target_the_catalog_would_not_list_in_one_text(
    world: World, command: str, case: str
) -> None:
    out, message = REFUSED[case](world)
    before = world.files()
    result = world.run(command, out)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [f"kestrel: INVALID_ARGUMENT: {message}; nothing written"]
    assert world.files() == before  # no directory, no staging, no reveal
    assert world.listed() == []


@pytest.mark.parametrize("case", list(REFUSED))
def test_the_sdk_writers_refuse_the_same_targets_in_the_same_words(world: World, case: str) -> None:
    out, message = REFUSED[case](world)
    source = load_catalog([world.catalog]).get("acme")
    assert source is not None
    before = world.files()
    writers: list[Callable[[Path], Path]] = [
        scenario_from_file(world.csv, "fresh").write,
        disguise_scenario(source, "tape-q7", SECRET).write,
        lambda where: write_staged(where, lambda out: None, "id = 'x'\n", None),
    ]
    for write in writers:
        with pytest.raises(ScenarioTargetError) as refused:
            write(out)
        assert str(refused.value) == message
    assert world.files() == before


@pytest.mark.parametrize("command", COMMANDS)
def test_a_parent_the_system_will_not_write_leaves_nothing_and_no_reveal(
    world: World, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*_: object, **__: object) -> str:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    out = world.catalog / "fresh"
    before = world.files()
    monkeypatch.setattr(tempfile, "mkdtemp", refused)  # where the staging directory is made
    result = world.run(command, out)
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines() == [
        f"kestrel: INVALID_INPUT: cannot write {out}: Permission denied; nothing written"
    ]
    assert world.files() == before


@pytest.mark.parametrize("command", COMMANDS)
def test_a_crash_before_the_rename_leaves_nothing_the_catalog_sees(
    world: World, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*_: object) -> None:
        raise RuntimeError("crashed with every file written, before the rename")

    before = world.files()
    monkeypatch.setattr(os, "replace", crash)
    result = world.run(command, world.catalog / "fresh")
    assert result.exit_code != 0
    assert result.stderr.startswith("kestrel: INTERNAL: RuntimeError: crashed"), result.output
    assert world.files() == before  # no staging directory, no half scenario, no reveal
    assert world.listed() == []


def test_a_crash_half_way_through_the_tape_leaves_nothing(world: World) -> None:
    def half(out: IO[bytes]) -> None:
        out.write(b"time,symbol,open")
        raise RuntimeError("crashed half-way through the tape")

    before = world.files()
    with pytest.raises(RuntimeError, match="half-way"):
        write_staged(world.catalog / "fresh", half, "id = 'fresh'\n", None)
    assert world.files() == before


def test_a_failed_disguise_keeps_the_reveal_an_earlier_one_kept(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same source, id and secret make the same reveal: a second disguise that
    cannot be written removes only what it made, never the reveal of the first."""
    first = world.run("disguise", world.root / "published" / "tape-q7")
    assert first.exit_code == 0, first.output
    (kept,) = (kestrel_home() / "reveals").iterdir()
    text = kept.read_bytes()

    def refused(*_: object, **__: object) -> str:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    again = world.run("disguise", world.catalog / "tape-q7")
    assert again.exit_code == 1, again.output
    assert kept.read_bytes() == text
