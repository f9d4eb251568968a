"""The optional compiled runtime (mypyc: the engine and the step path around it): a real
build gives the same frame, blotter, record and grade roots as pure Python on
minute-200k, and ``KESTREL_ENGINE`` picks the runtime (a stale build is never run
silently).

The build needs mypy, setuptools and a C compiler: missing, the tests that build skip
locally naming what is missing, and fail under ``CI=true`` (``tests/peers``)."""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kestrel_protocol
import kestrel_sdk
import pytest
from kestrel_sdk.runtime import build, native
from kestrel_sdk.runtime.build import main, missing_prerequisites, source_closure

from tests.peers import require_peer

RUNTIME_DIR = Path(native.__file__).parent
REPO = Path(__file__).resolve().parents[3]

# One session over the whole tape through the SDK: a market entry with a stop guard (an
# alias), a resting limit buy, a never-filling limit sell that is cancelled, a buy stop,
# a market exit, then the rest of the tape; close and grade.
SESSION = r"""
import json, sys
import anyio
from kestrel_sdk import create_sdk, local_transport
import kestrel_sdk.runtime.engine.core as core
import kestrel_sdk.runtime.engine.grade as grade
import kestrel_sdk.runtime.service as service
import kestrel_sdk.runtime.sqlite.store as store
import kestrel_sdk.runtime.engine.wire as wire
from kestrel_sdk.runtime import native, steps

SOURCES = [
    "buy 100 ACME as entry\nsell 100 ACME stop 90.00 tif gtc as guard\nadvance 20000",
    "buy 50 ACME limit 70.00 tif gtc as dip\nsell 50 ACME limit 200.00 tif gtc as never\n"
    "advance 40000",
    "cancel never\nbuy 10 ACME stop 60.00 tif gtc\nadvance 60000",
    "sell 60 ACME\nadvance 50000",
]

async def main(home):
    async with create_sdk(local_transport(home=home)) as sdk:
        opened = await sdk.open_session("minute-200k")
        session = opened.session
        frames = []
        for source in SOURCES:
            response = await session.submit(source)
            frames.append(response.delivery.frame_root)
        remaining = response.delivery.frame.clock.remaining
        response = await session.submit(f"advance {remaining}")
        frames.append(response.delivery.frame_root)
        blotter = await session.blotter()
        record = await session.close()
        graded = await sdk.grade_until_done(session.id)
    print(json.dumps({
        "engine": native.engine(),
        "modules": [m.__file__ for m in (core, grade, service, store)],
        "c": [wire._C_CONSTRUCT is not None, steps._C_APPEND is not None],
        "frames": frames,
        "disposition": response.disposition,
        "remaining": response.delivery.frame.clock.remaining,
        "orders": len(blotter.orders),
        "fills": len(blotter.fills),
        "blotter": blotter.root,
        "head": record.head,
        "record": record.root,
        "grade": graded.root,
    }))

anyio.run(main, sys.argv[1])
"""


