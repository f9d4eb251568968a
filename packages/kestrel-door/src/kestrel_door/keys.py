"""The door's signing keys: Ed25519, made on first use, kept in the door's store.

Every replica on one store signs with the same key set and publishes the same JWKS
(OKP keys, RFC 8037), each key named by its RFC 7638 thumbprint. ``rotate`` adds a key,
which then signs; older keys stay published so proofs they signed still verify. The
newest key signs; the oldest is also the secret a principal's pseudonym is keyed by
(stable across rotations). The private keys are stored raw in the door's store, which
is private to the operator (``door.db`` is mode 0600; a PostgreSQL role of its own).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)
from kestrel_protocol.store import DoorRecords

__all__ = ["DoorKeys", "utc_now"]


def utc_now() -> str:
    """The door's clock, RFC 3339 to the second (the runtime has none)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def key_time() -> str:
    """When a key is made, to the microsecond: keys are ordered by it (the newest signs),
    and a rotation within the second of the first key must still come after it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _public_jwk(key: Ed25519PrivateKey) -> dict[str, str]:
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return {"crv": "Ed25519", "kty": "OKP", "x": _b64url(raw)}


def _thumbprint(jwk: dict[str, str]) -> str:
    """RFC 7638: the SHA-256 of the required members' canonical JSON, base64url."""
    members = {k: jwk[k] for k in ("crv", "kty", "x")}
    text = json.dumps(members, separators=(",", ":"), sort_keys=True)
    return _b64url(hashlib.sha256(text.encode("utf-8")).digest())


class DoorKeys:
    """The signing keys in ``records`` (made on first use)."""

    def __init__(self, records: DoorRecords, clock: Callable[[], str] = key_time) -> None:
        self._records = records
        self._clock = clock

    def _keys(self) -> list[tuple[str, Ed25519PrivateKey]]:
        rows = self._records.signing_keys()
        if not rows:
            self.rotate()
            rows = self._records.signing_keys()
        return [(kid, Ed25519PrivateKey.from_private_bytes(raw)) for kid, raw, _ in rows]

    def rotate(self) -> str:
        """Add a key (the signer from now on); its kid."""
        key = Ed25519PrivateKey.generate()
        kid = _thumbprint(_public_jwk(key))
        raw = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        self._records.add_signing_key(kid, raw, self._clock())
        return kid

    def signer(self) -> tuple[str, Ed25519PrivateKey]:
        """The newest key, and its kid."""
        return self._keys()[-1]

    def jwks(self) -> dict[str, Any]:
        """Every key's public half as a JWKS (oldest first)."""
        keys = []
        for kid, key in self._keys():
            keys.append({**_public_jwk(key), "kid": kid, "use": "sig", "alg": "EdDSA"})
        return {"keys": keys}

    def pseudonym(self, principal: str) -> str:
        """The principal as a statement names it: an HMAC under the oldest key, stable
        for this door, which no one without the door's store can reverse or guess."""
        _, oldest = self._keys()[0]
        secret = oldest.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        mac = hmac.new(secret, b"kestrel principal\0" + principal.encode("utf-8"), "sha256")
        return "p_" + mac.hexdigest()[:32]
