"""No import circle in ``kestrel_sdk.runtime``, found with grimp (import-linter's graph).

What counts as a circle: a chain of written imports leading from a module back to itself.
Every import statement is an edge, wherever it stands: at module level, under
``if TYPE_CHECKING:``, inside a function, in a package's ``__init__`` (a barrel
re-exporting its modules). ``from .engine import X`` is an edge to the package
``engine`` (its ``__init__``), so a module of a package that imports its own barrel while
the barrel imports it is a circle. Python's initialising a package before any of its
modules is not an edge: it is written nowhere, and counting it would make every barrel a
circle with the modules it re-exports. Modules loaded by name at run time
(``importlib.import_module``, as ``kestrel_sdk.runtime``'s ``__getattr__`` does) are not
imports the graph can see; that barrel's ``TYPE_CHECKING`` imports name the same modules
and are counted.

The graph is that of all of ``kestrel_sdk``, so a circle passing through a module outside
the runtime and back is found too.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest


def _graph(package: str) -> grimp.ImportGraph:
    return grimp.build_graph(
        package,
        include_external_packages=False,
        exclude_type_checking_imports=False,
        cache_dir=None,
    )


def import_circles(graph: grimp.ImportGraph, within: str) -> list[list[str]]:
    """Each circle through a module of ``within`` (the package or its modules), as one
    chain of modules from a module back to it (a strongly connected component's shortest
    circle through its first module), sorted."""
    modules = sorted(graph.modules)
    imports = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in modules:  # Tarjan's algorithm, iterative
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            module, at = work.pop()
            if at == 0:
                index[module] = low[module] = len(index)
                stack.append(module)
                on_stack.add(module)
            elif at <= len(imports[module]):
                low[module] = min(low[module], low[imports[module][at - 1]])
            for step in range(at, len(imports[module])):
                other = imports[module][step]
                if other not in index:
                    work.append((module, step + 1))
                    work.append((other, 0))
                    break
                if other in on_stack:
                    low[module] = min(low[module], index[other])
            else:
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1 or module in imports[module]:
                        components.append(sorted(component))
    circles = []
    for component in components:
        if not any(m == within or m.startswith(within + ".") for m in component):
            continue
        first = component[0]
        back = min(
            (graph.find_shortest_chain(importer=m, imported=first) or (m, first))
            for m in imports[first]
            if m in component
        )
        circles.append([first, *back])
    return sorted(circles)


def _described(circles: list[list[str]]) -> str:
    return "\n".join(" -> ".join(circle) for circle in circles)


def test_the_runtime_has_no_import_circle() -> None:
    circles = import_circles(_graph("kestrel_sdk"), "kestrel_sdk.runtime")
    assert not circles, f"import circles in kestrel_sdk.runtime:\n{_described(circles)}"


def test_horizons_importing_the_runtime_that_owns_them_is_a_circle() -> None:
    """``horizon.py`` importing the service that builds the horizons (as it imported
    ``live.py`` when the sessions' cache built them), planted in the real graph, is
    reported as one circle naming both modules."""
    graph = _graph("kestrel_sdk")
    horizon, service = "kestrel_sdk.runtime.horizon", "kestrel_sdk.runtime.service"
    graph.add_import(importer=horizon, imported=service)

    circles = import_circles(graph, "kestrel_sdk.runtime")

    assert len(circles) == 1, _described(circles)
    assert {horizon, service} <= set(circles[0]), _described(circles)


def _plant(root: Path, files: dict[str, str]) -> None:
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""Planted."""\n\nfrom __future__ import annotations\n\n{source}')


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.split(".")[0] == "planted_house"]:
        del sys.modules[name]


def test_a_planted_type_checking_circle_is_found(planted: Path) -> None:
    _plant(
        planted,
        {
            "planted_house/__init__.py": "",
            "planted_house/a.py": "from typing import TYPE_CHECKING\n\n"
            "if TYPE_CHECKING:\n    from .b import B\n",
            "planted_house/b.py": "from .a import TYPE_CHECKING as B\n",
            "planted_house/c.py": "from .a import TYPE_CHECKING\n",
        },
    )

    circles = import_circles(_graph("planted_house"), "planted_house")

    assert circles == [["planted_house.a", "planted_house.b", "planted_house.a"]]


def test_a_module_importing_its_own_barrel_is_a_circle_a_barrel_alone_is_not(
    planted: Path,
) -> None:
    _plant(
        planted,
        {
            "planted_house/__init__.py": "",
            "planted_house/shelf/__init__.py": "from .box import Box\nfrom .lid import Lid\n",
            "planted_house/shelf/box.py": "class Box:\n    pass\n",
            "planted_house/shelf/lid.py": "from . import Box\n\nLid = Box\n",
        },
    )

    circles = import_circles(_graph("planted_house"), "planted_house")

    # the barrel re-exporting box (which imports nothing) is no circle; lid, importing
    # the barrel that imports it, is
    shelf = "planted_house.shelf"
    assert circles == [[shelf, f"{shelf}.lid", shelf]]
