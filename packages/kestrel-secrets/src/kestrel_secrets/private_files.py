"""Owner-only files and directories, written atomically and durably.

A secret file must never be readable by others, never be half-written (a killed
process leaves the old file or the new one, nothing in between) and never be written
through a symlink, which could send a secret somewhere the operator did not choose.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import tempfile
from pathlib import Path

from kestrel_protocol import RefusalCode

from .errors import SecretStoreError

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "atomic_write_private",
    "ensure_private_dir",
    "read_private_text",
    "remove_stale_temporaries",
]

log = logging.getLogger("kestrel_secrets")

DIR_MODE = 0o700
FILE_MODE = 0o600
_POSIX = os.name == "posix"


def _unavailable(message: str, path: Path) -> SecretStoreError:
    return SecretStoreError(RefusalCode.SECRET_STORE_UNAVAILABLE, message, {"path": str(path)})


def _owned_by_me(st: os.stat_result) -> bool:
    return not _POSIX or st.st_uid == os.getuid()


def ensure_private_dir(directory: Path) -> None:
    """Create ``directory`` 0700, or tighten an existing one of ours to 0700.

    Parents are created with the usual umask; only the store's own directory is made
    private. A looser directory we own is tightened and a warning says so; one owned by
    someone else is left alone (we could not chmod it anyway) with a warning.
    """
    try:
        directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        st = directory.stat()
    except OSError as exc:
        raise _unavailable(
            f"cannot create the secret directory {directory}: {exc.strerror}", directory
        ) from None
    if not stat.S_ISDIR(st.st_mode):
        raise _unavailable(f"{directory} is not a directory", directory)
    if not _POSIX:
        return
    loose = stat.S_IMODE(st.st_mode) & 0o077
    if not loose:
        return
    if not _owned_by_me(st):
        log.warning(
            "secret directory %s has mode %04o and belongs to another user; left unchanged",
            directory,
            stat.S_IMODE(st.st_mode),
        )
        return
    os.chmod(directory, DIR_MODE)
    log.warning(
        "tightened secret directory %s from mode %04o to %04o",
        directory,
        stat.S_IMODE(st.st_mode),
        DIR_MODE,
    )


def _refuse_symlink(path: Path) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _unavailable(f"cannot inspect {path}: {exc.strerror}", path) from None
    if stat.S_ISLNK(st.st_mode):
        raise _unavailable(
            f"{path} is a symlink; Kestrel does not read or write secrets through a symlink "
            "(replace it with a regular file, or point KESTREL_HOME at the real directory)",
            path,
        )
    if not stat.S_ISREG(st.st_mode):
        raise _unavailable(f"{path} is not a regular file", path)
    return st


def read_private_text(path: Path) -> str | None:
    """The UTF-8 text of ``path`` (``None`` when absent), never through a symlink.

    A file readable by group or others is still read, with a warning that the next
    write tightens it to 0600.
    """
    st = _refuse_symlink(path)
    if st is None:
        return None
    if _POSIX and stat.S_IMODE(st.st_mode) & 0o077:
        log.warning(
            "secret file %s has mode %04o (readable by others); the next write makes it %04o",
            path,
            stat.S_IMODE(st.st_mode),
            FILE_MODE,
        )
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            _refuse_symlink(path)
        raise _unavailable(f"cannot read {path}: {exc.strerror}", path) from None
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _unavailable(
            f"{path} is not UTF-8 text; fix or move it before Kestrel writes to it", path
        ) from None


def _fsync_directory(directory: Path) -> None:
    if not _POSIX:
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temporary_affixes(path: Path) -> tuple[str, str]:
    # Hidden, and named after the file: `.env` -> `.env.<random>.tmp`.
    hidden = path.name if path.name.startswith(".") else f".{path.name}"
    return f"{hidden}.", ".tmp"


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Delete temporaries a killed writer left beside ``path``; call only under its lock.

    Every writer holds the lock while its temporary exists, so one found by a lock
    holder belongs to a dead process. Such a file holds a full copy of the secrets and
    must not linger. Returns what was removed.
    """
    prefix, suffix = _temporary_affixes(path)
    removed: list[Path] = []
    for stale in path.parent.glob(f"{prefix}*{suffix}"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
            removed.append(stale)
            log.warning("removed %s, left by an interrupted write", stale)
    return removed


def atomic_write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8), mode 0600, atomically and durably.

    The new content goes to a 0600 temporary file in the same directory, is fsynced,
    renamed over ``path`` and the directory is fsynced, so a crash leaves either the
    old file or the new one. A previous mode looser than 0600 is reported in a warning:
    the replacement is always 0600.
    """
    previous = _refuse_symlink(path)
    directory = path.parent
    try:
        prefix, suffix = _temporary_affixes(path)
        fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=suffix)
    except OSError as exc:
        raise _unavailable(f"cannot write in {directory}: {exc.strerror}", path) from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            if _POSIX:
                os.fchmod(handle.fileno(), FILE_MODE)
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        _fsync_directory(directory)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise _unavailable(f"cannot write {path}: {exc.strerror}", path) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    if _POSIX and previous is not None and stat.S_IMODE(previous.st_mode) != FILE_MODE:
        log.warning(
            "secret file %s had mode %04o; it is now %04o",
            path,
            stat.S_IMODE(previous.st_mode),
            FILE_MODE,
        )
