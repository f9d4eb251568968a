"""Where a scenario directory may be written, and the one writer that writes it.

Every command that writes a scenario into a catalog (``kestrel scenario new``,
``disguise``, ``sealed-copy``) and the SDK behind them writes through
:func:`write_staged`: the target is checked (:func:`check_target`), the files are
written into a hidden directory beside it, which the catalog never lists, and that
directory is renamed into place, so the catalog sees all the files or none of them.

A writer holds an OS lock (``flock``) on :data:`WRITER_LOCK` in its staging directory
for as long as it writes. A writer killed mid-write (SIGKILL, a power cut) leaves its
staging directory behind with that lock free: the next write into the same directory
removes every staging directory whose lock it can take (its writer is gone), never one
whose lock is held (its writer is still writing). Where the system has no ``flock``
(Windows), no lock is taken and nothing is removed: a staging directory's owner cannot
be told there, so what a killed writer left stays (the catalog never lists it).
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ..runtime.catalog.news import NEWS_FILE, News
from ..runtime.catalog.terms import SCENARIO_FILE

__all__ = [
    "TAPE_FILE",
    "WRITER_LOCK",
    "ScenarioTargetError",
    "check_target",
    "remove_abandoned",
    "write_staged",
]

if sys.platform != "win32":
    import fcntl

log = logging.getLogger(__name__)

TAPE_FILE = "tape.csv"

WRITER_LOCK = ".writer.lock"
"""The file of a staging directory its writer holds locked while it writes."""


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


def _locked_by_this_writer(staging: Path) -> int | None:
    """Hold the lock of ``staging``: the lock file is made under another name, locked,
    then renamed to :data:`WRITER_LOCK`, so that no one ever finds it there unlocked
    while this writer lives. Returns the descriptor that holds it (``None`` where the
    system has no ``flock``)."""
    if sys.platform == "win32":
        return None
    descriptor, made = tempfile.mkstemp(prefix=".lock.", dir=staging)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        os.replace(made, staging / WRITER_LOCK)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def remove_abandoned(catalog: Path) -> list[Path]:
    """Remove the staging directories in ``catalog`` whose writer is gone: hidden
    directories holding :data:`WRITER_LOCK` whose lock this process can take. One whose
    lock is held (a writer still at work) is kept, and so is every directory without the
    lock file (no writer of this module's made it). Returns the directories removed."""
    if sys.platform == "win32":
        return []
    try:
        entries = sorted(catalog.iterdir())
    except OSError:  # no such directory yet, or not one this process may list
        return []
    removed: list[Path] = []
    for entry in entries:
        if not entry.name.startswith(".") or entry.is_symlink():
            continue
        try:
            descriptor = os.open(entry / WRITER_LOCK, os.O_RDONLY)
        except OSError:  # not a directory, or not a staging directory
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # its writer is at work
            os.close(descriptor)
            continue
        try:
            shutil.rmtree(entry)
        except FileNotFoundError:  # its writer finished (renamed it) or another removed it
            pass
        except OSError as error:
            log.warning("cannot remove %s, left by a scenario write that died: %s", entry, error)
        else:
            log.info("removed %s, left by a scenario write that died", entry)
            removed.append(entry)
        finally:
            os.close(descriptor)
    return removed


def write_staged(
    directory: str | Path, tape: Callable[[IO[bytes]], None], toml: str, news: News | None
) -> Path:
    """Write a scenario directory (``tape.csv`` by ``tape``, ``scenario.toml``, and
    ``news.jsonl`` with ``news``) at ``directory``, checked by :func:`check_target`
    (created; it must not exist or be empty): staged beside it in a hidden directory,
    then renamed into place, so all its files appear at once and nothing is left
    behind on failure; first, what writers killed mid-write left in that directory is
    removed (:func:`remove_abandoned`). Returns the absolute path written."""
    target = check_target(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_abandoned(target.parent)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    lock: int | None = None
    try:
        lock = _locked_by_this_writer(staging)
        with (staging / TAPE_FILE).open("wb") as out:
            tape(out)
        (staging / SCENARIO_FILE).write_text(toml, encoding="utf-8", newline="\n")
        if news is not None:
            (staging / NEWS_FILE).write_bytes(news.render())
        if target.exists():
            target.rmdir()  # empty: checked above
        if lock is not None:  # still held: the directory is not abandoned
            (staging / WRITER_LOCK).unlink()
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if lock is not None:
            os.close(lock)
    return target
