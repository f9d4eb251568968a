"""Whose a principal's name is: each way into the door owns its own names.

A principal owns sessions, artifacts, trials, approvals and board rows, so two callers
the door admitted differently must never share one. The rule, said here once:

* an OAuth access token's subject ``SUB`` is the principal ``oauth:SUB`` (the issuer's
  namespace; a ``sub`` holding ``/trial-`` is refused: it would name a trial);
* a trial is ``PARENT/trial-NAME``, minted by the door alone (``POST /v1/trials``);
* every other name is the operator's, for ``kestrel-door token issue``, which refuses
  a name beginning ``oauth:`` or holding ``/trial-``.

So no issued token, OAuth subject or trial can act as another: an issued ``ev`` and the
OAuth subject ``ev`` (``oauth:ev``) are two principals, and so are their trials.
"""

from __future__ import annotations

from typing import Final

from kestrel_protocol.surface import TRIAL_MARK

__all__ = ["OAUTH_MARK", "issuable_principal", "oauth_principal"]

OAUTH_MARK: Final = "oauth:"
"""What begins the name of every principal an OAuth access token admits."""


def oauth_principal(subject: str) -> str | None:
    """The principal of the OAuth subject ``subject``; ``None`` when the subject holds
    the trial mark (``PARENT/trial-NAME`` is a trial's name, which only the door mints)."""
    if TRIAL_MARK in subject:
        return None
    return OAUTH_MARK + subject


def issuable_principal(name: str) -> str:
    """``name`` when the operator may issue a token for it; else ``ValueError`` naming
    the kind of principal that owns such names."""
    if not name or not name.strip():
        raise ValueError("a principal is required")
    if name.startswith(OAUTH_MARK):
        raise ValueError(
            f"the principal {name!r} begins with {OAUTH_MARK!r}: such names are OAuth "
            f"subjects' (an access token's sub SUB is the principal {OAUTH_MARK}SUB); "
            "issue the token under another name"
        )
    if TRIAL_MARK in name:
        raise ValueError(
            f"the principal {name!r} holds {TRIAL_MARK!r}: such names are trials', minted "
            "by the door (POST /v1/trials with a kestrel:trials token); issue the token "
            "under another name"
        )
    return name
