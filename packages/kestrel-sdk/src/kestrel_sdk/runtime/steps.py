"""Step files: the SQLite store's per-session append-only journal of accepted steps.

An accepted submission is one line appended with one ``write`` to its session's step
file (``<database>.steps/<session rowid>-<database token>``): its seq, pentad root,
frame root and source (a JSON string, so a line never holds a raw newline), and, on the
step that changes the session's status (a stand-down, after which no step follows), that
status after the string. The SQLite journal table holds everything else: row 0 and seq 1
of each session, and every line once its session closes, the store opens or closes, or
an artifact lookup misses (the lines are then *folded*: inserted into the table in one
transaction, with the status a line carries, after which the file is removed; the next
append makes a new one). A stand-down therefore costs one line like any step, not a
fold of every line before it.

Durability: ``write`` returns once the line is in the operating system's page cache,
which a process kill (SIGKILL, a crash) does not lose, the same promise as SQLite's WAL
with ``synchronous=NORMAL``, which also writes without fsync on commit. With
``KESTREL_SQLITE_SYNCHRONOUS=FULL`` each line is also ``fdatasync``-ed before the
append returns (power-loss durability, at the cost of a disk flush per step).

Several processes (or stores) may use one database: every append, read and fold holds
an exclusive ``flock`` on the session's file, and an append checks (one ``fstat``; a
compiled build's ``_append.c`` asks ``statx`` for the size and link count alone) that
the file is exactly as this store last left it: the same size, and not removed. A fold
removes the file rather than emptying it in place, so that another store cannot take a
file emptied and refilled to the size it knew for its own. When it is not (another
process appended, folded or closed the session), the slow path reads the table and the file,
drops a torn last line (a write that never returned, so never acknowledged) and
appends only if the session's head is the seq before, else ``JournalConflict``.
A line is written only after the step is applied and hashed, and the response is
returned only after the write: every acknowledged step is on disk.

Reading: the table's rows, then the file's complete lines that follow them (lines a
fold already committed are skipped). A malformed line before the last, or a seq out of
order, is corruption: the session cannot be resumed, and the refusal says so.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Final, get_args

from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.objects.session import SessionStatus

from . import native

__all__ = ["StepFile", "StepFiles", "StepRow", "step_line"]

log = logging.getLogger(__name__)

_OPEN_MAX: Final = 256
"""Step files kept open (their descriptors); a session beyond them reopens its file."""

_flock: Final = fcntl.flock
_fstat: Final = os.fstat
_write: Final = os.write
_EX: Final = fcntl.LOCK_EX
_UN: Final = fcntl.LOCK_UN


_C_APPEND: Final[Callable[[int, int, bytes], int] | None] = native.c_function(
    "_append", "append_checked"
)
"""The compiled runtime's C fast-path append (``_append.c``), else ``None``."""


_STATUSES: Final = frozenset(get_args(SessionStatus))
"""A session's statuses (a step line may carry the one its step changed it to)."""

StepRow = tuple[int, str, str, str]
"""One accepted submission as its step file holds it: seq, source, pentad root, frame
root (the journal table's columns, in its order)."""


def step_line(
    seq: int, pentad_root: str, frame_root: str, quoted_source: str, status: str | None = None
) -> bytes:
    """The line of one step (``quoted_source``: the source as a JSON string); ``status``:
    the session's status after it, when the step changed it."""
    if status is None:
        return f"{seq} {pentad_root} {frame_root} {quoted_source}\n".encode()
    return f"{seq} {pentad_root} {frame_root} {quoted_source} {status}\n".encode()


def _parse(line: str) -> tuple[StepRow, str | None]:
    """A line's row and the status it carries (``None``: the step changed none). A JSON
    string ends with ``"``, so a word after the last ``"`` is a status."""
    seq, pentad_root, frame_root, quoted = line.split(" ", 3)
    status = None
    if quoted[-1:] != '"':
        quoted, _, status = quoted.rpartition(" ")
        if status not in _STATUSES:
            raise ValueError("not a step line")
    inner = quoted[1:-1]
    if quoted[:1] == quoted[-1:] == '"' and "\\" not in inner and '"' not in inner:
        text: object = inner  # nothing escaped: the JSON string is its text in quotes
    else:
        text = json.loads(quoted)
    if not isinstance(text, str) or not seq.isdigit():
        raise ValueError("not a step line")
    return (int(seq), text, pentad_root, frame_root), status


