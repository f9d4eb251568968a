"""An Inspect log given to ``kestrel verify`` or ``kestrel report`` is refused saying
what it is and what reads it (issue 48, session 17: the evaluator's first hour).

The kestrel-inspect README promises that anyone holding the log re-verifies every score;
handed the ``.eval`` log, ``kestrel verify`` answered ``not UTF-8 text: byte 0x.. at
offset 11`` (a ``.eval`` log is a zip archive), and an Inspect ``.json`` log was
"not a Kestrel grade or proof" with a parser's complaint: neither said that the log
holds a proof per sample, nor that ``kestrel board`` reads it.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from kestrel_sdk.cli import cli


def _eval_log(path: Path) -> Path:
    """A file shaped as Inspect writes a ``.eval`` log: a zip archive of JSON entries."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"task": "kestrel_trading"}}))
    return path


def _json_log(path: Path) -> Path:
    """A file shaped as Inspect's ``.json`` log: ``eval`` and ``status``."""
    log = {"version": 2, "status": "success", "eval": {"task": "kestrel_trading"}}
    path.write_text(json.dumps(log), encoding="utf-8")
    return path


@pytest.mark.parametrize("make", [_eval_log, _json_log], ids=["eval", "json"])
@pytest.mark.parametrize("verb", ["verify", "report"])
def test_an_inspect_log_is_refused_naming_the_board(
    tmp_path: Path, make: Callable[[Path], Path], verb: str
) -> None:
    suffix = ".eval" if make is _eval_log else ".json"
    log = make(tmp_path / f"2026-12-07_kestrel-trading{suffix}")
    args = ["--home", str(tmp_path / "home"), verb, str(log)]
    if verb == "report":
        args += ["-o", str(tmp_path / "report.html")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith(f"kestrel: INVALID_INPUT: {log}: an Inspect log, not one proof: ")
    assert f"`kestrel board {log}` verifies the proof of every sample in it" in line
    assert "not UTF-8" not in line
    assert not (tmp_path / "report.html").exists()
