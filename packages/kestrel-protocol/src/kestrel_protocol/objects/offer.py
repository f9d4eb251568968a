"""The payment side of a gated open (HTTP 402 body)."""

from __future__ import annotations

from typing import Literal

from ..model import DecimalStr, SelfRooted

__all__ = ["Offer"]


class Offer(SelfRooted):
    """What opening a session costs once a principal's quota is spent."""

    kind: Literal["kestrel.offer"] = "kestrel.offer"
    offer_id: str
    scenario: str
    amount: DecimalStr
    currency: str
    description: str
    expires_at: str
    accepts: list[str]
