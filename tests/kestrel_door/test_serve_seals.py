"""``kestrel-door serve`` says at start which catalog it serves and which scenarios it
seals (issue 50): an operator who meant to seal a scenario and did not (or mistyped its
id) sees it on the door's first lines, not in a leaked tape.

A door started with ``--seal acme-chop`` and a user catalog holding ``acme-sealed``
(``sealed = true`` in its scenario.toml) names both, each with why, and the catalog's
root and where its scenarios come from; a door sealing nothing says ``sealed: none``; a
mistyped ``--seal`` is a usage error naming the id, before anything is served.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from kestrel_door.cli import door_group
from kestrel_sdk.runtime import Runtime

from tests.loopback import free_port, wait_for_http

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "packages/kestrel-sdk/src/kestrel_sdk/catalog_data"
_DOOR = [sys.executable, "-c", "from kestrel_door.cli import main; main()"]


def _sealed_catalog(root: Path) -> Path:
    """A user catalog holding ``acme-sealed``: acme-trend's tape and terms, sealed."""
    directory = root / "acme-sealed"
    directory.mkdir(parents=True)
    shutil.copy(SHIPPED / "acme-trend" / "tape.csv", directory / "tape.csv")
    toml = (SHIPPED / "acme-trend" / "scenario.toml").read_text("utf-8")
    toml = toml.replace('id = "acme-trend"', 'id = "acme-sealed"')
    (directory / "scenario.toml").write_text("sealed = true\n" + toml, "utf-8")
    return root


def _start_lines(home: Path, env: dict[str, str], *extra: str) -> list[str]:
    """The door's stderr once it answers (its start lines), the door then stopped."""
    port = free_port()
    log = home / "door.log"
    home.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        door = subprocess.Popen(
            [*_DOOR, "serve", "--port", str(port), *extra],
            env={**env, "KESTREL_HOME": str(home)},
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
        try:
            wait_for_http(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource", door)
        finally:
            door.terminate()
            door.wait(timeout=30)
    return log.read_text("utf-8").splitlines()


def test_the_door_says_at_start_what_it_seals_and_from_which_catalog(tmp_path: Path) -> None:
    catalog = _sealed_catalog(tmp_path / "catalog")
    env = {**os.environ, "KESTREL_CATALOG_PATH": str(catalog)}
    lines = _start_lines(tmp_path / "door", env, "--seal", "acme-chop")
    expected = Runtime(tmp_path / "probe", catalog_paths=[catalog], sealed=["acme-chop"])
    root = expected.catalog().root
    count = len(expected.index.ids())
    expected.shutdown()
    assert (
        f"kestrel-door: catalog {root}: {count} scenarios ({count - 1} shipped; 1 from {catalog})"
    ) in lines
    assert "kestrel-door: sealed: acme-chop (--seal), acme-sealed (its scenario.toml)" in lines

    env.pop("KESTREL_CATALOG_PATH")
    plain = _start_lines(tmp_path / "plain", env)
    assert (
        "kestrel-door: sealed: none (every scenario's tape is served; --seal ID seals one)" in plain
    )
    assert any(line.endswith(" scenarios (" + f"{count - 1} shipped)") for line in plain)


def test_a_mistyped_seal_is_a_usage_error_naming_it_and_help_says_so(tmp_path: Path) -> None:
    typo = CliRunner().invoke(door_group, ["--home", str(tmp_path), "serve", "--seal", "acme-trnd"])
    assert typo.exit_code == 2, typo.output
    assert "no scenario 'acme-trnd' in the catalog" in typo.output
    assert "serving" not in typo.output
    shown = CliRunner().invoke(door_group, ["serve", "--help"]).output
    assert "the door says at start" in " ".join(shown.split())


def test_the_door_says_at_start_where_sessions_and_its_records_are_kept(tmp_path: Path) -> None:
    """The start line named only door.db as the store, though the sessions the door serves
    are kept in kestrel.db beside it (what ``kestrel home`` and ``--store`` call the store):
    it names both."""
    home = tmp_path / "door"
    lines = _start_lines(home, dict(os.environ))
    serving = [line for line in lines if line.startswith("kestrel-door: serving ")]
    assert len(serving) == 1
    assert serving[0].endswith(
        f"; home {home}; store sqlite:///{home / 'kestrel.db'}, door records {home / 'door.db'}"
    )
