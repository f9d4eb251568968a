"""Compile the step path with mypyc: ``python -m kestrel_sdk.runtime.build [--dest DIR]``.

Copies the installed ``kestrel_sdk`` and ``kestrel_protocol`` sources to a temp dir (so
mypyc type-checks against exactly what is installed and nothing is written beside the
sources), compiles :data:`~.native.COMPILED_MODULES` there, and moves the extensions and
``BUILD.json`` to ``DEST`` in one rename: a failed build leaves ``DEST`` as it was.
``DEST`` defaults to ``runtime/_compiled/``, which the runtime then uses by default.

Needs mypy, setuptools (``pip install mypy setuptools``), a C compiler and the
Python headers. Failures follow the command-line convention (docs/cli.md): one line
``kestrel: CODE: message`` on stderr.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from kestrel_protocol.exits import cli_error_line, exit_code_for

from .native import (
    BUILD_FILE,
    C_MODULES,
    COMPILED_MODULES,
    DEFAULT_BUILD_DIR,
    RUNTIME,
    module_file,
    source_digest,
)

__all__ = ["BuildError", "build", "main", "missing_prerequisites", "source_closure"]

FIRST_PARTY = ("kestrel_sdk", "kestrel_protocol")
INSTALL = "pip install mypy setuptools"


class BuildError(Exception):
    """The build cannot run or failed; ``code`` is the command-line convention's."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def missing_prerequisites() -> list[str]:
    """What this machine lacks to compile the engine (empty: nothing)."""
    missing = [
        f"{what} (`{INSTALL}`)"
        for module, what in (("mypyc", "mypy"), ("setuptools", "setuptools"))
        if importlib.util.find_spec(module) is None
    ]
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        missing.append(f"a C compiler (`{compiler}`; e.g. `apt-get install gcc`)")
    headers = Path(sysconfig.get_paths()["include"], "Python.h")
    if not headers.is_file():
        missing.append(f"the Python headers ({headers}; e.g. `apt-get install python3-dev`)")
    return missing


def _module_file(root: Path, name: str) -> Path | None:
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(path: Path, name: str) -> list[str]:
    """Every module name ``path`` (module ``name``) imports, relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            names += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return names


def source_closure(root: Path) -> dict[str, str]:
    """``{relative path: SHA-256}`` of the compiled modules and every first-party module
    they import, directly or not (mypyc may inline their ``Final`` constants)."""
    found: dict[str, Path] = {}
    todo = [f"{RUNTIME}.{module}" for module in COMPILED_MODULES]
    while todo:
        name = todo.pop()
        if name in found or name.split(".")[0] not in FIRST_PARTY:
            continue
        path = _module_file(root, name)
        if path is None:
            continue
        found[name] = path
        todo += _imported(path, name)
    files = [*found.values(), *(_c_source(root, module) for module in C_MODULES)]
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in files
    }


def _c_source(root: Path, module: str) -> Path:
    return root.joinpath(*RUNTIME.split("."), *module.split(".")).with_suffix(".c")


def _copy_sources(work: Path) -> None:
    def ignore(directory: str, names: list[str]) -> list[str]:
        """Only sources: no caches, builds (``_compiled``, staged ``.*``) or data."""
        return [
            name
            for name in names
            if (name in {"__pycache__", "_compiled"} or name.startswith("."))
            or (
                not Path(directory, name).is_dir()
                and not name.endswith((".py", ".pyi", ".typed", ".c"))
            )
        ]

    for top in FIRST_PARTY:
        spec = importlib.util.find_spec(top)
        if spec is None or not spec.submodule_search_locations:
            raise BuildError("CHECK_FAILED", f"{top} is not installed")
        shutil.copytree(next(iter(spec.submodule_search_locations)), work / top, ignore=ignore)


def _run(what: str, argv: list[str], work: Path, env: dict[str, str] | None = None) -> None:
    """Run one compiling step in ``work``; its failure is a ``BuildError`` naming ``what``
    and the first error line of its output."""
    done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        output = done.stdout + done.stderr
        if os.environ.get("KESTREL_DEBUG"):
            sys.stderr.write(output)
        errors = [line for line in output.splitlines() if "error" in line.lower()]
        first = errors[0] if errors else (output.strip().splitlines() or ["no output"])[-1]
        raise BuildError(
            "CHECK_FAILED",
            f"{what} failed (exit {done.returncode}): {first} "
            "(KESTREL_DEBUG=1 prints its whole output)",
        )


def _compile(work: Path) -> None:
    files = [f"{RUNTIME}.{module}".replace(".", "/") + ".py" for module in COMPILED_MODULES]
    env = {key: value for key, value in os.environ.items() if key != "MYPYPATH"}
    _run("mypyc", [sys.executable, "-m", "mypyc", *files], work, env)


_C_SETUP = """
import sys
from setuptools import Extension, setup

