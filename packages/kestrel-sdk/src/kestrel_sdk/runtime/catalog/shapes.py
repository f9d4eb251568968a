"""Validated tapes remembered by file identity: listing a catalog reads metadata, not tapes.

A user tape is validated in full the first time a process meets it (or when
``kestrel scenario new`` writes it); its shape (bars, first and last time, root) is then
remembered under ``catalog-shapes/`` in the Kestrel home the caller chose (``--home``,
``home=``; else ``$KESTREL_HOME``, else ``~/.kestrel``: :func:`kestrel_protocol.kestrel_home`),
keyed by the tape file's identity
(real path, device, inode, size, modification time) and the bytes of its
``scenario.toml`` (whose terms the validation used). A later listing or check with the
same key takes the shape from there without opening the tape; any change to either file
validates it again. The tape's columns are parsed on a session's first use, and a tape
whose bytes no longer hash to the remembered root is refused then, never served.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from .tapes import TapeShape

__all__ = ["remember_shape", "remembered_shape"]

logger = logging.getLogger("kestrel_sdk.runtime.catalog")

_DIRECTORY = "catalog-shapes"
_VERSION = 1


def _key(home: Path, tape: Path, toml: bytes) -> tuple[Path, dict[str, Any]] | None:
    try:
        real = tape.resolve()
        found = real.stat()
    except OSError:
        return None
    key = {
        "version": _VERSION,
        "tape": str(real),
        "device": found.st_dev,
        "inode": found.st_ino,
        "size": found.st_size,
        "mtime_ns": found.st_mtime_ns,
        "terms": hashlib.sha256(toml).hexdigest(),
    }
    name = hashlib.sha256(str(real).encode("utf-8", "surrogateescape")).hexdigest()
    return home / _DIRECTORY / f"{name}.json", key


def remembered_shape(home: Path, tape: Path, toml: bytes) -> TapeShape | None:
    """The shape remembered in ``home`` for ``tape`` as it is now (with these terms), else
    ``None``."""
    found = _key(home, tape, toml)
    if found is None:
        return None
    path, key = found
    try:
        entry = json.loads(path.read_bytes())
        if entry.get("key") != key:
            return None
        shape = entry["shape"]
        return TapeShape(
            bars=int(shape["bars"]),
            start=str(shape["start"]),
            end=str(shape["end"]),
            root=str(shape["root"]),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def remember_shape(home: Path, tape: Path, toml: bytes, shape: TapeShape) -> None:
    """Remember in ``home`` that ``tape`` (with these terms) validated to ``shape``; best
    effort (a home that cannot be written only means the next listing validates again)."""
    found = _key(home, tape, toml)
    if found is None:
        return
    path, key = found
    body = json.dumps(
        {
            "key": key,
            "shape": {
                "bars": shape.bars,
                "start": shape.start,
                "end": shape.end,
                "root": shape.root,
            },
        },
        sort_keys=True,
    ).encode("utf-8")
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(body)
        os.replace(staging, path)
    except OSError as error:
        logger.info("could not remember the shape of %s: %s", tape, error)
        with contextlib.suppress(OSError):
            staging.unlink()