def _env(engine: str) -> dict[str, str]:
    return {**os.environ, "KESTREL_ENGINE": engine}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real mypyc build of the runtime, made once for this module."""
    missing = missing_prerequisites()
    require_peer(
        None if missing else True,
        what="; ".join(missing),
        install="uv sync --all-packages; apt-get install gcc",
    )
    dest = tmp_path_factory.mktemp("runtime") / "compiled"
    done = subprocess.run(
        [sys.executable, "-m", "kestrel_sdk.runtime.build", "--dest", str(dest)],
        env=_env("pure"),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dest


def _child(script: str, where: Path, engine: str, timeout: float = 300) -> dict[str, Any]:
    """What ``script``, run in a new process on ``engine`` with ``where`` as its
    argument, prints as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(where)],
        env=_env(engine),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_compiled_and_pure_engines_give_identical_roots(compiled: Path, tmp_path: Path) -> None:
    fast = _child(SESSION, tmp_path / "compiled", str(compiled))
    pure = _child(SESSION, tmp_path / "pure", "pure")
    # Each child really ran the engine it was given.
    assert fast.pop("engine") == "compiled"
    modules = ("engine/core", "engine/grade", "service", "sqlite/store")
    shims = [compiled / native.module_file(name.replace("/", ".")) for name in modules]
    assert [Path(m) for m in fast.pop("modules")] == shims
    assert all(shim.is_file() for shim in shims)
    assert fast.pop("c") == [True, True]  # the C primitives made its models and lines
    assert pure.pop("c") == [False, False]
    assert pure.pop("engine") == "pure"
    assert [Path(m) for m in pure.pop("modules")] == [RUNTIME_DIR / f"{m}.py" for m in modules]
    assert fast == pure
    # The session exercised what it claims: the whole tape, every order in the blotter.
    assert (pure["remaining"], pure["disposition"]) == (0, "stood-down")
    assert pure["orders"] == 6
    assert pure["fills"] == 5  # entry, guard, dip, the buy stop and the exit; never: cancelled
    assert len(set(pure["frames"])) == len(pure["frames"]) == 5


def test_every_face_answers_alike_and_stdio_bytes_hold_on_the_compiled_engine(
    compiled: Path,
) -> None:
    """The faces' parity (every tool through stdio MCP, the door's /mcp of both eras, /v1
    and both SDK transports) and the pinned stdio transcript, run on the compiled engine:
    the suite itself runs on whichever engine the machine has, pure on a new one. (The
    compiled ``Runtime`` takes exactly its annotated types: a transport that passed on
    an argument left out as ``None`` failed here, and only here.)"""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_parity.py",
            "tests/kestrel_mcp/test_stdio_bytes.py",
        ],
        env=_env(str(compiled)),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
    assert " failed" not in done.stdout


def _copy_build(compiled: Path, where: Path) -> Path:
    copy = where / "build"
    shutil.copytree(compiled, copy)
    return copy


