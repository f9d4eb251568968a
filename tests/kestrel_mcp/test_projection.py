"""Projection-only, provable from the source: the face reaches the runtime only via the SDK barrel.

import-linter contract 1 checks the same thing on the import graph; this test also pins
the one documented exception (``kestrel_secrets``) to the modules allowed to use it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kestrel_mcp

PACKAGE = Path(kestrel_mcp.__file__).resolve().parent
SECRETS_ALLOWED = {"secrets.py", "cli.py"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_kestrel_sdk_is_reached_only_through_its_barrel() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert {"server.py", "stdio.py", "cli.py", "secrets.py"} <= {p.name for p in modules}
    for path in modules:
        for name in imported_modules(path):
            if name.startswith("kestrel_sdk"):
                assert name == "kestrel_sdk", f"{path.name} imports {name}"


def test_only_the_secret_tools_and_the_composition_root_use_kestrel_secrets() -> None:
    users = {
        path.name
        for path in PACKAGE.glob("*.py")
        if any(name.startswith("kestrel_secrets") for name in imported_modules(path))
    }
    assert users == SECRETS_ALLOWED


def test_no_runtime_module_is_imported_by_the_face() -> None:
    for path in PACKAGE.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "kestrel_sdk.runtime" not in text
        assert "kestrel_sdk.transports" not in text
