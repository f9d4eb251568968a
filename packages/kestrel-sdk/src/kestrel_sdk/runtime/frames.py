"""The root of an engine frame, computed on the step path.

A frame the engine built holds only strings, integers, ``None``, lists and objects with
ASCII keys, so the C ``json`` encoder with sorted keys and JCS string escaping produces
its RFC 8785 bytes directly; this skips the generic per-value check that
``kestrel_protocol.canonical_json`` performs for arbitrary data. A test proves the two
agree on real sessions, and every grade re-derives the same roots with ``root_of``.
"""

from __future__ import annotations

import hashlib
import json

from kestrel_protocol import SessionFrame

__all__ = ["frame_root_of"]

_ENCODE = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
).encode


def frame_root_of(frame: SessionFrame) -> str:
    """``root_of(frame)`` for a frame built by the engine."""
    data = frame.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return "sha256:" + hashlib.sha256(_ENCODE(data).encode("utf-8")).hexdigest()
