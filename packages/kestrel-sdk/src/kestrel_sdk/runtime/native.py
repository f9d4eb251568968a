"""Which runtime runs: these pure-Python modules, or a mypyc build of its step path (optional).

``python -m kestrel_sdk.runtime.build`` compiles :data:`COMPILED_MODULES` (the engine and
the rest of the step path: the service, the live sessions, the SQLite store and its step
files, the pentads) into a build directory that mirrors the package: one shim extension
per module (``engine/core…so``, ``service…so``, ``sqlite/store…so``), one shared
``<hash>__mypyc`` library, the :data:`C_MODULES` (four primitives written in C: a model's
construction, a step file's checked append, the search for a resting order's next bar
and a protocol object's dump) and ``BUILD.json`` (the
interpreter's cache tag and the SHA-256 of every source the build was type-checked
against: the compiled modules, the first-party modules they import, whose ``Final``
constants mypyc may inline, and the C sources).
:func:`activate`, called by each package holding compiled modules before it imports
anything else, picks the runtime by ``KESTREL_ENGINE`` (once per process):

- unset: the build in ``runtime/_compiled/`` if there is one and it matches the current
  sources and interpreter; a stale or foreign build is ignored with one warning;
- ``pure``: never a compiled build;
- ``compiled``: the build in ``runtime/_compiled/``, refused loudly if missing or stale;
- a directory: the build there, refused loudly if stale or foreign.

Both give identical roots (``tests/kestrel_sdk/runtime/test_native.py``).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "BUILD_FILE",
    "COMPILED_MODULES",
    "C_MODULES",
    "DEFAULT_BUILD_DIR",
    "REBUILD",
    "RUNTIME",
    "CompiledEngineError",
    "activate",
    "build_problems",
    "c_function",
    "engine",
    "engine_dir",
    "module_file",
    "source_digest",
    "source_file",
]

log = logging.getLogger(__name__)

RUNTIME = "kestrel_sdk.runtime"
#: The compiled modules, relative to :data:`RUNTIME`: every engine module, and what a
#: step runs through around the engine.
COMPILED_MODULES = (
    "engine.account",
    "engine.blotter",
    "engine.bus",
    "engine.core",
    "engine.fill",
    "engine.frame",
    "engine.grade",
    "engine.orders",
    "engine.program",
    "engine.risk",
    "engine.scaled",
    "engine.trades",
    "engine.wire",
    "live",
    "models",
    "pentads",
    "service",
    "sqlite.store",
    "steps",
)
#: The C primitives a build holds beside them (``<module>.c``, relative to :data:`RUNTIME`):
#: each module imports its own when it is there and does the same in Python when not.
C_MODULES = ("_append", "_dump", "engine._construct", "engine._scan")
BUILD_FILE = "BUILD.json"
DEFAULT_BUILD_DIR = Path(__file__).resolve().parent / "_compiled"
REBUILD = "python -m kestrel_sdk.runtime.build"

Engine = Literal["compiled", "pure"]


class CompiledEngineError(ImportError):
    """``KESTREL_ENGINE`` names a compiled build that cannot run these sources here."""


@dataclass
class _Selection:
    chosen: bool = False
    engine: Engine = "pure"
    directory: Path | None = None


_SELECTED = _Selection()


def engine() -> Engine:
    """``"compiled"`` when :data:`COMPILED_MODULES` run from a mypyc build, else ``"pure"``."""
    return _SELECTED.engine


def engine_dir() -> Path | None:
    """The build directory the compiled modules were loaded from (``None`` when pure)."""
    return _SELECTED.directory


def source_file(relative: str) -> Path | None:
    """Where ``relative`` (``kestrel_sdk/runtime/engine/core.py``) is installed now."""
    spec = importlib.util.find_spec(relative.split("/", 1)[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent / relative


def module_file(module: str) -> str:
    """Where a build holds the shim of ``module`` (relative to :data:`RUNTIME`)."""
    return module.replace(".", "/") + importlib.machinery.EXTENSION_SUFFIXES[0]


def _sha256(path: Path | None) -> str:
    if path is None or not path.is_file():
        return "missing"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_digest(hashes: dict[str, str]) -> str:
    """One SHA-256 over ``{relative path: SHA-256 of its bytes}``, in path order."""
    lines = "".join(f"{path}\0{hashes[path]}\n" for path in sorted(hashes))
    return hashlib.sha256(lines.encode()).hexdigest()


def _manifest(directory: Path) -> dict[str, Any]:
    try:
        data = json.loads((directory / BUILD_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{directory} has no {BUILD_FILE}") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{directory / BUILD_FILE} cannot be read ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("sources"), dict):
        raise ValueError(f"{directory / BUILD_FILE} is not a compiled-runtime manifest")
    return data


def build_problems(directory: Path) -> list[str]:
    """What keeps the build in ``directory`` from running here (empty: it can run)."""
    try:
        manifest = _manifest(directory)
    except ValueError as exc:
        return [str(exc)]
    problems: list[str] = []
    tag = sys.implementation.cache_tag
    if manifest.get("cache_tag") != tag:
        problems.append(f"it was built for {manifest.get('cache_tag')}, this Python is {tag}")
    if manifest.get("modules") != list(COMPILED_MODULES):
        problems.append(
            f"it compiles {manifest.get('modules')}, the engine has {list(COMPILED_MODULES)}"
        )
    files = [module_file(name) for name in (*COMPILED_MODULES, *C_MODULES)]
    files.append(str(manifest.get("shared_library")))
    absent = [name for name in files if not (directory / name).is_file()]
    if absent:
        problems.append(f"it lacks {', '.join(absent)}")
    recorded: dict[str, str] = manifest["sources"]
    current = {path: _sha256(source_file(path)) for path in recorded}
    changed = sorted(path for path in recorded if recorded[path] != current[path])
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if changed[5:] else "")
        problems.append(f"the sources changed since it was built: {shown}")
    elif manifest.get("digest") != source_digest(current):
        problems.append(
            f"its source digest {manifest.get('digest')} is not the current sources' "
            f"{source_digest(current)}"
        )
    return problems


def _load_shared_library(directory: Path, filename: str) -> None:
    """Import the build's ``<hash>__mypyc`` library by path: the shims import it by name."""
    name = filename.split(".", 1)[0]
    path = directory / filename
    loaded = sys.modules.get(name)
    if loaded is not None:
        if Path(getattr(loaded, "__file__", "")) != path:
            raise CompiledEngineError(f"another build's {name} is already loaded")
        return
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CompiledEngineError(f"{path} is not an extension module this Python can load")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


