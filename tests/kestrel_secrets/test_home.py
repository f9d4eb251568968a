"""Where the store lives: --home, then $KESTREL_HOME, then ~/.kestrel."""

from __future__ import annotations

from pathlib import Path

import pytest
from kestrel_secrets import kestrel_home


def test_explicit_home_wins(tmp_path: Path) -> None:
    assert kestrel_home(tmp_path / "x", {"KESTREL_HOME": "/elsewhere"}) == tmp_path / "x"


def test_kestrel_home_then_dot_kestrel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert kestrel_home(env={"KESTREL_HOME": "~/kh"}) == tmp_path / "kh"
    assert kestrel_home(env={"KESTREL_HOME": ""}) == tmp_path / ".kestrel"
    assert kestrel_home(env={}) == tmp_path / ".kestrel"


def test_relative_homes_become_absolute_without_resolving_symlinks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path)
    assert kestrel_home("link") == tmp_path / "link"
