"""The door's signing keys: Ed25519, made on first use, kept in the door's store.

Every replica on one store signs with the same key set and publishes the same JWKS
(OKP keys, RFC 8037), each key named by its RFC 7638 thumbprint. ``rotate`` adds a key,
which then signs; older keys stay published so proofs they signed still verify. The
newest live key signs. ``revoke`` withdraws a key: it never signs again and the JWKS
lists it under ``revoked`` (kid and time) instead of ``keys``, so every proof it signed,
before or after, fails ``kestrel verify --trust`` naming the revocation; revoking the
signing key (or the only one) makes a new key that signs from then on. No key is a
pseudonym secret (:mod:`.pseudonyms` keeps its own). The private keys are stored raw in
the door's store, which is private to the operator (``door.db`` is mode 0600; a
PostgreSQL role of its own).
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
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

from .expiry import rfc3339

__all__ = ["DoorKeys", "KeyNotLive", "utc_now"]


def utc_now() -> str:
    """The door's clock, RFC 3339 to the second (the runtime has none)."""
    return rfc3339(time.time())


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


class KeyNotLive(LookupError):
    """``revoke`` of a kid the store holds no live key for."""


class DoorKeys:
    """The signing keys in ``records`` (made on first use)."""

    def __init__(self, records: DoorRecords, clock: Callable[[], str] = key_time) -> None:
        self.records = records
        self._clock = clock

    def _live(self) -> list[tuple[str, bytes, str]]:
        revoked = self.records.revoked_signing_keys()
        return [row for row in self.records.signing_keys() if row[0] not in revoked]

    def _keys(self) -> list[tuple[str, Ed25519PrivateKey]]:
        """The live keys, oldest first (one is made when there is none)."""
        rows = self._live()
        if not rows:
            self.rotate()
            rows = self._live()
        return [(kid, Ed25519PrivateKey.from_private_bytes(raw)) for kid, raw, _ in rows]

    def rotate(self) -> str:
        """Add a key (the signer from now on); its kid."""
        key = Ed25519PrivateKey.generate()
        kid = _thumbprint(_public_jwk(key))
        raw = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        self.records.add_signing_key(kid, raw, self._clock())
        return kid

    def signer(self) -> tuple[str, Ed25519PrivateKey]:
        """The newest live key, and its kid."""
        return self._keys()[-1]

    def revoke(self, kid: str) -> str | None:
        """Revoke the live key ``kid`` (:class:`KeyNotLive` when there is none): the kid
        of the key made to sign instead when ``kid`` was the signer, else ``None``."""
        was_signer = self.signer()[0] == kid
        if not self.records.revoke_signing_key(kid, utc_now()):
            raise KeyNotLive(kid)
        return self.rotate() if was_signer else None

    def jwks(self) -> dict[str, Any]:
        """Every live key's public half as a JWKS (oldest first); revoked keys' kids and
        times under ``revoked`` (a verifier that does not know the member finds no key)."""
        keys = []
        for kid, key in self._keys():
            keys.append({**_public_jwk(key), "kid": kid, "use": "sig", "alg": "EdDSA"})
        revoked = self.records.revoked_signing_keys()
        if not revoked:
            return {"keys": keys}
        return {"keys": keys, "revoked": [{"kid": k, "revokedAt": at} for k, at in revoked.items()]}
