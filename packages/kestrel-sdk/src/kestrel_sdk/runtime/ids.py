"""Deterministic identifiers: session ids (docs/spec.md §5) and operation ids.

Ids are derived from content, never from a clock or a random source, so the same
principal opening the same scenario under the same label gets the same session id in
every process and on every machine.
"""

from __future__ import annotations

import base64
import hashlib

from kestrel_protocol import canonical_json

__all__ = ["operation_id", "session_id"]


def _b32(digest: bytes, length: int) -> str:
    return base64.b32encode(digest).decode("ascii").lower().rstrip("=")[:length]


def session_id(principal: str, scenario_root: str, label: str) -> str:
    """``ks_`` + the first 26 characters of lower-case base32 of sha256(JCS({...}))."""
    body = canonical_json({"principal": principal, "scenarioRoot": scenario_root, "label": label})
    return "ks_" + _b32(hashlib.sha256(body).digest(), 26)


def operation_id(principal: str, record_root: str) -> str:
    """The id of the grade operation of one record for one principal.

    Bound to the principal so that another principal presenting it learns nothing
    (``UNKNOWN_OPERATION``); deterministic so that a repeated grade names the same work.
    """
    body = canonical_json({"principal": principal, "record": record_root, "op": "grade"})
    return "op_" + _b32(hashlib.sha256(body).digest(), 26)
