"""Where a scenario directory may be written, and the one writer that writes it.

Every command that writes a scenario into a catalog (``kestrel scenario new``,
``disguise``, ``sealed-copy``) and the SDK behind them writes through
:func:`write_staged`: the target is checked (:func:`check_target`), the files are
written into a hidden directory beside it, which the catalog never lists, and that
directory is renamed into place, so the catalog sees all the files or none of them.

A writer holds an OS lock (``filelock``: one the system frees when its holder dies) on
:data:`WRITER_LOCK` in its staging directory for as long as it writes, and says so by
:data:`WRITER_MARK` beside it (made once the lock is held, removed before it is let go).
A writer killed mid-write (SIGKILL, a power cut) leaves its staging directory behind,
marked, with the lock free: the next write into the same directory removes every marked
staging directory whose lock it can take (its writer is gone), never one whose lock is
held (its writer is still writing), nor one without the mark (a writer in its first or
last moments; what one killed there leaves stays, and the catalog never lists it).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from filelock import FileLock, Timeout

from ..runtime.catalog.news import NEWS_FILE, News
from ..runtime.catalog.terms import SCENARIO_FILE

__all__ = [
    "TAPE_FILE",
    "WRITER_LOCK",
    "WRITER_MARK",
    "ScenarioTargetError",
    "check_target",
    "remove_abandoned",
    "write_staged",
]

log = logging.getLogger(__name__)

TAPE_FILE = "tape.csv"

WRITER_LOCK = ".writer.lock"
"""The file of a staging directory its writer holds locked while it writes."""
WRITER_MARK = ".writer.held"
"""The file that says a staging directory's writer holds its lock (so a free lock there
means the writer is gone)."""


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


def _locked_by_this_writer(staging: Path) -> FileLock:
    """Hold the lock of ``staging`` and mark it held (:data:`WRITER_MARK`)."""
    lock = FileLock(staging / WRITER_LOCK)
    lock.acquire()
    try:
        (staging / WRITER_MARK).touch()
    except BaseException:
        lock.release()
        raise
    return lock


def _abandoned(entry: Path) -> bool:
    """Whether ``entry`` is a staging directory whose writer is gone: marked held, and
    its lock free (taken and let go at once: nothing else owns that directory)."""
    if entry.is_symlink() or not (entry / WRITER_MARK).is_file():
        return False
    probe = FileLock(entry / WRITER_LOCK, timeout=0)
    try:
        probe.acquire()
    except Timeout:  # its writer is at work
        return False
    except OSError:  # removed meanwhile, or not this process's to lock
        return False
    probe.release()
    return True


def remove_abandoned(catalog: Path) -> list[Path]:
    """Remove the staging directories in ``catalog`` whose writer is gone (hidden
    directories marked held by a writer whose lock this process can take). One whose
    lock is held (a writer still at work) is kept, and so is every directory without the
    mark (no writer of this module's holds it). Returns the directories removed."""
    try:
        entries = sorted(catalog.iterdir())
    except OSError:  # no such directory yet, or not one this process may list
        return []
    removed: list[Path] = []
    for entry in entries:
        if not entry.name.startswith(".") or not _abandoned(entry):
            continue
        try:
            shutil.rmtree(entry)
        except FileNotFoundError:  # another write removed it meanwhile
            pass
        except OSError as error:
            log.warning("cannot remove %s, left by a scenario write that died: %s", entry, error)
        else:
            log.info("removed %s, left by a scenario write that died", entry)
            removed.append(entry)
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
    lock: FileLock | None = None
    try:
        lock = _locked_by_this_writer(staging)
        with (staging / TAPE_FILE).open("wb") as out:
            tape(out)
        (staging / SCENARIO_FILE).write_text(toml, encoding="utf-8", newline="\n")
        if news is not None:
            (staging / NEWS_FILE).write_bytes(news.render())
        if target.exists():
            target.rmdir()  # empty: checked above
        (staging / WRITER_MARK).unlink()  # from here on no write removes the directory
        lock.release()
        lock = None
        (staging / WRITER_LOCK).unlink(missing_ok=True)
        os.replace(staging, target)
    except BaseException:
        if lock is not None:
            lock.release()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