@dataclass(eq=False, slots=True)
class StepFile:
    """An open step file and what this store last knew of it."""

    path: Path
    fd: int
    size: int = -1  # bytes as this store last left them (-1: unknown)
    seq: int = -1  # the session's last seq then (-1: unknown)

    def lines(self, after: int) -> tuple[list[StepRow], int, str | None]:
        """The complete lines of seq > ``after`` (a contiguous run from ``after + 1``),
        the byte length of the complete lines (a torn tail is not counted) and the status
        the last of them carries (``None``: none). The caller holds the lock."""
        data = os.pread(self.fd, _fstat(self.fd).st_size, 0)
        end = data.rfind(b"\n") + 1
        out: list[StepRow] = []
        status: str | None = None
        last = after
        try:
            text = data[:end].decode("utf-8")
        except UnicodeDecodeError:
            raise self._corrupt(0, "is not UTF-8") from None
        for number, raw in enumerate(text.split("\n")[:-1], start=1):
            try:
                row, changed = _parse(raw)
            except ValueError:
                raise self._corrupt(number, "is not a step line") from None
            seq = row[0]
            if seq <= after:  # folded into the table already
                continue
            if seq != last + 1:
                raise self._corrupt(number, f"has seq {seq} after seq {last}")
            if status is not None:
                raise self._corrupt(number, f"follows the status change to {status}")
            out.append(row)
            status = changed
            last = seq
        if end < len(data):
            log.warning("%s: dropping a torn last line (%d bytes)", self.path, len(data) - end)
        return out, end, status

    def _corrupt(self, number: int, what: str) -> KestrelError:
        log.error("step file %s is corrupt: line %d %s", self.path, number, what)
        return KestrelError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"the journal of this session is corrupt ({self.path.name} line {number} {what})",
            {"path": str(self.path), "line": number},
        )

    def write(self, line: bytes, sync: bool) -> None:
        """Append ``line`` at :attr:`size` (the caller holds the lock and checked it);
        a short write is undone and raised."""
        written = _write(self.fd, line)
        if written != len(line):
            os.ftruncate(self.fd, self.size)
            raise OSError(f"short write to {self.path} ({written} of {len(line)} bytes)")
        if sync:
            os.fdatasync(self.fd)
        self.size += written


class StepFiles:
    """The step files of one database: one per session with unfolded steps."""

    def __init__(self, directory: Path, token: str, sync: bool) -> None:
        self.directory = directory
        self.token = token
        self.sync = sync
        self._open: OrderedDict[int, StepFile] = OrderedDict()
        directory.mkdir(mode=0o700, exist_ok=True)

    def path(self, rowid: int) -> Path:
        return self.directory / f"{rowid}-{self.token}"

    def rowids(self) -> list[int]:
        """The sessions (rowids) with a step file of this database."""
        suffix = f"-{self.token}"
        found = []
        for name in os.listdir(self.directory):
            head, _, tail = name.partition("-")
            if f"-{tail}" == suffix and head.isdigit():
                found.append(int(head))
        return sorted(found)

    def cached(self, rowid: int) -> StepFile | None:
        return self._open.get(rowid)

    def fast_append(self, step: StepFile, seq: int, line: bytes) -> bool:
        """Append on the fast path: ``True`` when written, ``False`` when the file is not
        as this store left it (or this store does not know it): take the slow path."""
        if step.seq != seq - 1:
            return False
        fd = step.fd
        if _C_APPEND is not None and not self.sync:  # the same four calls, in C
            size = _C_APPEND(fd, step.size, line)
            if size < 0:
                return False
            step.size = size
            step.seq = seq
            return True
        _flock(fd, _EX)
        try:
            st = _fstat(fd)
            if st.st_size != step.size or st.st_nlink == 0:
                return False
            if self.sync:
                step.write(line, sync=True)
            elif _write(fd, line) == len(line):  # StepFile.write, inlined: the step path
                step.size += len(line)
            else:
                os.ftruncate(fd, step.size)
                raise OSError(f"short write to {step.path}")
            step.seq = seq
            return True
        finally:
            _flock(fd, _UN)

    @contextmanager
    def locked(self, rowid: int, create: bool) -> Iterator[StepFile | None]:
        """The session's step file, exclusively locked (``None`` when it does not exist
        and ``create`` is false). A file unlinked meanwhile (its session closed
        elsewhere) is reopened by name."""
        while True:
            step = self._open.get(rowid)
            if step is None:
                flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | (os.O_CREAT if create else 0)
                path = self.path(rowid)
                try:
                    fd = os.open(path, flags, 0o600)
                except FileNotFoundError:
                    yield None
                    return
                step = StepFile(path, fd)
                self._remember(rowid, step)
            else:
                self._open.move_to_end(rowid)
            _flock(step.fd, _EX)
            if _fstat(step.fd).st_nlink == 0:  # unlinked: forget it and open the new one
                _flock(step.fd, _UN)
                self.drop(rowid)
                continue
            try:
                yield step
            finally:
                if step.fd >= 0:  # not closed meanwhile (closing released the lock)
                    _flock(step.fd, _UN)
            return

    def _remember(self, rowid: int, step: StepFile) -> None:
        self._open[rowid] = step
        while len(self._open) > _OPEN_MAX:
            _, old = self._open.popitem(last=False)
            os.close(old.fd)

    def drop(self, rowid: int, unlink: bool = False) -> None:
        """Forget (and close) the session's file; with ``unlink``, delete it (the caller
        holds its lock and folded it)."""
        step = self._open.pop(rowid, None)
        if unlink:
            with suppress(FileNotFoundError):
                os.unlink(self.path(rowid))
        if step is not None:
            os.close(step.fd)
            step.fd = -1

    def close(self) -> None:
        for rowid in list(self._open):
            self.drop(rowid)
