"""Pentads' canonical text and roots, computed without building the model.

A pentad binds a submission's source to its session, seq and the frame root it followed
(``prev``). Its root is on every step's path, so it is hashed from text written here in
JCS order rather than from the model; a test proves the two agree. The stores rebuild a
pentad's canonical bytes from a journal row when it is read or its session closes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

from kestrel_protocol import KestrelError, RefusalCode

__all__ = [
    "MEDIA_TYPE",
    "pentad_bytes",
    "pentad_root",
    "quoted",
    "stored_pentad_bytes",
]

MEDIA_TYPE: Final = "text/x-kestrel"
"""The media type of a pentad's body (a Kestrel source)."""

_sha256: Final = hashlib.sha256
_dumps: Final = json.JSONEncoder(ensure_ascii=False).encode  # JCS string escaping for str values

_QUOTED: Final[dict[str, str]] = {}
_QUOTED_MAX: Final = 4096  # distinct short strings remembered, as many as pentad bodies (models.py)


def quoted(text: str) -> str:
    """``text`` as a JCS string; short ones are remembered, since a session id and most
    sources recur on every step."""
    found = _QUOTED.get(text)
    if found is None:
        found = _dumps(text)
        if len(text) <= 256:
            if len(_QUOTED) >= _QUOTED_MAX:
                _QUOTED.clear()
            _QUOTED[text] = found
    return found


def _unrooted(session_id: str, seq: int, prev: str, source: str) -> tuple[str, str]:
    """The pentad's canonical text without ``root``, split where ``root`` goes."""
    head = f'{{"body":{{"bytes":{quoted(source)},"mediaType":"{MEDIA_TYPE}"}},"prev":"{prev}",'
    return head, f'"seq":{seq},"session":{quoted(session_id)}}}'


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise KestrelError(
            RefusalCode.INVALID_SOURCE,
            "the source is not valid Unicode text (lone surrogate)",
            {"diagnostics": []},
        ) from None


def _text_root(text: str) -> str:
    """The root of a pentad's canonical ``text`` (hashed as encoded: no hasher object
    kept, no call per encoding); ``INVALID_SOURCE`` when it is not valid Unicode text."""
    try:
        return "sha256:" + _sha256(text.encode()).hexdigest()  # (UTF-8, the default)
    except UnicodeEncodeError:
        _utf8(text)  # raises the refusal
        raise


def pentad_root(session_id: str, seq: int, prev: str, source: str) -> str:
    """The root of the pentad binding ``source`` as submission ``seq`` after ``prev``.

    Equal to ``root_of`` of the pentad model (a test proves it) at a fraction of the
    cost: members in JCS order, strings escaped as JCS escapes them. A source that is
    not valid Unicode text is ``INVALID_SOURCE``. This is on every step's path.
    """
    return _text_root(
        f'{{"body":{{"bytes":{quoted(source)},"mediaType":"{MEDIA_TYPE}"}},'
        f'"prev":"{prev}","seq":{seq},"session":{quoted(session_id)}}}'
    )


def pentad_bytes(session_id: str, seq: int, prev: str, source: str) -> tuple[str, bytes]:
    """The pentad's root and its canonical bytes (with ``root``).

    A close builds one per submission (a gym episode's 2,519); a source that is not valid
    Unicode text is ``INVALID_SOURCE`` (the root is ASCII: once the text encodes, the
    rooted text does)."""
    head, tail = _unrooted(session_id, seq, prev, source)
    root = _text_root(head + tail)
    return root, f'{head}"root":"{root}",{tail}'.encode()


def stored_pentad_bytes(session_id: str, seq: int, prev: str, source: str) -> bytes:
    """The canonical bytes of a pentad rebuilt from a stored journal row; ``b""`` (which
    no root verifies: the artifact is then reported corrupt) when its stored source is
    not valid text."""
    try:
        return pentad_bytes(session_id, seq, prev, source)[1]
    except KestrelError:
        return b""
