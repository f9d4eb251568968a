"""Issued API tokens: minted by the operator, stored as a hash, verified per request.

The token is shown once, on issue; afterwards only its sha256 exists, so neither the
database nor ``token list`` can leak a usable bearer.
"""

from __future__ import annotations

import datetime as dt
import hmac
import logging
import secrets
from dataclasses import dataclass
from typing import Any, Final

from kestrel_protocol.ports import Grant
from kestrel_protocol.surface import ALL_SCOPES

from .bearers import bearer_digest, mint_bearer, well_formed_bearer
from .store import DoorStore

__all__ = ["ISSUED_TOKEN_PREFIX", "IssuedToken", "IssuedTokens"]

logger = logging.getLogger(__name__)

ISSUED_TOKEN_PREFIX: Final = "kestrel_tok_"


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """What ``token list`` shows: never the token."""

    id: str
    principal: str
    scopes: tuple[str, ...]
    label: str | None
    created_at: str
    revoked_at: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "principal": self.principal,
            "scopes": list(self.scopes),
            "label": self.label,
            "createdAt": self.created_at,
            "revokedAt": self.revoked_at,
        }


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class IssuedTokens:
    """The issued-token table, and a ``GrantVerifier`` over it."""

    def __init__(self, store: DoorStore) -> None:
        self._store = store

    def issue(
        self, principal: str, scopes: list[str] | tuple[str, ...], label: str | None = None
    ) -> tuple[IssuedToken, str]:
        """Mint a token; returns its listing row and the token (shown once)."""
        if not principal or not principal.strip():
            raise ValueError("a principal is required")
        unknown = sorted(set(scopes) - set(ALL_SCOPES))
        if unknown:
            raise ValueError(f"unknown scope(s) {unknown}; known: {list(ALL_SCOPES)}")
        if not scopes:
            raise ValueError(f"at least one scope is required; known: {list(ALL_SCOPES)}")
        token = mint_bearer(ISSUED_TOKEN_PREFIX)
        digest = bearer_digest(token)
        row = IssuedToken(
            id="tk_" + secrets.token_hex(6),
            principal=principal,
            scopes=tuple(sorted(set(scopes))),
            label=label,
            created_at=_now(),
            revoked_at=None,
        )
        with self._store.transaction() as db:
            db.execute(
                "INSERT INTO tokens (id, digest, principal, scopes, label, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (row.id, digest, principal, " ".join(row.scopes), label, row.created_at),
            )
        return row, token

    def list(self) -> list[IssuedToken]:
        with self._store.read() as db:
            rows = db.execute(
                "SELECT id, principal, scopes, label, created_at, revoked_at FROM tokens"
                " ORDER BY created_at, id"
            ).fetchall()
        return [IssuedToken(r[0], r[1], tuple(r[2].split()), r[3], r[4], r[5]) for r in rows]

    def revoke(self, token_id: str) -> bool:
        """Revoke by id; ``False`` when no such live token exists."""
        with self._store.transaction() as db:
            cur = db.execute(
                "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (_now(), token_id),
            )
            return cur.rowcount > 0

    async def verify(self, token: str) -> Grant | None:
        """The grant for a live issued token, else ``None``. Never raises, never logs it."""
        try:
            if not well_formed_bearer(token, ISSUED_TOKEN_PREFIX):
                return None
            digest = bearer_digest(token)
            with self._store.read() as db:
                row = db.execute(
                    "SELECT digest, principal, scopes FROM tokens"
                    " WHERE digest = ? AND revoked_at IS NULL",
                    (digest,),
                ).fetchone()
            if row is None or not hmac.compare_digest(bytes(row[0]), digest):
                return None
            return Grant(principal=row[1], scopes=frozenset(row[2].split()), kind="issued")
        except Exception:
            logger.warning("issued-token lookup failed", exc_info=False)
            return None
