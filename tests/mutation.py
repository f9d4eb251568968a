"""Mutation testing of the engine, the language and canonical JSON (issue 18).

    uv run python tests/mutation.py [engine|lang|canonical ...] [--file NAME] [--jobs N]
                                    [--survivors [--unlisted]] [--fresh] [--list] [--report]

A small driver on :mod:`ast` rather than mutmut or cosmic-ray: both run a fresh test
process per mutant (cosmic-ray) or need the sources under ``src/`` at the repository root
(mutmut 3), and the canonical tests alone take minutes per process on this machine. Here
the modules and pytest are imported once; each mutant runs in a forked child that swaps
the mutated function's code object into the live function (so every ``from x import f``
sees it) and runs, fastest first and stopping at the first failure, the tests of its
module that call that function (a profile of the unmutated run says which; module-level
mutants run them all), so a mutant reported as surviving has passed every test that could
see it. ``--survivors --unlisted`` reruns only the survivors not listed as equivalent.

Mutations (one per mutant): comparison flips (``<``/``<=``, ``>``/``>=``, ``==``/``!=``,
``in``/``not in``, ``is``/``is not``), arithmetic swaps (``+``/``-``, ``*``/``/``, ``//``
→ ``*``, ``%`` → ``//``), ``and``/``or``, dropping ``not`` or a unary minus, ``min``/``max``
and ``any``/``all`` swaps, dropping ``abs``, integers ``n`` → ``n + 1``, ``True``/``False``,
word-like string constants (statuses, reasons, codes), ``break``/``continue``, and deleting
a call statement, an augmented assignment, an attribute or item assignment or a
re-assignment. Function bodies and module-level constants are mutated; messages (strings
with spaces, f-string text), docstrings, annotations, default arguments and class bodies
are not. Equivalent mutants are listed, each with its reason, in
``tests/mutation_equivalents.toml``; the score table lives in ``tests/README.md``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import json
import os
import re
import signal
import sys
import time
import tomllib
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SDK = "packages/kestrel-sdk/src/kestrel_sdk/runtime"
RESULTS = ROOT / ".mutation"
EQUIVALENTS = ROOT / "tests" / "mutation_equivalents.toml"


@dataclass(frozen=True)
class Target:
    files: tuple[str, ...]
    tests: tuple[str, ...]
    slow: tuple[str, ...]  # left out of the first pass only


TARGETS = {
    "engine": Target(
        tuple(
            f"{SDK}/engine/{n}.py"
            for n in ("fill", "orders", "account", "core", "loop", "program", "grade")
        ),
        ("tests/kestrel_sdk/runtime/engine",),
        (
            "tests/kestrel_sdk/runtime/engine/test_scaled.py",
            "tests/kestrel_sdk/runtime/engine/test_frame.py::"
            "test_minute_200k_first_5000_bars_are_pinned",
        ),
    ),
    "lang": Target(
        tuple(f"{SDK}/lang/{n}.py" for n in ("lexer", "parser", "validate")),
        ("tests/kestrel_sdk/runtime/lang",),
        (
            "tests/kestrel_sdk/runtime/lang/test_parser.py::test_more_than_10000_statements_is_refused",
        ),
    ),
    "canonical": Target(
        ("packages/kestrel-protocol/src/kestrel_protocol/canonical.py",),
        ("tests/kestrel_protocol/test_canonical.py",),
        tuple(
            f"tests/kestrel_protocol/test_canonical.py::{name}"
            for name in (
                "test_corpus_is_byte_identical_to_rfc8785",
                "test_deeply_nested_corpus_is_byte_identical_to_rfc8785",
            )
        ),
    ),
}

# -- where to mutate ---------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,30}")
_SWAP_CMP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_SWAP_BIN: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
    ast.LShift: ast.RShift,
}
_SWAP_CALL = {"min": "max", "max": "min", "any": "all", "all": "any"}

Slot = tuple[ast.AST, str, int | None]  # parent, field, index in a list field
Variant = tuple[str, Callable[[ast.AST], ast.AST]]


def _get(slot: Slot) -> Any:
    parent, field, index = slot
    value = getattr(parent, field)
    return value if index is None else value[index]


def _put(slot: Slot, node: ast.AST) -> None:
    parent, field, index = slot
    if index is None:
        setattr(parent, field, node)
    else:
        getattr(parent, field)[index] = node


def _with_op(node: ast.AST, attr: str, op: ast.AST) -> ast.AST:
    new = ast.copy_location(type(node)(**{f: getattr(node, f) for f in node._fields}), node)
    setattr(new, attr, op)
    return new


def _deletable(node: ast.AST, bound: set[str]) -> bool:
    """A call statement, an augmented assignment, an attribute or item assignment, or a
    re-assignment of a name already bound in the function."""
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Call)
    if isinstance(node, ast.Assign):
        return all(
            isinstance(t, ast.Attribute | ast.Subscript)
            or (isinstance(t, ast.Name) and t.id in bound)
            for t in node.targets
        )
    return isinstance(node, ast.AugAssign)


def _variants(node: ast.AST, deletable: bool) -> list[Variant]:
    """The mutations of ``node``."""
    out: list[Variant] = []
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in _SWAP_CMP:
                ops = [*node.ops]
                ops[i] = _SWAP_CMP[type(op)]()
                out.append(("cmp", lambda n, ops=ops: _with_op(n, "ops", ops)))  # type: ignore[misc]
    elif isinstance(node, ast.BinOp) and type(node.op) in _SWAP_BIN:
        out.append(("op", lambda n: _with_op(n, "op", _SWAP_BIN[type(n.op)]())))  # type: ignore[attr-defined]
    elif isinstance(node, ast.BoolOp):
        flip = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        out.append(("bool", lambda n: _with_op(n, "op", flip)))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
        out.append(("unary", lambda n: n.operand))  # type: ignore[attr-defined]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        if name in _SWAP_CALL:
            swapped = _SWAP_CALL[name]
            out.append(("call", lambda n: _with_op(n, "func", ast.Name(swapped, ast.Load()))))
        elif name == "abs" and len(node.args) == 1:
            out.append(("call", lambda n: n.args[0]))  # type: ignore[attr-defined]
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            out.append(("const", lambda n: ast.Constant(not n.value)))  # type: ignore[attr-defined]
        elif isinstance(value, int):
            out.append(("const", lambda n: ast.Constant(n.value + 1)))  # type: ignore[attr-defined]
        elif isinstance(value, str) and _WORD.fullmatch(value):
            out.append(("const", lambda n: ast.Constant(f"XX{n.value}XX")))  # type: ignore[attr-defined]
    elif isinstance(node, ast.Break | ast.Continue):
        other = ast.Continue if isinstance(node, ast.Break) else ast.Break
        out.append(("flow", lambda n: ast.copy_location(other(), n)))
    if deletable:
        out.append(("delete", lambda n: ast.copy_location(ast.Pass(), n)))
    return out


@dataclass(frozen=True)
class Site:
    slot: Slot
    scope: str  # the outermost function's qualname, or "" for a module-level statement
    statement: int  # index of the module-level statement holding the site
    display: Slot  # what the mutant's id shows (the site, or its parent expression)
    deletable: bool = False


def _is_type(node: ast.expr) -> bool:
    """A type alias (``Literal[...]``, ``A | B``): nothing runs it."""
    if isinstance(node, ast.Subscript):
        return True
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.BitOr)
        and all(
            isinstance(side, ast.Name | ast.Subscript | ast.Attribute) or _is_type(side)
            for side in (node.left, node.right)
        )
    )


def _sites(tree: ast.Module) -> list[Site]:
    found: list[Site] = []

    def expr(slot: Slot, scope: str, index: int, parent: Slot | None) -> None:
        node = _get(slot)
        if isinstance(node, ast.JoinedStr):  # only the formatted values, not the text
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    expr((part, "value", None), scope, index, None)
            return
        leaf = isinstance(node, ast.Constant | ast.Name)
        found.append(Site(slot, scope, index, parent if leaf and parent else slot))
        for field, value in ast.iter_fields(node):
            if field in {"annotation", "returns", "type_comment", "ctx"}:
                continue
            if isinstance(node, ast.Lambda) and field == "args":
                continue
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if isinstance(item, ast.expr):
                        expr((node, field, k), scope, index, slot)
                    elif isinstance(item, ast.keyword | ast.comprehension):
                        for f2, v2 in ast.iter_fields(item):
                            if isinstance(v2, ast.expr):
                                expr((item, f2, None), scope, index, slot)
                            elif isinstance(v2, list):
                                for k2 in range(len(v2)):
                                    expr((item, f2, k2), scope, index, slot)
            elif isinstance(value, ast.expr):
                expr((node, field, None), scope, index, slot)

    def body(owner: ast.AST, field: str, scope: str, index: int, bound: set[str]) -> None:
        statements = getattr(owner, field)
        for k, st in enumerate(statements):
            slot: Slot = (owner, field, k)
            if k == 0 and isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
                continue  # docstring
            if isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if not isinstance(st, ast.ClassDef):
                    body(st, "body", scope, index, bound | {a.arg for a in st.args.args})
                continue
            deletable = _deletable(st, bound)
            if deletable or isinstance(st, ast.Break | ast.Continue):
                found.append(Site(slot, scope, index, slot, deletable))
            simple = not isinstance(st, ast.If | ast.While | ast.For | ast.With | ast.Try)
            for f, value in ast.iter_fields(st):
                if f in {"annotation", "type_comment"}:
                    continue
                if isinstance(value, ast.expr) and f != "targets":
                    expr((st, f, None), scope, index, slot if simple else None)
                elif isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                    body(st, f, scope, index, bound)
                elif isinstance(value, list):
                    for k2, item in enumerate(value):
                        if isinstance(item, ast.expr) and f != "targets":
                            expr((st, f, k2), scope, index, None)
                        elif isinstance(item, ast.ExceptHandler):
                            body(item, "body", scope, index, bound)
            if isinstance(st, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.For):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    bound |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
            if isinstance(st, ast.Assign | ast.AugAssign | ast.AnnAssign):
                for t in st.targets if isinstance(st, ast.Assign) else [st.target]:
                    if isinstance(t, ast.Attribute | ast.Subscript):
                        expr((t, "value", None), scope, index, None)
                        if isinstance(t, ast.Subscript):
                            expr((t, "slice", None), scope, index, None)

    for index, st in enumerate(tree.body):
        if isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef):
            args = {a.arg for a in st.args.args + st.args.kwonlyargs}
            body(st, "body", st.name, index, args)
        elif isinstance(st, ast.ClassDef):
            for member in st.body:
                if isinstance(member, ast.FunctionDef):
                    args = {a.arg for a in member.args.args + member.args.kwonlyargs}
                    body(member, "body", f"{st.name}.{member.name}", index, args)
        elif isinstance(st, ast.Assign | ast.AnnAssign) and st.value is not None:
            names = [
                t.id
                for t in (st.targets if isinstance(st, ast.Assign) else [st.target])
                if isinstance(t, ast.Name)
            ]
            if names and names[0] != "__all__" and not _is_type(st.value):
                expr((st, "value", None), "", index, None)
    return found


# -- mutants -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    key: str  # stable across unrelated edits: file, scope, the code before and after
    file: str
    line: int
    scope: str
    site: int
    variant: int


def _short(node: ast.AST) -> str:
    text = ast.unparse(node).replace("\n", " ")
    return text if len(text) <= 110 else text[:107] + "..."


def _mutate(tree: ast.Module, site: Site, variant: Variant) -> Callable[[], None]:
    """Apply ``variant`` at ``site``; returns the undo."""
    original = _get(site.slot)
    _put(site.slot, variant[1](original))
    return lambda: _put(site.slot, original)


def generate(rel: str) -> list[Mutant]:
    path = ROOT / rel
    tree = ast.parse(path.read_text("utf-8"))
    mutants: list[Mutant] = []
    seen: dict[str, int] = {}
    for s, site in enumerate(_sites(tree)):
        node = _get(site.slot)
        for v, variant in enumerate(_variants(node, site.deletable)):
            before = _short(_get(site.display))
            undo = _mutate(tree, site, variant)
            after = "(deleted)" if variant[0] == "delete" else _short(_get(site.display))
            undo()
            key = f"{Path(rel).name}:{site.scope or '<module>'}: `{before}` -> `{after}`"
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > 1:
                key += f" #{seen[key]}"
            mutants.append(Mutant(key, rel, getattr(node, "lineno", 0), site.scope, s, v))
    return mutants


def _module_name(rel: str) -> str:
    parts = Path(rel).with_suffix("").parts
    return ".".join(parts[parts.index("src") + 1 :])


def _find_code(code: types.CodeType, qualname: str) -> types.CodeType:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_qualname == qualname:
                return const
            with contextlib.suppress(LookupError):
                return _find_code(const, qualname)
    raise LookupError(qualname)


def _live_function(module: types.ModuleType, qualname: str) -> types.FunctionType:
    owner: Any = module
    for part in qualname.split("."):
        owner = owner.__dict__[part] if isinstance(owner, type) else getattr(owner, part)
    if isinstance(owner, property):
        owner = owner.fget
    if isinstance(owner, staticmethod | classmethod):
        owner = owner.__func__
    owner = getattr(owner, "__wrapped__", owner)
    assert isinstance(owner, types.FunctionType), qualname
    return owner


def _install(module: types.ModuleType, scope: str, code: types.CodeType) -> None:
    """Run ``code`` wherever the function ``scope`` is called from now on."""
    live = _live_function(module, scope)
    if code.co_freevars == live.__code__.co_freevars:
        live.__code__ = code
        return
    # A deleted ``super()`` call drops the ``__class__`` cell: a new function on the class.
    cells = dict(zip(live.__code__.co_freevars, live.__closure__ or (), strict=True))
    new = types.FunctionType(
        code, live.__globals__, live.__name__, live.__defaults__,
        tuple(cells[name] for name in code.co_freevars),
    )  # fmt: skip
    new.__kwdefaults__ = live.__kwdefaults__
    owner_name, _, name = scope.rpartition(".")
    owner = getattr(module, owner_name)
    assert isinstance(owner, type), scope
    assert owner.__dict__[name] is live, scope
    setattr(owner, name, new)


def _instrument(files: Iterable[str], seen: set[str]) -> None:
    """Make every function of ``files`` add its scope to ``seen`` when called: a cheap
    record of which functions a test calls (a profiler slows the corpus tests tenfold)."""
    for rel in files:
        module = sys.modules[_module_name(rel)]
        module.__dict__["_MUTATION_SEEN"] = seen
        tree = ast.parse((ROOT / rel).read_text("utf-8"))
        scopes = sorted({site.scope for site in _sites(tree) if site.scope})
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                record = ast.parse("_MUTATION_SEEN.add('__qualname_of_scope__')").body[0]
                node.body.insert(0, record)
        code = compile(ast.fix_missing_locations(tree), str(ROOT / rel), "exec", dont_inherit=True)
        for scope in scopes:
            found = _find_code(code, scope)
            consts = tuple(scope if c == "__qualname_of_scope__" else c for c in found.co_consts)
            _install(module, scope, found.replace(co_consts=consts))


def apply(mutant: Mutant) -> None:
    """Install ``mutant`` in the running process (in a forked child)."""
    path = ROOT / mutant.file
    tree = ast.parse(path.read_text("utf-8"))
    site = _sites(tree)[mutant.site]
    _mutate(tree, site, _variants(_get(site.slot), site.deletable)[mutant.variant])
    module = sys.modules[_module_name(mutant.file)]
    if site.scope:
        code = compile(ast.fix_missing_locations(tree), str(path), "exec", dont_inherit=True)
        _install(module, site.scope, _find_code(code, site.scope))
        return
    statement = tree.body[site.statement]
    assert isinstance(statement, ast.Assign | ast.AnnAssign)
    names = [
        n.id
        for n in ast.walk(statement)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]
    old = {name: module.__dict__[name] for name in names}
    one = ast.fix_missing_locations(ast.Module([statement], []))
    exec(compile(one, str(path), "exec", dont_inherit=True), module.__dict__)
    for other in list(sys.modules.values()):  # ``from x import NAME`` copies the binding
        space = getattr(other, "__dict__", {})
        for name, value in old.items():
            if other is not module and space.get(name) is value:
                space[name] = module.__dict__[name]


# -- running -----------------------------------------------------------------------------


def _scope_of(code: types.CodeType) -> str:
    return code.co_qualname.split(".<locals>", 1)[0]


class _Driver:
    """A pytest plugin: the tests are collected once; then a child runs them all under a
    profiler (which test calls which function, and how long it takes), and a child per
    mutant runs only the tests that call the mutated function, fastest first, with -x.
    A test that never calls a function cannot see its code change, so the selection is
    exact; module-level mutants run every test."""

    def __init__(
        self,
        name: str,
        target: Target,
        todo: list[Mutant],
        *,
        jobs: int,
        equivalent: dict[str, str],
        out: Any,
        fresh: bool,
    ) -> None:
        self.name, self.target, self.todo, self.jobs = name, target, todo, jobs
        self.equivalent, self.out, self.fresh = equivalent, out, fresh
        self.files = {str(ROOT / rel) for rel in target.files}
        self.failed = False
        self.failure = ""

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _profiler(self, scopes: set[str]) -> Callable[[types.FrameType, str, Any], None]:
        files = self.files

        def profile(frame: types.FrameType, event: str, arg: Any) -> None:
            if event == "call" and frame.f_code.co_filename in files:
                scopes.add(_scope_of(frame.f_code))

        return profile

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Iterator[None]:
        called: set[str] = set()
        sys.setprofile(self._profiler(called))
        try:
            return (yield)
        finally:
            sys.setprofile(None)
            if called:  # values a test module computed at import come from unmutated code
                self._say(f"{self.name}: collection called {', '.join(sorted(called))}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.failure = f"{report.nodeid} ({report.when}):\n{report.longreprtext}"

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._say(f"{self.name}: collecting {report.nodeid} failed:\n{report.longreprtext}")
            self.failed = True

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        coverage = RESULTS / f"{self.name}-coverage.json"
        sources = max((ROOT / rel).stat().st_mtime for rel in self.target.files)
        if self.fresh or not coverage.exists() or coverage.stat().st_mtime < sources:
            ((_, verdict, base),) = _run(
                [None], lambda _m: self._coverage(session, coverage), 1, lambda _m: 3600.0
            )
            if verdict != "survived":
                self._say(
                    f"{self.name}: the unmutated tests do not pass ({verdict}); stopping;"
                    f" see {RESULTS / 'errors.txt'}"
                )
                self.failed = True
                return True
            self._say(f"{self.name}: all tests pass in {base:.1f}s")
        profile: dict[str, dict[str, Any]] = json.loads(coverage.read_text())
        # A test the profile has not seen (added since) is run for every mutant.
        unseen = {"scopes": None, "seconds": 1.0}
        seen = {it.nodeid: profile.get(it.nodeid, unseen) for it in session.items}
        items = sorted(session.items, key=lambda it: float(seen[it.nodeid]["seconds"]))

        def selected(mutant: Mutant | None) -> list[pytest.Item]:
            assert mutant is not None
            return [
                it
                for it in items
                if not mutant.scope
                or seen[it.nodeid]["scopes"] is None
                or mutant.scope in seen[it.nodeid]["scopes"]
            ]

        def timeout(mutant: Mutant | None) -> float:
            return 10 + 2 * sum(float(seen[it.nodeid]["seconds"]) for it in selected(mutant))

        self._say(f"{self.name}: {len(self.todo)} mutants")
        todo: list[Mutant | None] = list(self.todo)
        runs = _run(todo, lambda m: _mutant_child(session, m, selected(m)), self.jobs, timeout)
        for n, (mutant, verdict, spent) in enumerate(runs, 1):
            assert mutant is not None
            record = {**asdict(mutant), "verdict": verdict, "seconds": round(spent, 1)}
            _save(record)
            if verdict not in {"killed", "timeout"}:
                tag = "equivalent" if mutant.key in self.equivalent else verdict.upper()
                self._say(f"  [{n}/{len(todo)}] {tag}: {mutant.file}:{mutant.line} {mutant.key}")
        return True

    def _coverage(self, session: pytest.Session, path: Path) -> int:
        profile: dict[str, dict[str, Any]] = {}
        scopes: set[str] = set()
        _instrument(self.target.files, scopes)
        for i, item in enumerate(session.items):
            scopes.clear()
            _clear_caches(self.target)
            started = time.perf_counter()
            _protocol(session.items, i)
            profile[item.nodeid] = {
                "scopes": sorted(scopes),
                "seconds": time.perf_counter() - started,
            }
            if session.testsfailed:
                (RESULTS / "errors.txt").write_text(self.failure)
                return 1
        path.write_text(json.dumps(profile))
        return 0


def _protocol(items: list[pytest.Item], i: int) -> None:
    nextitem = items[i + 1] if i + 1 < len(items) else None
    items[i].config.hook.pytest_runtest_protocol(item=items[i], nextitem=nextitem)


def _clear_caches(target: Target) -> None:
    """Results remembered from an earlier test would hide which functions a test calls."""
    for rel in target.files:
        for value in vars(sys.modules[_module_name(rel)]).values():
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()


def _mutant_child(session: pytest.Session, mutant: Mutant | None, items: list[pytest.Item]) -> int:
    assert mutant is not None
    apply(mutant)
    for i in range(len(items)):
        _protocol(items, i)
        if session.testsfailed:
            return 1
    return 0


def _fork(work: Callable[[], int]) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 99
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        code = work()
    except BaseException:
        import traceback

        with (RESULTS / "errors.txt").open("a") as log:
            log.write(traceback.format_exc())
    finally:
        os._exit(code)


def _run(
    items: list[Mutant | None],
    work: Callable[[Mutant | None], int],
    jobs: int,
    timeout: Callable[[Mutant | None], float],
) -> Iterator[tuple[Mutant | None, str, float]]:
    """Yield (mutant, "killed" | "survived" | "timeout" | "error N", seconds)."""
    pending = list(reversed(items))
    running: dict[int, tuple[Mutant | None, float, float]] = {}
    while pending or running:
        while pending and len(running) < jobs:
            mutant = pending.pop()
            pid = _fork(lambda m=mutant: work(m))  # type: ignore[misc]
            running[pid] = (mutant, time.monotonic(), timeout(mutant))
        time.sleep(0.01)
        for pid, (mutant, started, limit) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            spent = time.monotonic() - started
            if not done and spent > limit:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                del running[pid]
                yield mutant, "timeout", spent
            elif done:
                del running[pid]
                code = os.waitstatus_to_exitcode(status)
                yield mutant, {0: "survived", 1: "killed"}.get(code, f"error {code}"), spent


def _store(rel: str) -> Path:
    return RESULTS / f"{Path(rel).stem}.json"


def _results(files: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The last verdict of every mutant of ``files`` (one JSON store per source file)."""
    found: dict[str, dict[str, Any]] = {}
    for rel in files:
        if _store(rel).exists():
            found.update((r["key"], r) for r in json.loads(_store(rel).read_text()))
    return found