def _run(code: str, engine: str | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KESTREL_ENGINE"}
    if engine is not None:
        env["KESTREL_ENGINE"] = engine
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


WHICH = (
    "import kestrel_sdk.runtime.engine.core as core\n"
    "from kestrel_sdk.runtime import native\n"
    "print(native.engine(), core.__file__)\n"
)


def test_pure_ignores_a_valid_build(compiled: Path, tmp_path: Path) -> None:
    assert _run(WHICH, str(compiled), tmp_path).stdout.split()[0] == "compiled"
    done = _run(WHICH, "pure", tmp_path)
    assert done.returncode == 0, done.stderr
    engine, module = done.stdout.split()
    assert (engine, Path(module)) == ("pure", RUNTIME_DIR / "engine" / "core.py")
    assert done.stderr == ""


def _stale(compiled: Path, where: Path) -> Path:
    """A copy of the build whose recorded digest is not the current sources'."""
    stale = _copy_build(compiled, where)
    manifest = json.loads((stale / native.BUILD_FILE).read_text())
    manifest["digest"] = "0" * 64
    (stale / native.BUILD_FILE).write_text(json.dumps(manifest))
    return stale


def test_a_stale_build_named_by_kestrel_engine_is_refused(compiled: Path, tmp_path: Path) -> None:
    stale = _stale(compiled, tmp_path)
    done = _run(WHICH, str(stale), tmp_path)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("kestrel_sdk.runtime.native.CompiledEngineError: ")
    assert f"KESTREL_ENGINE={stale}" in last
    assert "source digest 0000000000" in last
    assert "python -m kestrel_sdk.runtime.build" in last


def test_a_build_of_edited_sources_names_the_edited_file(compiled: Path, tmp_path: Path) -> None:
    stale = _copy_build(compiled, tmp_path)
    manifest = json.loads((stale / native.BUILD_FILE).read_text())
    manifest["sources"]["kestrel_sdk/runtime/lang/syntax.py"] = "1" * 64
    (stale / native.BUILD_FILE).write_text(json.dumps(manifest))
    done = _run(WHICH, str(stale), tmp_path)
    assert done.returncode != 0
    assert "sources changed since it was built: kestrel_sdk/runtime/lang/syntax.py" in done.stderr


def test_a_foreign_interpreters_build_is_refused(compiled: Path, tmp_path: Path) -> None:
    foreign = _copy_build(compiled, tmp_path)
    manifest = json.loads((foreign / native.BUILD_FILE).read_text())
    manifest["cache_tag"] = "cpython-399"
    (foreign / native.BUILD_FILE).write_text(json.dumps(manifest))
    done = _run(WHICH, str(foreign), tmp_path)
    assert done.returncode != 0
    assert f"built for cpython-399, this Python is {sys.implementation.cache_tag}" in done.stderr


def test_a_stale_build_in_the_default_place_is_ignored_with_one_warning(
    compiled: Path, tmp_path: Path
) -> None:
    """The default place is inside the installed package: use a copy of the package."""
    site = tmp_path / "site"
    for package in (kestrel_sdk, kestrel_protocol):
        shutil.copytree(
            Path(str(package.__file__)).parent,
            site / package.__name__,
            ignore=shutil.ignore_patterns("__pycache__", "_compiled"),
        )
    default = site / "kestrel_sdk" / "runtime" / "_compiled"
    code = f"import sys; sys.path.insert(0, {str(site)!r})\n" + WHICH
    # KESTREL_ENGINE=compiled insists on the default place's build.
    done = _run(code, "compiled", tmp_path)
    assert done.returncode != 0
    assert f"{default} has no {native.BUILD_FILE}" in done.stderr
    _stale(compiled, tmp_path).rename(default)
    done = _run(code, None, tmp_path)
    assert done.returncode == 0, done.stderr
    engine, module = done.stdout.split()
    assert (engine, Path(module)) == ("pure", default.parent / "engine" / "core.py")
    warnings = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1
    assert f"ignoring the compiled runtime in {default}" in warnings[0]
    assert "source digest 0000000000" in warnings[0]
    assert "python -m kestrel_sdk.runtime.build" in warnings[0]
    # The same build, valid, is used from the default place without a word.
    shutil.rmtree(default)
    shutil.copytree(compiled, default)
    # Its sources are the copies' now: identical bytes, so the digest still matches.
    done = _run(code, None, tmp_path)
    assert done.returncode == 0, done.stderr
    engine, module = done.stdout.split()
    assert (engine, Path(module)) == ("compiled", default / native.module_file("engine.core"))
    assert done.stderr == ""
    assert _run(code, "compiled", tmp_path).stdout.split()[0] == "compiled"


def test_the_compiled_modules_are_every_engine_module_and_the_step_path() -> None:
    engine = {f"engine.{path.stem}" for path in (RUNTIME_DIR / "engine").glob("*.py")}
    assert set(native.COMPILED_MODULES) >= engine - {"engine.__init__"}
    for module in native.COMPILED_MODULES:  # each names a source module
        assert (RUNTIME_DIR / f"{module.replace('.', '/')}.py").is_file()
    # the step path: Runtime.submit, the live sessions, the pentad, the SQLite append
    assert {"service", "live", "pentads", "models", "steps", "sqlite.store"} <= set(
        native.COMPILED_MODULES
    )


# The C primitives of a compiled build against the Python they replace: models built by
# construct are the models pydantic validates from their JSON, the checked append copies
# only into the file as its caller left it, growing it when a line does not fit, and the
# searches find the bars the Python finds.
PRIMITIVES = r"""
import json, os, resource, signal, sys
from pathlib import Path
from kestrel_protocol.objects.session import Clock, ScenarioRef
from array import array
import random
from kestrel_sdk.runtime import steps
from kestrel_sdk.runtime.engine import fill, wire

out = {"c": [wire._C_CONSTRUCT is not None, steps._C_APPEND is not None,
             fill._C_FIRST_LE is not None]}
rng = random.Random(7)
col = array("q", [rng.randrange(-50, 50) for _ in range(3000)])
scans = []
for _ in range(3000):
    start = rng.randrange(0, 3000)
    end = rng.randrange(start - 1, 3000)
    x = rng.choice([rng.randrange(-60, 60), 2**63, -2**63 - 1, 10**30])
    scans.append([fill.first_le(col, x, start, end), fill.first_ge(col, x, start, end)])
naive = lambda hit: next((k for k in range(start, end + 1) if hit(col[k])), -1)
out["last"] = [scans[-1], [naive(lambda v: v <= x), naive(lambda v: v >= x)]]
out["scans"] = scans
clock = wire.construct(Clock, {"bar": 3, "time": "2020-01-02T00:00:00Z", "remaining": 9})
ref = wire.construct(ScenarioRef, {"id": "acme", "root": "sha256:" + "ab" * 32}, {"id"})
out["clock"] = [clock == Clock.model_validate(clock.to_json()), clock.to_json(),
                clock.model_dump_json(), sorted(clock.model_fields_set),
                clock.__pydantic_extra__, clock.__pydantic_private__]
out["ref"] = [ref.to_json(), sorted(ref.model_fields_set), ref.root]
out["copy"] = clock.model_copy(update={"bar": 4}).to_json()
try:
    hash(clock); out["frozen"] = True
except TypeError:
    out["frozen"] = False
if wire._C_CONSTRUCT is not None:
    try:
        wire._C_CONSTRUCT(Clock, [], set(), {}, ())
    except TypeError as exc:
        out["bad"] = str(exc)

directory = Path(sys.argv[1])
files = steps.StepFiles(directory, "t", sync=False)
others = steps.StepFiles(directory, "t", sync=False)  # another store on the same files


def content(path):
    return path.read_bytes().rstrip(b"\0").decode()


def started(rowid, line):
    with files.locked(rowid, create=True) as step:
        step.size = step.seq = 0
        step.write(line, sync=False)
        step.seq = 1
        step.map()
    return step


step = started(1, b"one\n")
found = [files.fast_append(step, 2, b"two\n"), step.size]
with open(files.path(1), "r+b") as other:  # another store appends
    other.seek(8)
    other.write(b"three\n")
found += [files.fast_append(step, 3, b"four\n"), content(files.path(1))]
step.size, step.seq = 14, 3
with others.locked(1, create=False) as folded:  # folded elsewhere: marked and removed
    others.drop(1, unlink=True)
found += [files.fast_append(step, 4, b"five\n"), step.size, step.seq]
big = started(2, b"x" * 65530 + b"\n")  # the next line does not fit: the file grows
found += [files.fast_append(big, 2, b"0123456789\n"), big.size]
found += [os.path.getsize(files.path(2)), content(files.path(2))[-12:]]
full = started(3, b"y" * 65530 + b"\n")
os.unlink(files.path(3))  # removed elsewhere, with no room left for the mark
found += [files.fast_append(full, 2, b"0123456789\n"), full.size]
out["append"] = found

with files.locked(4, create=True) as short:
    short.size, short.seq = 0, 0
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (6, limit[1]))
try:
    short.write(b"0123456789\n", sync=False)
except OSError as exc:  # the file cannot grow: nothing written
    out["short"] = [exc.errno, os.fstat(short.fd).st_size, short.size]
finally:
    resource.setrlimit(resource.RLIMIT_FSIZE, limit)
print(json.dumps(out))
"""


def _primitives(engine: str, where: Path) -> dict[str, Any]:
    where.mkdir()
    return _child(PRIMITIVES, where, engine, timeout=120)


def test_the_c_primitives_do_what_the_python_they_replace_does(
    compiled: Path, tmp_path: Path
) -> None:
    fast = _primitives(str(compiled), tmp_path / "compiled")
    pure = _primitives("pure", tmp_path / "pure")
    assert fast.pop("c") == [True, True, True]
    assert pure.pop("c") == [False, False, False]
    assert "construct" in fast.pop("bad")  # a wrong call is a TypeError, not a crash
    assert fast == pure
    clock = ["2020-01-02T00:00:00Z", 9]
    assert pure["clock"] == [
        True,
        {"bar": 3, "time": clock[0], "remaining": clock[1]},
        '{"bar":3,"time":"2020-01-02T00:00:00Z","remaining":9}',
        ["bar", "remaining", "time"],
        {},
        None,
    ]
    assert pure["ref"] == [{"id": "acme"}, ["id"], "sha256:" + "ab" * 32]  # given: dumped
    assert pure["copy"] == {"bar": 4, "time": clock[0], "remaining": clock[1]}
    assert pure["frozen"] is True
    # the searches: the same first bar for 3,000 ranges and prices (some beyond 64 bits),
    # both kinds of answer among them, and the last one as a plain loop finds it
    found = [hit for pair in pure["scans"] for hit in pair]
    assert found.count(-1) > 100
    assert len(found) - found.count(-1) > 1000
    assert pure["last"][0] == pure["last"][1]
    # written; refused after another store's line (nothing written); refused once a fold
    # marked and removed the file; a line that does not fit grows the file (64 KiB, then
    # twice that), unless the file was removed
    assert pure["append"] == [
        True, 8, False, "one\ntwo\nthree\n", False, 14, 3,
        True, 65542, 131072, "\n0123456789\n", False, 65531,
    ]  # fmt: skip
    # a file that cannot grow is an error, with nothing written and the store's size kept
    assert pure["short"] == [errno.EFBIG, 0, 0]


# Every kind of object a session's calls return, dumped by the compiled runtime's C dump
# (installed into ProtocolModel.to_json) and by pydantic: the same data, member order
# included; and objects validated from JSON, unknown members among them.
DUMPS = r"""
import json, sys
import anyio
from kestrel_protocol import model, SessionFrame
from kestrel_sdk import create_sdk, local_transport

async def main(home):
    transport = create_sdk(local_transport(home=home))
    run = transport.run
    found = [await run("open_session", scenario="acme-trend", label="a label")]
    session = found[0].session_id
    for source in ["buy 10 ACME\nadvance", "sell 5 ACME limit 1.00 tif gtc as x\nadvance 3",
                   "cancel x\nbuy 1 ACME stop 999 tif gtc\nadvance 40", "sell 6 ACME\nadvance",
                   "nonsense here"]:
        try:
            found.append(await run("submit", session_id=session, source=source))
        except Exception as exc:
            found.append(type(exc).__name__)
    found += [await run("frame", session_id=session),
              await run("history", session_id=session, bars=5),
              await run("blotter", session_id=session), await run("close", session_id=session),
              await run("grade", session_id=session), await run("catalog")]
    frame = found[-6].frame.to_json()
    frame["someday"] = {"a": [1, "two", None, True]}
    found.append(SessionFrame.parse(json.dumps(frame)))
    out = {"installed": bool(model._DUMPERS), "kinds": [], "same": [], "accepted": []}
    for obj in found:
        if isinstance(obj, str):
            continue
        fast = model._DUMPERS[0](obj)
        slow = obj.model_dump(mode="json", by_alias=True, exclude_unset=True)
        out["kinds"].append(type(obj).__name__)
        out["accepted"].append(fast is not None)
        out["same"].append(fast is None or json.dumps(fast) == json.dumps(slow))
    print(json.dumps(out))

anyio.run(main, sys.argv[1])
"""


def test_the_c_dump_gives_pydantics_data_for_every_kind_of_result(
    compiled: Path, tmp_path: Path
) -> None:
    found = _child(DUMPS, tmp_path, str(compiled))
    assert found["installed"] is True
    same = dict(zip(found["kinds"], found["same"], strict=True))
    assert all(found["same"]), [kind for kind, alike in same.items() if not alike]
    # what every agent step returns is dumped in C, extras and all, and so is the rest
    kinds = dict(zip(found["kinds"], found["accepted"], strict=True))
    assert {"SessionOpened", "SessionResponse", "Delivery", "SessionFrame", "GradeResult"} <= set(
        kinds
    )
    assert all(found["accepted"]), [kind for kind, taken in kinds.items() if not taken]


def test_a_class_that_customizes_its_dump_is_left_to_pydantic() -> None:
    from typing import Annotated

    from kestrel_protocol.model import ProtocolModel
    from kestrel_sdk.runtime import dumps
    from pydantic import PlainSerializer, computed_field, field_serializer

    class Plain(ProtocolModel):
        first_name: str
        nested: list[Plain] | None = None

    class Serialized(ProtocolModel):
        value: str

        @field_serializer("value")
        def _shout(self, value: str) -> str:
            return value.upper()

    class Computed(ProtocolModel):
        value: str

        @computed_field  # type: ignore[prop-decorator]
        @property
        def twice(self) -> str:
            return self.value * 2

    class Annotation(ProtocolModel):
        value: dict[str, Annotated[str, PlainSerializer(str.upper)]]

    assert dumps.plan(Plain) == {
        "first_name": ("firstName", frozenset()),
        "nested": ("nested", frozenset({Plain})),
    }
    assert dumps.plan(Serialized) is None
    assert dumps.plan(Computed) is None
    assert dumps.plan(Annotation) is None
    assert dumps.plan(dict) is None  # not a protocol object


def test_the_build_records_the_first_party_modules_the_engine_imports() -> None:
    root = RUNTIME_DIR.parents[1]
    sources = source_closure(root)
    assert "kestrel_sdk/runtime/engine/core.py" in sources
    assert "kestrel_sdk/runtime/lang/syntax.py" in sources  # core -> lang.syntax
    assert "kestrel_sdk/runtime/service.py" in sources
    assert "kestrel_sdk/runtime/build.py" not in sources  # nothing the runtime runs imports it
    assert all(path.startswith("kestrel_sdk/") for path in sources)  # protocol lives elsewhere
    for module in native.C_MODULES:  # the C sources too: an edited one makes a build stale
        assert f"kestrel_sdk/runtime/{module.replace('.', '/')}.c" in sources


def test_without_a_c_compiler_the_build_says_so_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    dest = tmp_path / "compiled"
    assert main(["--dest", str(dest)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("kestrel: CHECK_FAILED: cannot compile the engine: a C compiler")
    assert "apt-get install gcc" in lines[0]
    assert list(tmp_path.iterdir()) == []


def test_without_mypy_the_build_names_the_extra_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "mypyc" else find_spec(name)
    )
    assert main(["--dest", str(tmp_path / "compiled")]) == 1
    line = capsys.readouterr().err.strip()
    assert "mypy (`pip install mypy setuptools`)" in line
    assert list(tmp_path.iterdir()) == []


def test_the_build_never_replaces_a_directory_that_is_not_a_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    assert main(["--dest", str(tmp_path)]) == 1
    line = capsys.readouterr().err.strip()
    assert line == (
        f"kestrel: INVALID_ARGUMENT: {tmp_path} exists and is not a compiled-runtime build; "
        "name a new or empty directory"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    assert notes.read_text() == "mine"


def test_a_failed_compile_leaves_the_earlier_build_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "compiled"
    dest.mkdir()
    (dest / native.BUILD_FILE).write_text('{"earlier": true}')
    failed = subprocess.CompletedProcess[str](
        [], 1, "core.py:3: error: Name 'x' is not defined\n", ""
    )
    monkeypatch.setattr(build, "missing_prerequisites", list)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: failed)
    assert main(["--dest", str(dest)]) == 1
    line = capsys.readouterr().err.strip()
    assert line.startswith(
        "kestrel: CHECK_FAILED: mypyc failed (exit 1): core.py:3: error: Name 'x' is not defined"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["compiled"]
    assert [p.name for p in dest.iterdir()] == [native.BUILD_FILE]
    assert (dest / native.BUILD_FILE).read_text() == '{"earlier": true}'
