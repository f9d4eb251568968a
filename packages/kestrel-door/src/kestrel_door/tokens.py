"""Issued API tokens: minted by the operator, stored as a hash, verified per request.

The token is shown once, on issue; afterwards only its sha256 exists, so neither the
database nor ``token list`` can leak a usable bearer. A token expires
(:mod:`.expiry`): after its ``expires_at`` it is refused as an unknown one is; a trial's
ends no later than the token that minted it. A stored ``expires_at`` that is no time
(written by another hand) is refused the same way, named once in the log by the token's
id; ``token list`` shows it as it is stored, and ``token revoke`` still ends it.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from kestrel_protocol import KestrelError, RefusalCode
from kestrel_protocol.outage import RETRY_AFTER_S, STORE_UNAVAILABLE
from kestrel_protocol.ports import Grant
from kestrel_protocol.store import DoorRecords, TokenEntry
from kestrel_protocol.surface import ALL_SCOPES, trial_principal

from .bearers import bearer_digest, mint_bearer, well_formed_bearer
from .expiry import DEFAULT_TOKEN_LIFETIME, lifetime_seconds, rfc3339, time_of
from .principals import issuable_principal

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
    scenarios: tuple[str, ...] | None = None
    """The only scenarios its principal sees and trades (a trial's); ``None``: all."""
    parent: str | None = None
    """The issued token that minted it (a trial's): revoking that one revokes this one."""
    expires_at: str | None = None
    """When the door stops accepting it (RFC 3339 UTC); ``None``: never."""

    def to_json(self) -> dict[str, Any]:
        listed: dict[str, Any] = {
            "id": self.id,
            "principal": self.principal,
            "scopes": list(self.scopes),
            "label": self.label,
            "createdAt": self.created_at,
            "revokedAt": self.revoked_at,
            "expiresAt": self.expires_at,
        }
        if self.scenarios is not None:
            listed["scenarios"] = list(self.scenarios)
        if self.parent is not None:
            listed["parent"] = self.parent
        return listed


_DEFAULT_LIFETIME_S: Final = lifetime_seconds(DEFAULT_TOKEN_LIFETIME)


class IssuedTokens:
    """The issued-token table, and a ``GrantVerifier`` over it, on the door's clock
    ``now`` (epoch seconds)."""

    def __init__(self, store: DoorRecords, now: Callable[[], float] = time.time) -> None:
        self._store = store
        self._now = now
        self._unreadable: set[str] = set()
        """The ids of tokens whose stored expiry is no time, named in the log already."""

    def issue(
        self,
        principal: str,
        scopes: list[str] | tuple[str, ...],
        label: str | None = None,
        *,
        lifetime_s: float | None = _DEFAULT_LIFETIME_S,
        expires_at: float | None = None,
    ) -> tuple[IssuedToken, str]:
        """Mint the operator's token for ``principal`` (a name no other kind of principal
        owns: :func:`~.principals.issuable_principal`); returns its listing row and the
        token (shown once). It expires at ``expires_at`` (epoch seconds) when given, else
        ``lifetime_s`` from now (:data:`~.expiry.DEFAULT_TOKEN_LIFETIME` unless said;
        ``None``: never); ``ValueError`` for an expiry not after now."""
        now = self._now()
        until = expires_at if expires_at is not None else _after(now, lifetime_s)
        if until is not None and until < now + 1:
            raise ValueError(
                f"the expiry {rfc3339(until)} is not after now ({rfc3339(now)}): "
                "a token must be usable when issued"
            )
        expiry = None if until is None else rfc3339(until)
        row, token, entry, digest = self._made(
            issuable_principal(principal),
            scopes,
            label,
            scenarios=None,
            parent=None,
            expires_at=expiry,
        )
        self._store.add_token(entry, digest)
        return row, token

    def issue_trial(
        self,
        of: str,
        name: str,
        scopes: list[str] | tuple[str, ...],
        *,
        scenarios: Sequence[str] | None = None,
        parent: str | None = None,
        lifetime_s: float | None = None,
        not_after: str | None = None,
    ) -> tuple[IssuedToken, str, tuple[int, int]]:
        """Mint the token of the trial ``name`` of the principal ``of`` (``OF/trial-NAME``,
        labelled ``trial of OF``), with the trial's number among ``of``'s trials (1, 2, ...
        in mint order, kept in the same transaction; a name minted again keeps its first)
        and how many trials ``of`` has minted with it.
        With ``scenarios`` (ids the caller checked against the catalog) it sees and trades
        only those; with ``parent`` (the id of the issued token minting it) it is revoked
        with that one. It expires ``lifetime_s`` from now, but never after ``not_after``
        (the expiry of the bearer minting it): the earlier of the two, ``None`` when neither
        is given."""
        label = f"trial of {of}"
        asked = _after(self._now(), lifetime_s)
        expiry = None if asked is None else rfc3339(asked)
        if not_after is not None and (asked is None or time_of(not_after) < asked):
            expiry = not_after
        row, token, entry, digest = self._made(
            trial_principal(of, name),
            scopes,
            label,
            scenarios=scenarios,
            parent=parent,
            expires_at=expiry,
        )
        return row, token, self._store.add_trial_token(entry, digest, of)

    def _made(
        self,
        principal: str,
        scopes: list[str] | tuple[str, ...],
        label: str | None,
        *,
        scenarios: Sequence[str] | None,
        parent: str | None,
        expires_at: str | None,
    ) -> tuple[IssuedToken, str, TokenEntry, bytes]:
        """A new token's listing row, the token, and what the store keeps of it."""
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
            created_at=rfc3339(self._now()),
            revoked_at=None,
            scenarios=None if scenarios is None else tuple(sorted(set(scenarios))),
            parent=parent,
            expires_at=expires_at,
        )
        only = None if row.scenarios is None else " ".join(row.scenarios)
        entry = TokenEntry(
            row.id,
            principal,
            " ".join(row.scopes),
            label,
            row.created_at,
            None,
            only,
            parent,
            expires_at,
        )
        return row, token, entry, digest

    def list(self) -> list[IssuedToken]:
        return [
            IssuedToken(
                r.id,
                r.principal,
                tuple(r.scopes.split()),
                r.label,
                r.created_at,
                r.revoked_at,
                None if r.scenarios is None else tuple(r.scenarios.split()),
                r.parent,
                r.expires_at,
            )
            for r in self._store.tokens()
        ]

    def expired(self, row: IssuedToken) -> bool:
        """Whether the door no longer accepts ``row`` for its age (revoked or not): past
        its expiry, or its stored expiry is no time (:meth:`expiry_unreadable`)."""
        return self._ended(row.id, row.expires_at)

    @staticmethod
    def expiry_unreadable(row: IssuedToken) -> bool:
        """Whether ``row``'s stored expiry is no time (the door refuses the token)."""
        if row.expires_at is None:
            return False
        try:
            time_of(row.expires_at)
        except ValueError:
            return True
        return False

    def _ended(self, token_id: str, expires_at: str | None) -> bool:
        """Whether a token stored with ``expires_at`` is no longer accepted: past it, or
        it is no time, which the log names once per token (by id, never the token)."""
        if expires_at is None:
            return False
        try:
            return time_of(expires_at) <= self._now()
        except ValueError:
            if token_id not in self._unreadable:
                self._unreadable.add(token_id)
                logger.warning(
                    "issued token %s is refused: its stored expires_at %r is not a time "
                    "(RFC 3339 with its offset); revoke it, or reissue it",
                    token_id,
                    expires_at,
                )
            return True

    def revoke(self, token_id: str) -> int | None:
        """Revoke by id, with every live token it minted (its trials), at once: how many
        of those went with it; ``None`` when no such live token exists."""
        return self._store.revoke_token(token_id, rfc3339(self._now()))

    async def verify(self, token: str) -> Grant | None:
        """The grant for a live issued token (neither revoked nor expired), else ``None``:
        an expired token is refused as an unknown one is. Never logs it. A store that
        cannot answer raises ``BACKEND_UNAVAILABLE``: the token is not judged then."""
        try:
            if not well_formed_bearer(token, ISSUED_TOKEN_PREFIX):
                return None
            digest = bearer_digest(token)
            row = self._store.token_grant(digest)
            if row is None or not hmac.compare_digest(row[0], digest):
                return None
            if self._ended(row[4], row[5]):
                return None
            only = None if row[3] is None else frozenset(row[3].split())
            return Grant(
                principal=row[1],
                scopes=frozenset(row[2].split()),
                kind="issued",
                scenarios=only,
                token_id=row[4],
                expires_at=row[5],
            )
        except KestrelError as exc:
            if exc.code == RefusalCode.BACKEND_UNAVAILABLE:
                raise
            logger.warning("issued-token lookup failed", exc_info=False)
            return None
        except Exception as exc:  # e.g. SQLite still locked after its busy timeout
            logger.warning("issued-token lookup failed: %s", type(exc).__name__)
            raise KestrelError(
                RefusalCode.BACKEND_UNAVAILABLE,
                STORE_UNAVAILABLE,
                {"retryAfter": RETRY_AFTER_S},
            ) from None


def _after(now: float, seconds: float | None) -> float | None:
    return None if seconds is None else now + seconds