def _save(record: dict[str, Any]) -> None:
    results = _results([record["file"]])
    results[record["key"]] = record
    _store(record["file"]).write_text(json.dumps(list(results.values()), indent=1))


def _equivalents(name: str) -> dict[str, str]:
    if not EQUIVALENTS.exists():
        return {}
    table: dict[str, str] = tomllib.loads(EQUIVALENTS.read_text("utf-8")).get(name, {})
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help=f"any of {', '.join(TARGETS)} (default: all)")
    parser.add_argument("--file", help="only this file of the target (e.g. fill.py)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--survivors", action="store_true", help="rerun the last survivors")
    parser.add_argument(
        "--unlisted",
        action="store_true",
        help="with --survivors: leave out the survivors listed as equivalent",
    )
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--report", action="store_true", help="print the last results only")
    parser.add_argument(
        "--fresh", action="store_true", help="profile the tests again (also after a source edit)"
    )
    opts = parser.parse_args()
    unknown = set(opts.targets) - set(TARGETS)
    if unknown:
        parser.error(f"unknown target(s) {', '.join(sorted(unknown))}; use {', '.join(TARGETS)}")
    RESULTS.mkdir(exist_ok=True)
    os.chdir(ROOT)
    out = os.fdopen(os.dup(1), "w")  # pytest captures 1 and 2 while it runs
    failed = False
    for name in opts.targets or list(TARGETS):
        target = TARGETS[name]
        files = [f for f in target.files if not opts.file or Path(f).name == opts.file]
        mutants = [m for rel in files for m in generate(rel)]
        equivalent = _equivalents(name)
        if opts.list:
            for m in mutants:
                print(f"{m.file}:{m.line}  {m.key}")
            continue
        if not opts.report:
            previous = {k: r["verdict"] for k, r in _results(files).items()}
            todo = [
                m
                for m in mutants
                if not opts.survivors
                or (
                    previous.get(m.key) not in {"killed", "timeout"}
                    and not (opts.unlisted and m.key in equivalent)
                )
            ]
            failed |= _run_target(
                name, target, todo, jobs=opts.jobs, equivalent=equivalent, out=out, fresh=opts.fresh
            )
        failed |= _report(name, target, mutants, equivalent)
    return 1 if failed else 0


