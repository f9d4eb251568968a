"""The README's Install section, followed as a new user would: a fresh clone, an empty home
and an empty uv cache, the commands exactly as the README prints them (``$KESTREL`` is the
clone). The MCP host's line gives a working ``kestrel-mcp``; the virtualenv line gives an
app ``kestrel_sdk.gym`` that trades.

These installs fetch from the package registry (the workspace's ``uv sync`` needs it too);
under ``CI=true`` a registry that cannot be reached is a failure, elsewhere a skip.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.peers import in_ci

REPO = Path(__file__).resolve().parents[1]
UV = shutil.which("uv")
GYM_PROBE = """
import gymnasium, kestrel_sdk.gym
env = gymnasium.make(kestrel_sdk.gym.ENV_ID, scenario="acme-chop", window=4)
observation, _ = env.reset(seed=3)
observation, reward, terminated, truncated, info = env.step(1)
env.close()
print("stepped", observation.shape, terminated)
"""


def _install_line(row: str) -> str:
    """The command of the Install table's row whose first cell is ``row``."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells and cells[0] == row:
            found = re.fullmatch(r"`([^`]+)`", cells[1])
            assert found is not None, line
            return found.group(1)
    raise AssertionError(f"the README's Install table has no row {row!r}")


@pytest.fixture(scope="module")
def new_machine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A fresh clone of the committed tree, and the environment of a new user."""
    assert UV is not None, "uv is not on PATH"
    root = tmp_path_factory.mktemp("new-machine")
    clone = root / "kestrel"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-local", str(REPO), str(clone)], check=True, timeout=120
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("UV_", "VIRTUAL_ENV", "KESTREL_", "PYTHON"))
    }
    env |= {
        "HOME": str(root / "home"),
        "UV_CACHE_DIR": str(root / "uv-cache"),
        "UV_TOOL_DIR": str(root / "tools"),
        "UV_TOOL_BIN_DIR": str(root / "bin"),
        "KESTREL": str(clone),
    }
    (root / "home").mkdir()
    return root, env


UNREACHABLE = ("Failed to fetch", "dns error", "Connection refused", "error sending request")


def _run(line: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run one README line (``$KESTREL`` the clone); a registry out of reach skips (fails
    under ``CI=true``) rather than passing for a broken line."""
    words = [word.replace("$KESTREL", env["KESTREL"]) for word in shlex.split(line)]
    assert words[0] == "uv"
    done = subprocess.run(
        [str(UV), *words[1:]], capture_output=True, text=True, timeout=600, env=env, check=False
    )
    if done.returncode != 0 and any(sign in done.stderr for sign in UNREACHABLE):
        reason = f"the package registry is out of reach: {done.stderr.strip()[-300:]}"
        if in_ci():
            pytest.fail(f"CI=true, and {reason}", pytrace=False)
        pytest.skip(reason)
    return done


def test_the_readme_installs_kestrel_mcp_for_an_mcp_host(
    new_machine: tuple[Path, dict[str, str]],
) -> None:
    root, env = new_machine
    line = _install_line("an MCP host (Claude Desktop/Code, Cursor)")
    assert line == "uv tool install $KESTREL/packages/kestrel-mcp"
    installed = _run(line, env)
    assert installed.returncode == 0, installed.stderr
    version = subprocess.run(
        [str(root / "bin" / "kestrel-mcp"), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == "kestrel-mcp, version 0.1.0"


def test_the_readme_installs_the_sdk_with_gym_into_an_app_venv(
    new_machine: tuple[Path, dict[str, str]],
) -> None:
    root, env = new_machine
    venv = root / "app-venv"
    made = subprocess.run(
        [str(UV), "venv", str(venv)], capture_output=True, text=True, env=env, check=False
    )
    assert made.returncode == 0, made.stderr
    app = env | {"VIRTUAL_ENV": str(venv)}
    line = _install_line("any virtualenv")
    installed = _run(line, app)
    assert installed.returncode == 0, installed.stderr
    ran = subprocess.run(
        [str(venv / "bin" / "python"), "-I", "-c", GYM_PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env=app,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("stepped ("), ran.stdout
    assert ran.stdout.strip().endswith("False")  # one bar in: the episode goes on


def _first_command() -> str:
    """The README's first command: the ``kestrel demo`` line of its first ``sh`` block."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    line = next(line for line in block.splitlines() if "kestrel demo" in line)
    return line.split("#", 1)[0].strip()


TOOLCHAIN = ("mypy", "ruff", "pytest", "inspect_ai", "pyarrow", "polars", "hypothesis")
"""What the tests need and the demo does not."""


def test_the_readmes_first_command_installs_only_kestrel_and_leaves_the_tape_unseen(
    new_machine: tuple[Path, dict[str, str]],
) -> None:
    _, env = new_machine
    clone = Path(env["KESTREL"])
    line = _first_command()
    assert shlex.split(line)[0] == "uv", line
    first = subprocess.run(
        [str(UV), *shlex.split(line)[1:]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=clone,
        env=env | {"COLUMNS": "200"},
        check=False,
    )
    if first.returncode != 0 and any(sign in first.stderr for sign in UNREACHABLE):
        _run(line, env)  # skips (fails under CI=true) saying the registry is out of reach
    assert first.returncode == 0, first.stderr[-3000:]
    assert "passed       │                           yes" in first.stdout, first.stdout
    site = next((clone / ".venv" / "lib").glob("python3*/site-packages"))
    installed = {entry.name.split("-")[0].lower() for entry in site.iterdir()}
    assert not installed & set(TOOLCHAIN), sorted(installed & set(TOOLCHAIN))
    assert len(installed) < 60, sorted(installed)  # about 40 entries; the workspace's: 350
    # the example's own line next, the same way: the user's principal was shown nothing
    words = shlex.split(line)
    uv_run_kestrel = words[1 : words.index("kestrel") + 1]
    example = ["run", "examples/trend.kes", "--scenario", "acme-trend", "--json"]
    ran = subprocess.run(
        [str(UV), *uv_run_kestrel, *example],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=clone,
        env=env,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    checks = {c["id"]: c for c in json.loads(ran.stdout)["conformance"]["checks"]}
    assert checks["no-lookahead"]["passed"], checks["no-lookahead"]["detail"]
    assert not {e.name.split("-")[0].lower() for e in site.iterdir()} & set(TOOLCHAIN)
