"""An Inspect log read where inspect-ai is not installed says how to read it from the
clone (issue 48, session 17: the evaluator's first hour).

A stranger re-checking published logs in a fresh clone runs the README's
``uv run --package kestrel-sdk kestrel board logs/``: kestrel-sdk alone does not install
inspect-ai, so every log is a failed row. Its reason told them to ``uv pip install``
kestrel-inspect, which in the clone's uv-run environment is not the way: it now names
``uv run --package kestrel-inspect kestrel board …``, which installs it and runs the
same board.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest
from kestrel_sdk.board import read_entries


def test_a_log_without_inspect_names_the_command_that_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "logs" / "run.eval"
    log.parent.mkdir()
    with zipfile.ZipFile(log, "w") as archive:
        archive.writestr("header.json", "{}")
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as where it is not installed
    [entry] = read_entries([log.parent])
    assert entry.data is None
    assert entry.problem == (
        "an Inspect log: reading it needs inspect-ai, which kestrel-sdk alone does not "
        "install: in the clone, `uv run --package kestrel-inspect kestrel board …`; in "
        'another environment, `uv pip install "$KESTREL/packages/kestrel-inspect"`'
    )
