from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_protocol import kestrel_home


def test_an_explicit_home_wins_over_the_environment(tmp_path: Path) -> None:
    assert kestrel_home(tmp_path / "x", {"KESTREL_HOME": "/elsewhere"}) == tmp_path / "x"


def test_the_environment_then_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert kestrel_home(env={"KESTREL_HOME": "/srv/k"}) == Path("/srv/k")
    assert kestrel_home(env={"KESTREL_HOME": "~/kh"}) == tmp_path / "kh"
    assert kestrel_home(env={"KESTREL_HOME": ""}) == tmp_path / ".kestrel"
    assert kestrel_home(env={}) == tmp_path / ".kestrel"


def test_reads_the_process_environment_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KESTREL_HOME", str(tmp_path / "k"))
    assert kestrel_home() == tmp_path / "k"


def test_a_relative_home_is_kept_relative() -> None:
    assert kestrel_home("rel/home") == Path("rel/home")
