"""OAuth 2.1 access tokens: JWTs checked against the configured issuer's JWKS.

The checks that matter for a resource server (RFC 9068 / RFC 8707 / MCP auth): the
signature under a key the issuer publishes, an algorithm from an allow-list (so
``alg: none`` and the HS256-signed-with-the-public-key confusion are refused before
any key is touched), ``iss``, ``aud`` naming this server, and ``exp``. The token's
``sub`` is the principal ``oauth:SUB`` (:mod:`.principals`), never an issued principal's name.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import anyio
import httpx
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError
from joserfc.jwk import KeySet
from kestrel_protocol.ports import Grant

from .principals import oauth_principal

__all__ = ["DEFAULT_ALGORITHMS", "JwtGrantVerifier"]

logger = logging.getLogger(__name__)

DEFAULT_ALGORITHMS: Final = ("RS256", "PS256", "ES256", "EdDSA")
_JWKS_TTL_S: Final = 300.0
_REFETCH_MIN_S: Final = 30.0
_MAX_TOKEN_CHARS: Final = 16 * 1024


class JwtGrantVerifier:
    """A ``GrantVerifier`` for JWT access tokens from one issuer."""

    def __init__(
        self,
        *,
        issuer: str,
        jwks_url: str,
        audiences: Sequence[str],
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        client: httpx.AsyncClient | None = None,
        leeway_s: int = 30,
        now: Callable[[], float] = time.time,
    ) -> None:
        bad = {a for a in algorithms if a.lower() == "none" or a.upper().startswith("HS")}
        if bad:
            raise ValueError(f"algorithms {sorted(bad)} are not allowed for access tokens")
        self.issuer = issuer
        self.jwks_url = jwks_url
        self.audiences = tuple(audiences)
        self.algorithms = tuple(algorithms)
        self._client = client
        self._leeway = leeway_s
        self._now = now
        self._keys: KeySet | None = None
        self._fetched_at = float("-inf")
        self._lock = anyio.Lock()

    async def _keyset(self, *, refresh: bool = False) -> KeySet | None:
        async with self._lock:
            age = self._now() - self._fetched_at
            stale = self._keys is None or age > _JWKS_TTL_S or (refresh and age > _REFETCH_MIN_S)
            if stale:
                try:
                    if self._client is not None:
                        resp = await self._client.get(self.jwks_url, timeout=5.0)
                    else:
                        async with httpx.AsyncClient() as client:
                            resp = await client.get(self.jwks_url, timeout=5.0)
                    resp.raise_for_status()
                    self._keys = KeySet.import_key_set(resp.json())
                    self._fetched_at = self._now()
                except Exception as exc:
                    logger.warning(
                        "JWKS fetch from %s failed: %s", self.jwks_url, type(exc).__name__
                    )
            return self._keys

    def _claims_ok(self, claims: dict[str, Any]) -> bool:
        now = self._now()
        if claims.get("iss") != self.issuer:
            return False
        aud = claims.get("aud")
        auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        if not any(isinstance(a, str) and a in self.audiences for a in auds):
            return False
        exp = claims.get("exp")
        if not isinstance(exp, int | float) or isinstance(exp, bool) or exp + self._leeway <= now:
            return False
        nbf = claims.get("nbf")
        if isinstance(nbf, int | float) and not isinstance(nbf, bool) and nbf - self._leeway > now:
            return False
        sub = claims.get("sub")
        return isinstance(sub, str) and bool(sub)

    @staticmethod
    def _scopes(claims: dict[str, Any]) -> frozenset[str]:
        scope = claims.get("scope")
        if isinstance(scope, str):
            return frozenset(scope.split())
        scp = claims.get("scp")
        if isinstance(scp, list):
            return frozenset(s for s in scp if isinstance(s, str))
        return frozenset()

    async def verify(self, token: str) -> Grant | None:
        """The grant for a valid access token, else ``None``; never raises or logs the token."""
        try:
            if not isinstance(token, str) or len(token) > _MAX_TOKEN_CHARS or token.count(".") != 2:
                return None
            keys = await self._keyset()
            if keys is None:
                return None
            try:
                decoded = jwt.decode(token, keys, algorithms=list(self.algorithms))
            except InvalidKeyIdError:
                # The issuer may have rotated its keys: refetch (rate-limited) and retry once.
                keys = await self._keyset(refresh=True)
                if keys is None:
                    return None
                decoded = jwt.decode(token, keys, algorithms=list(self.algorithms))
            if decoded.header.get("alg") not in self.algorithms:
                return None
            claims = dict(decoded.claims)
            if not self._claims_ok(claims):
                return None
            principal = oauth_principal(str(claims["sub"]))
            if principal is None:
                logger.info("access token refused: its sub names a trial")
                return None
            return Grant(principal=principal, scopes=self._scopes(claims), kind="oauth")
        except Exception as exc:
            logger.info("access token refused: %s", type(exc).__name__)
            return None
