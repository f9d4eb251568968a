"""Vouchers and the door's ``SessionGate``: a daily quota, then an Offer, then payment.

A voucher is an operator-signed bearer (HMAC-SHA256 under a key kept in
``$KESTREL_HOME/door-voucher.key``): ``kv1.<payload>.<signature>``. It is single-use
(its id is recorded when spent, atomically with the open it pays for), expires, and
may be bound to one principal. An Offer names what the next open would cost; a payment
must name an offer the door made to the same principal for the same scenario that has
not expired.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from kestrel_protocol import KestrelError, Offer, Payment, RefusalCode, kestrel_home
from kestrel_protocol.store import DoorRecords

__all__ = ["VOUCHER_PREFIX", "VoucherGate", "VoucherSigner", "load_voucher_key"]

VOUCHER_PREFIX: Final = "kv1."
_OFFER_TTL_S: Final = 15 * 60
_KEY_BYTES: Final = 32
_KEY_FILE: Final = "door-voucher.key"  # in $KESTREL_HOME; every replica's the same


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def load_voucher_key(home: str | Path | None = None) -> bytes:
    """The signing key, made (0600) on first use.

    A new key is written whole to a private file beside it and then linked into place,
    so no reader ever sees a part of it (two processes making it at once both get the
    one linked first). A file holding fewer than 32 bytes is refused ``INVALID_INPUT``
    naming it: an empty key would sign vouchers anyone can forge.
    """
    path = kestrel_home(home)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    key_path = path / _KEY_FILE
    if not key_path.exists():
        _make_key(key_path)
    key = key_path.read_bytes()
    if len(key) < _KEY_BYTES:
        raise KestrelError(
            "INVALID_INPUT",
            f"the voucher key {key_path} holds {len(key)} bytes, not a key (at least "
            f"{_KEY_BYTES}): a process stopped while making it, or a copy of it was cut "
            "short. Copy the replicas' key again, or remove the file to make a new one "
            "(vouchers it signed stop paying)",
            {"path": str(key_path), "bytes": len(key)},
        )
    return key


def _make_key(key_path: Path) -> None:
    """Link a new key, written whole and synced, at ``key_path`` unless one is there."""
    made = key_path.with_name(f".{key_path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(_KEY_BYTES))
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):  # another's, linked first, is the key
            os.link(made, key_path)
    finally:
        made.unlink(missing_ok=True)


def _iso(epoch: float) -> str:
    return (
        dt.datetime.fromtimestamp(epoch, dt.UTC)
        .isoformat(timespec="seconds")
        .replace("+00:00", "Z")
    )


class VoucherSigner:
    """Issues and checks voucher signatures (not their use: that is the gate's job)."""

    def __init__(self, key: bytes, now: Callable[[], float] = time.time) -> None:
        self._key = key
        self._now = now

    def issue(self, ttl_s: int = 86_400, principal: str | None = None) -> str:
        payload: dict[str, Any] = {
            "id": "vc_" + secrets.token_hex(8),
            "exp": int(self._now() + ttl_s),
        }
        if principal is not None:
            payload["sub"] = principal
        body = _b64(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
        sig = _b64(hmac.new(self._key, body.encode("ascii"), hashlib.sha256).digest())
        return f"{VOUCHER_PREFIX}{body}.{sig}"

    def check(self, voucher: str) -> dict[str, Any] | None:
        """The payload of a well-signed, unexpired voucher, else ``None``."""
        try:
            if not voucher.startswith(VOUCHER_PREFIX) or len(voucher) > 1024:
                return None
            body, sig = voucher[len(VOUCHER_PREFIX) :].split(".")
            expected = hmac.new(self._key, body.encode("ascii"), hashlib.sha256).digest()
            if not hmac.compare_digest(expected, _unb64(sig)):
                return None
            payload = json.loads(_unb64(body))
            if not isinstance(payload, dict) or not isinstance(payload.get("id"), str):
                return None
            exp = payload.get("exp")
            if not isinstance(exp, int) or exp <= self._now():
                return None
            return payload
        except Exception:
            return None


_REFUSED: Final = {
    "no-offer": "the payment names no offer made for this open",
    "expired": "the offer has expired; open again for a fresh one",
    "used": "the voucher has already been used",
}


def _invalid(message: str) -> KestrelError:
    return KestrelError(RefusalCode.PAYMENT_INVALID, message)


class VoucherGate:
    """``SessionGate``: ``daily_quota`` free opens per principal per UTC day, then an Offer."""

    def __init__(
        self,
        store: DoorRecords,
        signer: VoucherSigner,
        *,
        daily_quota: int,
        amount: str = "1.00",
        currency: str = "USD",
        now: Callable[[], float] = time.time,
        pseudonym: Callable[[str], str] | None = None,
    ) -> None:
        self._store = store
        self._pseudonym = pseudonym  # how the runtime names a voucher's bound principal
        self._signer = signer
        self.daily_quota = daily_quota
        self.amount = amount
        self.currency = currency
        self._now = now

    def _day(self) -> str:
        return dt.datetime.fromtimestamp(self._now(), dt.UTC).date().isoformat()

    def check(self, principal: str, scenario: str, payment: Payment | None) -> Offer | None:
        """``None`` lets the open proceed (and counts it); an Offer gates it.

        Raises ``PAYMENT_INVALID`` for a payment that is bad, expired, reused, or names an
        offer this principal was not made for this scenario.
        """
        day = self._day()
        if payment is not None:
            payload = self._signer.check(payment.voucher)
            if payload is None:
                raise _invalid("the voucher is not valid or has expired")
            bound = payload.get("sub")
            if bound is not None and self._pseudonym is not None:
                bound = self._pseudonym(str(bound))
            if bound is not None and bound != principal:
                raise _invalid("the voucher was issued to another principal")
            outcome = self._store.pay(
                payment.offer_id,
                principal,
                scenario=scenario,
                voucher_id=str(payload["id"]),
                now=self._now(),
                used_at=_iso(self._now()),
                day=day,
            )
            if outcome != "paid":
                raise _invalid(_REFUSED[outcome])
            return None
        expires = self._now() + _OFFER_TTL_S
        offer_id = "of_" + secrets.token_hex(8)
        if self._store.count_open_or_offer(
            principal, day, self.daily_quota, (offer_id, scenario, expires)
        ):
            return None
        return Offer.with_root(
            offer_id=offer_id,
            scenario=scenario,
            amount=self.amount,
            currency=self.currency,
            description=(
                f"{self.daily_quota} free session(s) per day are used; "
                "retry the open with payment {offerId, voucher}"
            ),
            expires_at=_iso(expires),
            accepts=["voucher"],
        )
