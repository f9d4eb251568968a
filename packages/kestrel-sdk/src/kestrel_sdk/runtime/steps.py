"""Step files: the SQLite store's per-session append-only journal of accepted steps.

An accepted submission is one line appended to its session's step file
(``<database>.steps/<session rowid>-<database token>``): its seq, pentad root, frame
root and source (a JSON string, so a line never holds a raw newline), and, on the
step that changes the session's status (a stand-down, after which no step follows), that
status after the string. The SQLite journal table holds everything else: row 0 and seq 1
of each session, and every line once its session closes, the store opens or closes, or
an artifact lookup misses (the lines are then *folded*: inserted into the table in one
transaction, with the status a line carries, after which the file is removed; the next
append makes a new one). A stand-down therefore costs one line like any step, not a
fold of every line before it.

The file is made longer than its lines (``posix_fallocate``: a full disk is an
``OSError`` when the file grows, never a lost line) and mapped (``mmap``, shared): the
lines, then NUL bytes to its end, which no line holds (a JSON string escapes them). A
line is copied into the mapping at the first NUL, its first byte first. The NUL there
is the check that the file is as this store last left it: another store's line, or the
mark a fold leaves where the next line would go before it removes the file, makes it
non-NUL. So the fast path of an append is two system calls, ``flock`` and its release,
and no ``write`` (a compiled build's ``_append.c`` does the same in C). On a file system
that refuses a shared mapping (logged once per directory), each line is written with
``pwrite`` after ``fstat`` and a one-byte ``pread`` check the same.

Durability: the copy puts the line in the operating system's page cache, which a
process kill (SIGKILL, a crash) does not lose, as a ``write`` does; the same promise as
SQLite's WAL with ``synchronous=NORMAL``, which also writes without fsync on commit. With
``KESTREL_SQLITE_SYNCHRONOUS=FULL`` each line is ``pwrite``-n and ``fdatasync``-ed
before the append returns (power-loss durability, at the cost of a disk flush per step).

Several processes (or stores) may use one database: every append, read and fold holds
an exclusive ``flock`` on the session's file. When the file is not as this store left
it (another process appended, folded or closed the session), the slow path reads the
table and the file, clears a torn last line (a copy that never returned, so never
acknowledged: from the end of the last complete line to the last non-NUL byte) and
appends only if the session's head is the seq before, else ``JournalConflict``. A fold
removes the file rather than emptying it in place, so that another store cannot take a
file emptied and refilled for its own. A line is written only after the step is applied
and hashed, and the response is returned only after the copy: every acknowledged step
is in the page cache.

Reading: the table's rows, then the file's complete lines that follow them (lines a
fold already committed are skipped). A malformed line before the last, or a seq out of
order, is corruption: the session cannot be resumed, and the refusal says so.
"""

from __future__ import annotations

import fcntl
import json
import logging
import mmap
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

_OPEN_MAX: Final = 128
"""Step files kept open; a session beyond them reopens its file. Each holds two file
descriptors (``mmap`` keeps a duplicate of the file's), so at most 256 in all."""

_GROW_MIN: Final = 1 << 16
_GROW_MAX: Final = 1 << 23
"""A step file grows by its length, at least 64 KiB and at most 8 MiB at a time."""

_REMOVED: Final = b"~"
"""The mark a fold leaves at the first NUL before it removes the file: another store's
next append there finds the file changed (and, reading it, a torn line of one byte)."""

_flock: Final = fcntl.flock
_fstat: Final = os.fstat
_EX: Final = fcntl.LOCK_EX
_UN: Final = fcntl.LOCK_UN


