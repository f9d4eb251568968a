"""Ctrl-C while a console script is still loading exits 130, quietly (docs/cli.md).

Every script of every package's ``[project.scripts]`` is started with a stall in the
middle of loading ``kestrel_protocol`` (which all of them load): a ``sitecustomize`` on
the child's path holds the import there, says so on stderr and waits on stdin, the
event on which the test sends SIGINT (what Ctrl-C sends). The KeyboardInterrupt so
raised is the one a user gets when Ctrl-C lands while Python loads the command.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STALLED = "kestrel-test: stalled loading kestrel_protocol"

STALL = f'''
import sys


class _Stall:
    """Holds the first import of kestrel_protocol until a signal interrupts it."""

    def find_spec(self, name, path=None, target=None):
        if name == "kestrel_protocol":
            sys.meta_path.remove(self)
            print("{STALLED}", file=sys.stderr, flush=True)
            sys.stdin.readline()
        return None


sys.meta_path.insert(0, _Stall())
'''


def _scripts() -> list[str]:
    names: list[str] = []
    for pyproject in sorted(ROOT.glob("packages/*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        names.extend(project.get("scripts", {}))
    return names


def test_every_kestrel_script_is_covered() -> None:
    assert {"kestrel", "kestrel-mcp", "kestrel-door", "kestrel-secrets"} <= set(_scripts())


@pytest.mark.parametrize("script", _scripts())
def test_ctrl_c_while_loading_exits_130_without_a_traceback(script: str, tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(STALL, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KESTREL_")}
    env |= {"PYTHONPATH": str(tmp_path), "HOME": str(tmp_path)}
    child = subprocess.Popen(
        [str(Path(sys.executable).parent / script), "--help"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stderr is not None
        first = child.stderr.readline()  # the event: the child is inside the import
        assert first.strip() == STALLED, first
        child.send_signal(signal.SIGINT)  # what Ctrl-C sends
        stdout, stderr = child.communicate(timeout=60)
    finally:
        child.kill()
    assert "Traceback" not in stderr, stderr
    assert (child.returncode, stdout, stderr) == (130, "", "")
