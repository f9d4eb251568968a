"""The hexagon's import rules hold, and each rule really catches its violation.

For every import-linter contract in the root ``pyproject.toml`` a test copies the
packages' sources into a temporary directory, plants one violating import in a module of
its own (other helpers keep adding modules, so no existing file is edited), and checks
that lint-imports, run on the copy, reports *that* contract broken and the others kept.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return contracts


CONTRACTS = _contracts()

# contract id -> (module file to create, relative to the copied src roots; its source)
PLANTS: dict[str, tuple[str, str]] = {
    "mcp-through-sdk-barrel": ("kestrel_mcp/_planted.py", "import kestrel_sdk.runtime\n"),
    "protocol-is-a-leaf": ("kestrel_protocol/_planted.py", "import kestrel_sdk\n"),
    "secrets-stand-alone": ("kestrel_secrets/_planted.py", "import kestrel_mcp\n"),
    "door-library-is-an-adapter": ("kestrel_door/_planted.py", "import kestrel_sdk\n"),
    "keyring-only-in-secrets": ("kestrel_sdk/_planted.py", "import keyring\n"),
    "runtime-knows-no-faces": ("kestrel_sdk/runtime/_planted.py", "import kestrel_sdk.client\n"),
    "inspect-speaks-mcp": ("kestrel_inspect/_planted.py", "import kestrel_sdk\n"),
    "store-adapters-in-their-wing": (
        "kestrel_sdk/runtime/_planted.py",
        "from .stores.memory import MemoryStore\n",
    ),
    "protocol-runs-nothing": ("kestrel_protocol/_planted.py", "import anyio.to_thread\n"),
}


def _run_lint_imports(root: Path, src_roots: list[Path]) -> tuple[int, str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(p) for p in src_roots),
        "COLUMNS": "400",
        "NO_COLOR": "1",
    }
    result = subprocess.run(
        [str(LINT_IMPORTS), str(root / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # rich wraps long contract names; compare on single-spaced text
    return result.returncode, " ".join((result.stdout + result.stderr).split())


def _only_sources(directory: str, names: list[str]) -> list[str]:
    return [
        name
        for name in names
        if name == "__pycache__"
        or (
            not name.endswith((".py", ".typed"))
            and not os.path.isdir(os.path.join(directory, name))
        )
    ]


@pytest.fixture
def copy(tmp_path: Path) -> tuple[Path, list[Path]]:
    """The workspace's package sources and root config, copied into ``tmp_path``."""
    shutil.copy2(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    src_roots = []
    for package in sorted((REPO / "packages").iterdir()):
        if not (package / "src").is_dir():
            continue
        target = tmp_path / "packages" / package.name
        shutil.copytree(package / "src", target / "src", ignore=_only_sources)
        shutil.copy2(package / "pyproject.toml", target / "pyproject.toml")
        src_roots.append(target / "src")
    return tmp_path, src_roots


def test_the_repo_keeps_every_contract() -> None:
    assert len(CONTRACTS) >= 6
    code, output = _run_lint_imports(REPO, [])
    assert code == 0, output
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in output
    for contract in CONTRACTS:
        assert f"{contract['name']} KEPT" in output


def test_every_contract_has_a_planted_violation() -> None:
    assert {c["id"] for c in CONTRACTS} == set(PLANTS)


@pytest.mark.parametrize("contract", CONTRACTS, ids=[c["id"] for c in CONTRACTS])
def test_a_planted_violation_breaks_its_contract(
    contract: dict[str, Any], copy: tuple[Path, list[Path]]
) -> None:
    root, src_roots = copy
    relative, source = PLANTS[contract["id"]]
    planted = next(r / relative for r in src_roots if (r / relative).parent.is_dir())
    planted.write_text(f'"""Planted violation."""\n\n{source}', encoding="utf-8")

    code, output = _run_lint_imports(root, src_roots)

    assert code != 0, output
    assert f"{contract['name']} BROKEN" in output
    assert f"Contracts: {len(CONTRACTS) - 1} kept, 1 broken." in output
    module = relative.removesuffix(".py").replace("/", ".")
    # the report names the planted module, which exists only in the copy: the copy was analysed
    assert f"{module} -> " in output
    assert "deprecated" not in output.lower()


def test_the_copy_without_a_plant_is_clean(copy: tuple[Path, list[Path]]) -> None:
    root, src_roots = copy
    code, output = _run_lint_imports(root, src_roots)
    assert code == 0, output
