"""A verb of Kestrel's own packages (`kestrel mcp`, `kestrel door`, `kestrel secrets`) asked
of a `kestrel` whose environment lacks that package: `uv tool install` of each package, as
the README's install table shows, gives each its own environment, so the tool-installed
`kestrel` has no `mcp` verb though kestrel-mcp's README names it. The refusal names the
package and how to install it beside `kestrel`."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from kestrel_sdk.cli import PLUGIN_GROUP, cli
from kestrel_sdk.cli import group as group_module

ROOT = Path(__file__).resolve().parents[3]


def _alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """This `kestrel` as `uv tool install …/kestrel-sdk` has it: no plugin installed."""
    monkeypatch.setattr(group_module, "entry_points", lambda group: [])
    monkeypatch.setattr(cli, "_plugins", None)
    monkeypatch.setattr(cli, "_loaded", {})


@pytest.mark.parametrize(
    ("verb", "package"),
    [("mcp", "kestrel-mcp"), ("door", "kestrel-door"), ("secrets", "kestrel-secrets")],
)
def test_a_verb_of_a_package_not_installed_names_the_package(
    verb: str, package: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _alone(monkeypatch)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), verb, "--help"], prog_name="kestrel")
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert line.startswith(f"kestrel: USAGE: No such command '{verb}': it comes with {package},")
    assert f'--with "$KESTREL/packages/{package}"' in line
    assert f"or run {package} itself" in line
    # the line that works in a clone, where uv run, not uv tool install, is the way in
    assert f"uv run --package {package} {package} … is kestrel {verb} …" in line


def test_an_unknown_verb_is_still_only_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _alone(monkeypatch)
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "mcpp"], prog_name="kestrel")
    assert result.exit_code == 2
    assert result.stderr.strip() == "kestrel: USAGE: No such command 'mcpp'. (see 'kestrel --help')"


def test_the_own_verbs_are_the_workspace_packages_entry_points() -> None:
    declared = {}
    for pyproject in sorted((ROOT / "packages").glob("*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        for verb in project.get("entry-points", {}).get(PLUGIN_GROUP, {}):
            declared[verb] = project["name"]
    own = {verb: package for verb, package in declared.items() if package != "kestrel-sdk"}
    assert own == group_module.OWN_PLUGINS