def _choose() -> Path | None:
    """The build directory to run, or ``None`` for pure (see the module docstring)."""
    choice = os.environ.get("KESTREL_ENGINE", "").strip()
    if choice == "pure":
        return None
    if not choice and not DEFAULT_BUILD_DIR.exists():
        return None
    directory = DEFAULT_BUILD_DIR if choice in {"", "compiled"} else Path(choice).absolute()
    problems = build_problems(directory)
    if not problems:
        return directory
    why = "; ".join(problems)
    if choice:
        raise CompiledEngineError(
            f"KESTREL_ENGINE={choice}: the compiled runtime in {directory} cannot run: {why}. "
            f"Rebuild it with `KESTREL_ENGINE=pure {REBUILD} --dest {directory}`, "
            "or set KESTREL_ENGINE=pure"
        )
    log.warning(
        "ignoring the compiled runtime in %s (%s); running pure Python. Rebuild it with `%s`",
        directory,
        why,
        REBUILD,
    )
    return None


def activate(package: str, package_path: list[str]) -> None:
    """Put the chosen build's part for ``package`` (:data:`RUNTIME` or one of its
    subpackages) first on its ``__path__``; the choice is made on the first call."""
    if not _SELECTED.chosen:
        directory = _choose()
        if directory is not None:
            _load_shared_library(directory, str(_manifest(directory)["shared_library"]))
            _SELECTED.engine = "compiled"
            _SELECTED.directory = directory
        _SELECTED.chosen = True
    if _SELECTED.directory is not None:
        relative = package.removeprefix(RUNTIME).lstrip(".").replace(".", "/")
        package_path.insert(0, str(_SELECTED.directory / relative))


def c_function(module: str, name: str) -> Any:
    """Function ``name`` of the C primitive ``module`` (one of :data:`C_MODULES`) when the
    compiled runtime runs, else ``None``: the caller then does the same in Python."""
    if _SELECTED.directory is None:
        return None
    return getattr(importlib.import_module(f"{RUNTIME}.{module}"), name)