_C_APPEND: Final[Callable[[int, mmap.mmap, int, bytes], int] | None] = native.c_function(
    "_append", "append_mapped"
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
    """An open step file, its mapping and what this store last knew of it."""

    path: Path
    fd: int
    size: int = -1  # where this store's next line goes: the end of its lines (-1: unknown)
    seq: int = -1  # the session's last seq then (-1: unknown)
    view: mmap.mmap | None = None  # the file, shared, as long as it was when mapped
    mappable: bool = True  # False once mmap refused it: lines are written with pwrite

    def lines(self, after: int) -> tuple[list[StepRow], int, int, str | None]:
        """The complete lines of seq > ``after`` (a contiguous run from ``after + 1``),
        the byte length of the complete lines, the end of the bytes written (past the
        complete lines: a torn line, for :meth:`clear`) and the status the last of them
        carries (``None``: none). The caller holds the lock."""
        data = os.pread(self.fd, _fstat(self.fd).st_size, 0)
        stop = data.find(b"\0")
        if stop < 0:
            stop = len(data)
        end = data.rfind(b"\n", 0, stop) + 1
        written = len(data.rstrip(b"\0"))
        newline = data.find(b"\n", end, written)
        if 0 <= newline < written - 1:  # a torn line is the last: this NUL is in a line
            raise self._corrupt(data.count(b"\n", 0, end) + 1, "holds a NUL byte")
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
        if end < written:
            log.warning("%s: dropping a torn last line (%d bytes)", self.path, written - end)
        return out, end, written, status

    def last(self) -> tuple[int, str | None] | None:
        """The seq and status of the last complete line (``None``: no line), parsing
        that line alone: a session's head, read on every read of it. The caller holds
        the lock; :meth:`lines` checks the whole file when the lines are wanted."""
        data = os.pread(self.fd, _fstat(self.fd).st_size, 0)
        stop = data.find(b"\0")
        end = data.rfind(b"\n", 0, stop if stop >= 0 else len(data)) + 1
        if end == 0:
            return None
        start = data.rfind(b"\n", 0, end - 1) + 1
        try:
            row, status = _parse(data[start : end - 1].decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise self._corrupt(data.count(b"\n", 0, end), "is not a step line") from None
        return row[0], status

    def _corrupt(self, number: int, what: str) -> KestrelError:
        log.error("step file %s is corrupt: line %d %s", self.path, number, what)
        return KestrelError(
            RefusalCode.BACKEND_UNAVAILABLE,
            f"the journal of this session is corrupt ({self.path.name} line {number} {what})",
            {"path": str(self.path), "line": number},
        )

    def clear(self, end: int, written: int) -> None:
        """NUL again the torn bytes from ``end`` to ``written``, the first of them last
        (a kill meanwhile leaves a torn line still, never a NUL before torn bytes)."""
        if written - end > 1:
            os.pwrite(self.fd, bytes(written - end - 1), end + 1)
        if written > end:
            os.pwrite(self.fd, b"\0", end)

    def write(self, line: bytes, sync: bool) -> None:
        """Write ``line`` at :attr:`size` with ``pwrite`` (the caller holds the lock and
        found NUL bytes from there on), growing the file when it does not fit; a short
        write is cleared and raised."""
        need = self.size + len(line)
        length = _fstat(self.fd).st_size
        if need > length:
            more = min(max(length, _GROW_MIN), _GROW_MAX)
            _allocate(self.fd, length, max(length + more, need) - length)
        written = os.pwrite(self.fd, line, self.size)
        if written != len(line):
            self.clear(self.size, self.size + written)
            raise OSError(f"short write to {self.path} ({written} of {len(line)} bytes)")
        if sync:
            os.fdatasync(self.fd)
        self.size = need

    def map(self) -> None:
        """Map the whole file (again, when it is longer than when it was mapped)."""
        if not self.mappable:
            return
        length = _fstat(self.fd).st_size
        view = self.view
        if view is not None:
            if len(view) == length:
                return
            view.close()
            self.view = None
        if length:
            try:
                self.view = mmap.mmap(self.fd, length)
            except OSError as exc:  # a file system without shared mappings: pwrite
                self.mappable = False
                _unmapped(self.path, exc)

    def as_left(self) -> bool:
        """Whether the file is as this store left it, read with ``fstat`` and ``pread``
        (the caller holds the lock): still linked, and NUL at :attr:`size` or its end
        there. For a line past the mapping's end, or a file that cannot be mapped."""
        st = _fstat(self.fd)
        if st.st_nlink == 0 or self.size > st.st_size:
            return False
        return self.size == st.st_size or os.pread(self.fd, 1, self.size) == b"\0"

    def mark_removed(self) -> None:
        """Leave :data:`_REMOVED` at the first NUL (the caller holds the lock and is about
        to remove the file): no other store's fast path appends to it after."""
        stop = os.pread(self.fd, _fstat(self.fd).st_size, 0).find(b"\0")
        if stop >= 0:
            os.pwrite(self.fd, _REMOVED, stop)

    def close(self) -> None:
        if self.view is not None:
            self.view.close()
            self.view = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_UNMAPPED: Final[set[Path]] = set()
"""Directories whose step files could not be mapped (reported once each)."""


def _unmapped(path: Path, exc: OSError) -> None:
    if path.parent not in _UNMAPPED:
        _UNMAPPED.add(path.parent)
        log.warning(
            "step files in %s cannot be mapped (%s): each line is written with pwrite",
            path.parent,
            exc,
        )


def _allocate(fd: int, offset: int, length: int) -> None:
    """Make the file ``offset + length`` bytes long, its new bytes NUL and, where the
    platform has ``posix_fallocate``, their disk space taken now (so a full disk is an
    ``OSError`` here, not a fault on a later copy into the mapping)."""
    if _FALLOCATE is not None:
        _FALLOCATE(fd, offset, length)
    else:
        os.ftruncate(fd, offset + length)


_FALLOCATE: Final[Callable[[int, int, int], None] | None] = getattr(os, "posix_fallocate", None)


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
        view = step.view
        if step.seq != seq - 1 or step.size < 0:
            return False
        if view is not None and _C_APPEND is not None and not self.sync:  # the same, in C
            end = _C_APPEND(step.fd, view, step.size, line)
            if end == -1:
                return False
            if end >= 0:
                step.size = end
                step.seq = seq
                return True
        fd = step.fd  # no C, a synchronous store, a line that does not fit, or no mapping
        _flock(fd, _EX)
        try:
            if not self._append_locked(step, view, line):
                return False
        finally:
            _flock(fd, _UN)
        step.seq = seq
        return True

    def _append_locked(self, step: StepFile, view: mmap.mmap | None, line: bytes) -> bool:
        size = step.size
        end = size + len(line)
        if view is None or end > len(view):  # no mapping, or no room in it: pwrite
            if not step.as_left():
                return False
            step.write(line, self.sync)  # growing the file when the line does not fit
            step.map()
        elif view[size] != 0:
            return False
        elif self.sync:
            step.write(line, sync=True)
        else:
            view[size] = line[0]  # the first byte first (see the module's docstring)
            view[size + 1 : end] = line[1:]
            step.size = end
        return True

    @contextmanager
    def locked(self, rowid: int, create: bool) -> Iterator[StepFile | None]:
        """The session's step file, exclusively locked (``None`` when it does not exist
        and ``create`` is false). A file unlinked meanwhile (its session closed
        elsewhere) is reopened by name."""
        while True:
            step = self._open.get(rowid)
            if step is None:
                flags = os.O_RDWR | os.O_CLOEXEC | (os.O_CREAT if create else 0)
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
            old.close()

    def drop(self, rowid: int, unlink: bool = False) -> None:
        """Forget (and close) the session's file; with ``unlink``, mark it removed and
        delete it (the caller holds its lock and folded it)."""
        step = self._open.pop(rowid, None)
        if unlink:
            if step is not None:
                step.mark_removed()
            with suppress(FileNotFoundError):
                os.unlink(self.path(rowid))
        if step is not None:
            step.close()

    def close(self) -> None:
        for rowid in list(self._open):
            self.drop(rowid)
