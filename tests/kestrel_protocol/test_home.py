"""The one rule for Kestrel's home directory, which every package and CLI uses."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from kestrel_protocol import kestrel_home


@pytest.mark.parametrize(
    ("given", "env", "expected"),
    [
        ("x", {"KESTREL_HOME": "/elsewhere"}, "{tmp}/x"),  # an explicit home wins
        ("~/given", {}, "{home}/given"),
        (None, {"KESTREL_HOME": "/srv/k"}, "/srv/k"),  # then the environment
        (None, {"KESTREL_HOME": "~/kh"}, "{home}/kh"),
        (None, {"KESTREL_HOME": "rel/k"}, "{tmp}/rel/k"),  # relative: made absolute
        (None, {"KESTREL_HOME": "link"}, "{tmp}/link"),  # a symlink is not resolved
        (None, {"KESTREL_HOME": ""}, "{home}/.kestrel"),  # empty counts as unset
        (None, {}, "{home}/.kestrel"),
        (None, None, "{tmp}/from-process"),  # env=None reads the process environment
    ],
)
def test_the_home_rule(
    given: str | None,
    env: Mapping[str, str] | None,
    expected: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user = tmp_path / "user"
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("KESTREL_HOME", str(tmp_path / "from-process"))
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.chdir(tmp_path)
    got = kestrel_home(given, env)
    assert got == Path(expected.format(tmp=tmp_path, home=user))
    assert got.is_absolute()
