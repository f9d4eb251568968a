"""When issued tokens stop being accepted: the lifetimes an operator names, and the
door's clock read as RFC 3339 UTC to the second (the form the store keeps).

An operator's token lives :data:`DEFAULT_TOKEN_LIFETIME` unless issued otherwise
(``--expires-in 12h``, ``--expires-at 2027-01-31T00:00:00Z``, or ``--expires-in never``
said out loud): a token pasted into a notebook or a CI log should not work for ever by
default. The clock is the door's (the runtime keeps none); whoever judges an expiry
takes it as a callable, as the OAuth verifier does, so tests set the time.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

__all__ = [
    "DEFAULT_TOKEN_LIFETIME",
    "NEVER",
    "OAUTH_TRIAL_LIFETIME",
    "lifetime_seconds",
    "rfc3339",
    "time_of",
]

DEFAULT_TOKEN_LIFETIME: Final = "90d"
"""An issued token's lifetime when the operator names none."""
OAUTH_TRIAL_LIFETIME: Final = "24h"
"""The longest life of a trial an OAuth grant mints. The door sees only the access token,
never the refresh token nor its revocation, and the access token's ``exp`` (minutes: it is
refreshed while the run goes on) would cut a run short; so a trial of a revoked grant
works at most this long. A longer run mints the same trial name again with a fresh
access token: the same principal, sessions and horizon."""
NEVER: Final = "never"
"""The lifetime of a token that never expires (asked for by name only)."""
_MAX_S: Final = 10 * 366 * 86_400  # ten years: longer is "never" said otherwise
_UNITS: Final = {"s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 7 * 86_400}
_DURATION: Final = re.compile(r"([1-9][0-9]{0,9})([smhdw])")


def lifetime_seconds(text: str) -> int | None:
    """Seconds of a lifetime ``N`` + ``s|m|h|d|w`` (``90d``, ``12h``), ``None`` for
    ``never``; ``ValueError`` naming the forms otherwise."""
    if text.strip().lower() == NEVER:
        return None
    found = _DURATION.fullmatch(text.strip())
    seconds = None if found is None else int(found[1]) * _UNITS[found[2]]
    if seconds is None or seconds > _MAX_S:
        raise ValueError(
            f"lifetime {text!r} is not a whole number of s, m, h, d or w (e.g. 12h, 90d) "
            f"up to ten years, nor {NEVER!r}"
        )
    return seconds


def time_of(text: str) -> float:
    """The instant an RFC 3339 / ISO 8601 time with its UTC offset names (``Z`` or
    ``+02:00``: an operator's ``--expires-at``, a stored expiry), as epoch seconds;
    ``ValueError`` naming the form otherwise (a time without its offset too: read as the
    machine's local time, two replicas would disagree)."""
    try:
        parsed = dt.datetime.fromisoformat(text.strip())
    except (ValueError, AttributeError, TypeError):  # not a time, or not text at all
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ValueError(
            f"{text!r} is not a time with its UTC offset (e.g. 2027-01-31T00:00:00Z)"
        ) from None
    return parsed.timestamp()


def rfc3339(epoch: float) -> str:
    """``epoch`` as the store keeps times: RFC 3339 UTC, to the second (rounded down)."""
    return dt.datetime.fromtimestamp(int(epoch), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