modules = sys.argv[1:]
sys.argv[1:] = ["build_ext", "--inplace", "--quiet"]
setup(
    name="kestrel-runtime-c",
    ext_modules=[
        Extension(name, [name.replace(".", "/") + ".c"], extra_compile_args=["-O2"])
        for name in modules
    ],
)
"""


def _compile_c(work: Path) -> None:
    """Build :data:`C_MODULES` in place beside the mypyc modules (setuptools' build_ext)."""
    names = [f"{RUNTIME}.{module}" for module in C_MODULES]
    _run("compiling the C primitives", [sys.executable, "-c", _C_SETUP, *names], work)


def _replaceable(dest: Path) -> bool:
    """An empty directory, or an earlier build (nothing else is ever deleted)."""
    return not any(dest.iterdir()) or (dest / BUILD_FILE).is_file()


def _replace(dest: Path, staged: Path) -> None:
    """Swap ``staged`` in as ``dest`` by renames; an earlier build is removed after."""
    if not dest.exists():
        staged.rename(dest)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
    dest.rename(old / dest.name)
    staged.rename(dest)
    shutil.rmtree(old)


def build(dest: Path) -> dict[str, Any]:
    """Compile :data:`COMPILED_MODULES` into ``dest``; its manifest (``BUILD.json``)."""
    dest = dest.absolute()
    if dest.exists() and not (dest.is_dir() and _replaceable(dest)):
        raise BuildError(
            "INVALID_ARGUMENT",
            f"{dest} exists and is not a compiled-runtime build; name a new or empty directory",
        )
    missing = missing_prerequisites()
    if missing:
        raise BuildError(
            "CHECK_FAILED",
            f"cannot compile the engine: {'; '.join(missing)} missing. "
            "The pure-Python engine keeps working without it",
        )
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    with tempfile.TemporaryDirectory(prefix="kestrel-engine-build-") as temp:
        work = Path(temp)
        _copy_sources(work)
        sources = source_closure(work)
        _compile(work)
        _compile_c(work)
        shared = sorted(work.glob(f"*__mypyc{suffix}"))
        if len(shared) != 1:
            raise BuildError("CHECK_FAILED", f"mypyc wrote {len(shared)} shared libraries")
        manifest: dict[str, Any] = {
            "cache_tag": sys.implementation.cache_tag,
            "digest": source_digest(sources),
            "modules": list(COMPILED_MODULES),
            "shared_library": shared[0].name,
            "sources": sources,
        }
        dest.parent.mkdir(parents=True, exist_ok=True)
        staged = Path(tempfile.mkdtemp(prefix=f".{dest.name}.new-", dir=dest.parent))
        try:
            shutil.copy2(shared[0], staged / shared[0].name)
            runtime_dir = work.joinpath(*RUNTIME.split("."))
            for module in (*COMPILED_MODULES, *C_MODULES):
                target = staged / module_file(module)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(runtime_dir / module_file(module), target)
            text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
            (staged / BUILD_FILE).write_text(text, encoding="utf-8")
            _replace(dest, staged)
        finally:
            shutil.rmtree(staged, ignore_errors=True)
    return manifest


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(cli_error_line("USAGE", message) + "\n")
        raise SystemExit(int(exit_code_for("USAGE")))


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(
        prog="python -m kestrel_sdk.runtime.build",
        description="Compile the Kestrel engine and step path with mypyc (optional; pure "
        "Python is the default and gives identical roots).",
    )
    parser.add_argument(
        "--dest",
        type=Path,
        default=DEFAULT_BUILD_DIR,
        help=f"build directory (default: {DEFAULT_BUILD_DIR}, used automatically); "
        "another one is used with KESTREL_ENGINE=DIR",
    )
    args = parser.parse_args(argv)
    sys.stdout.write(f"compiling {len(COMPILED_MODULES)} runtime modules with mypyc…\n")
    sys.stdout.flush()
    try:
        manifest = build(args.dest)
    except BuildError as exc:
        sys.stderr.write(cli_error_line(exc.code, exc.message) + "\n")
        return int(exit_code_for(exc.code))
    sys.stdout.write(
        f"compiled runtime in {args.dest.absolute()} "
        f"({manifest['cache_tag']}, sources {manifest['digest'][:12]})\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
