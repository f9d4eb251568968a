"""Reading a JSON file a stranger handed over (a proof, a grade, a reveal) within
limits: the one reader of such files on every face (``kestrel verify``, ``report`` and
``board``, ``kestrel-door board publish``) and of the board a door publishes (``kestrel
board --from``, which :func:`parse_json` reads without the size limit).

No file may take its reader down (a ``RecursionError``, memory exhausted, a blocking
read), nor say one thing to a person and another to the verifier: every way a file can
be bad is an :class:`Unreadable` naming why (a board's failed row, a command's
``INVALID_INPUT``). The limits:

- :data:`MAX_FILE_BYTES`: a file larger than this is not read (a proof that embeds its
  scenario's tape is well under a megabyte; an Inspect log holds many of them);
- :data:`MAX_DEPTH`: JSON nested deeper than this is not a proof (a proof nests about
  ten levels);
- the text must be UTF-8 and strict JSON (``NaN`` and ``Infinity`` are not JSON);
- no object may name a key twice: ``json`` keeps the last value, and a person or
  another parser may read the first, so the file would not say one thing.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any, Final

__all__ = [
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "Unreadable",
    "check_depth",
    "parse_json",
    "read_json",
    "size_problem",
]

MAX_FILE_BYTES: Final = 64 * 1024 * 1024
"""The largest file read (64 MiB)."""

MAX_DEPTH: Final = 64
"""The deepest nesting of objects and arrays accepted in a document."""


class Unreadable(ValueError):
    """Why a file cannot be read as a Kestrel document (a board's failed row, a
    command's refusal)."""


def size_problem(path: Path) -> str | None:
    """Why ``path`` is not read at all (not a regular file, or too large), else None."""
    try:
        found = path.stat()
    except OSError as exc:
        return f"cannot be read: {exc.strerror or type(exc).__name__}"
    if not stat.S_ISREG(found.st_mode):
        return "not a regular file"
    if found.st_size > MAX_FILE_BYTES:
        return (
            f"too large: {found.st_size} bytes (a board reads files of at most "
            f"{MAX_FILE_BYTES} bytes)"
        )
    return None


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """One JSON object's members, refusing a key named twice."""
    members = dict(pairs)
    if len(members) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise Unreadable(
                    f"the key {json.dumps(key)} is repeated in one object: a reader may "
                    "take either value"
                )
            seen.add(key)
    return members


_DECODER: Final = json.JSONDecoder(parse_constant=_not_json, object_pairs_hook=_object)


def check_depth(data: Any) -> None:
    """:class:`Unreadable` when ``data`` nests deeper than :data:`MAX_DEPTH` (checked
    without recursion, so that the check itself cannot overflow)."""
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if not isinstance(value, dict | list):
            continue
        if depth > MAX_DEPTH:
            raise Unreadable(f"nested deeper than {MAX_DEPTH} levels: not a Kestrel proof")
        children = value.values() if isinstance(value, dict) else value
        pending.extend((child, depth + 1) for child in children)


def read_json(path: Path) -> Any:
    """The JSON data of ``path`` within this module's limits, or :class:`Unreadable`."""
    problem = size_problem(path)
    if problem is not None:
        raise Unreadable(problem)
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise Unreadable(f"cannot be read: {exc.strerror or type(exc).__name__}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise Unreadable(f"too large: more than {MAX_FILE_BYTES} bytes")
    return parse_json(raw)


def parse_json(raw: bytes) -> Any:
    """The JSON data of ``raw`` (a file's bytes, a download) within this module's limits
    but its size, or :class:`Unreadable`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(
            f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start}"
        ) from None
    try:
        data = _DECODER.decode(text)
    except Unreadable:
        raise
    except RecursionError:
        raise Unreadable(f"nested deeper than {MAX_DEPTH} levels: not a Kestrel proof") from None
    except ValueError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Unreadable(f"not readable JSON: {first}") from None
    check_depth(data)
    return data
