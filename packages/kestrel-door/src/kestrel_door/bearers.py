"""Opaque bearer tokens: minted, recognised by shape, and kept only as a hash.

Issued API tokens and turn credentials differ in what they point at, not in how they
are made or checked; one copy keeps the two kinds equally strong (256 random bits) and
equally quick to reject (a token of the wrong shape is never hashed or looked up).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any, Final

__all__ = ["bearer_digest", "mint_bearer", "well_formed_bearer"]

_BYTES: Final = 32  # 256 random bits
_CHARS: Final = 43  # their base64url form, unpadded


def mint_bearer(prefix: str) -> str:
    """A new token: ``prefix`` (recognisable by secret scanners) and 256 random bits."""
    return prefix + secrets.token_urlsafe(_BYTES)


def well_formed_bearer(token: Any, prefix: str) -> bool:
    """Whether ``token`` could be one :func:`mint_bearer` made with ``prefix``."""
    return (
        isinstance(token, str) and len(token) == len(prefix) + _CHARS and token.startswith(prefix)
    )


def bearer_digest(token: str) -> bytes:
    """What is stored instead of the token (sha256 of its UTF-8)."""
    return hashlib.sha256(token.encode("utf-8")).digest()