def _run_target(
    name: str,
    target: Target,
    todo: list[Mutant],
    *,
    jobs: int,
    equivalent: dict[str, str],
    out: Any,
    fresh: bool,
) -> bool:
    import hypothesis

    # No example database (mutants would write failures into the worktree's) and a fixed
    # seed, so a mutant's verdict is the same on every run.
    # Deadlines and health checks judge speed, which the profiler and a busy machine skew.
    hypothesis.settings.register_profile(
        "mutation",
        database=None,
        derandomize=True,
        deadline=None,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    hypothesis.settings.load_profile("mutation")
    for rel in target.files:
        importlib.import_module(_module_name(rel))
    driver = _Driver(name, target, todo, jobs=jobs, equivalent=equivalent, out=out, fresh=fresh)
    # -p no:randomly keeps the collected order; the driver times each mutant out itself.
    args = [*target.tests, "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--timeout=0"]
    saved = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # pytest's own report: only ours is shown
    try:
        code = pytest.main(args, plugins=[driver])
    finally:
        os.dup2(saved, 1)
    if code not in (0, 5):
        print(f"{name}: pytest ended with {code!r}", file=out)
    return driver.failed or code not in (0, 5)


def _report(
    name: str,
    target: Target,
    mutants: list[Mutant],
    equivalent: dict[str, str],
) -> bool:
    """Print the score table; True when a mutant survived that is not listed equivalent."""
    results = _results(target.files)
    print(f"\n{name} ({time.strftime('%Y-%m-%d')})")
    print("| file | generated | killed | equivalent | survived | not run |")
    print("|---|---:|---:|---:|---:|---:|")
    keys = {m.key for m in mutants}
    bad = False
    for rel in target.files:
        mine = [m for m in mutants if m.file == rel]
        verdicts = [results.get(m.key, {}).get("verdict", "not run") for m in mine]
        killed = sum(v in {"killed", "timeout"} for v in verdicts)
        alive = [m for m, v in zip(mine, verdicts, strict=True) if v == "survived"]
        errors = [m for m, v in zip(mine, verdicts, strict=True) if v.startswith("error")]
        eq = sum(m.key in equivalent for m in alive)
        bad |= len(alive) > eq or bool(errors)
        print(
            f"| {Path(rel).name} | {len(mine)} | {killed} | {eq} | {len(alive) - eq} "
            f"| {verdicts.count('not run') + len(errors)} |"
        )
        for m in alive:
            if m.key not in equivalent:
                print(f"    survived: {m.file}:{m.line} {m.key}")
        for m in errors:
            print(f"    driver error: {m.file}:{m.line} {m.key} (see .mutation/errors.txt)")
    names = {Path(m.file).name for m in mutants}
    for key, why in equivalent.items():
        if key.split(":", 1)[0] not in names:
            continue
        state = results.get(key, {}).get("verdict")
        if key not in keys or state not in {None, "survived"}:
            print(f"stale equivalent entry ({state or 'not generated'}): {key} ({why})")
    return bad


if __name__ == "__main__":
    sys.exit(main())
