"""Where a scenario directory may be written, and the one writer that writes it.

Every command that writes a scenario into a catalog (``kestrel scenario new``,
``disguise``, ``sealed-copy``) and the SDK behind them writes through
:func:`write_staged`: the target is checked (:func:`check_target`), the files are
written into a hidden directory beside it, which the catalog never lists, and that
directory is renamed into place, so the catalog sees all the files or none of them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ..runtime.catalog.news import NEWS_FILE, News
from ..runtime.catalog.terms import SCENARIO_FILE

__all__ = ["TAPE_FILE", "ScenarioTargetError", "check_target", "write_staged"]

TAPE_FILE = "tape.csv"


class ScenarioTargetError(ValueError):
    """A scenario directory cannot go where it was asked to: the message names the
    path and why (the same text on every face)."""


def check_target(directory: str | Path) -> Path:
    """``directory`` as an absolute path (``~`` and ``..`` taken as the system takes
    them), once it is known to be a place a catalog lists a new scenario from.

    Raises :class:`ScenarioTargetError` when it is hidden (its name starts with ``.``:
    the catalog skips such directories, as writes stage there), is a file, is a
    directory that is not empty, lies inside another scenario's directory, or lies
    under a file. Whether the system lets it be written is found by writing it.
    """
    given = Path(directory).expanduser()
    target = given.resolve()
    if target.name.startswith("."):
        raise ScenarioTargetError(
            f"{given} is a hidden directory, which the catalog does not read; name it "
            "without the leading dot"
        )
    if target.exists() and not target.is_dir():
        raise ScenarioTargetError(f"{given} is a file, not a directory")
    if target.is_dir() and any(target.iterdir()):
        raise ScenarioTargetError(f"{given} already exists and is not an empty directory")
    for parent in target.parents:
        if parent.exists() and not parent.is_dir():
            raise ScenarioTargetError(f"{given}: {parent} is a file, not a directory")
        if (parent / SCENARIO_FILE).is_file():
            raise ScenarioTargetError(
                f"{given} is inside the scenario directory {parent}, which the catalog "
                "reads as one scenario; choose a directory outside it"
            )
    return target


def write_staged(
    directory: str | Path, tape: Callable[[IO[bytes]], None], toml: str, news: News | None
) -> Path:
    """Write a scenario directory (``tape.csv`` by ``tape``, ``scenario.toml``, and
    ``news.jsonl`` with ``news``) at ``directory``, checked by :func:`check_target`
    (created; it must not exist or be empty): staged beside it in a hidden directory,
    then renamed into place, so all its files appear at once and nothing is left
    behind on failure. Returns the absolute path written."""
    target = check_target(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        with (staging / TAPE_FILE).open("wb") as out:
            tape(out)
        (staging / SCENARIO_FILE).write_text(toml, encoding="utf-8", newline="\n")
        if news is not None:
            (staging / NEWS_FILE).write_bytes(news.render())
        if target.exists():
            target.rmdir()  # empty: checked above
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
