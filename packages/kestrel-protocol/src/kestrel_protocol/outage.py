"""A store that cannot be reached: what the operator is told, and what a client is.

The operator (a log line, a start-up error) sees the store's location with its password
hidden and the driver's reason with every secret of the DSN scrubbed; a client sees
only :data:`STORE_UNAVAILABLE` (``BACKEND_UNAVAILABLE``), never a user, host or port.
Faces answer it as an outage (HTTP 503 with ``Retry-After``), never as a bad token.
"""

from __future__ import annotations

import logging
import re

from .errors import KestrelError, RefusalCode
from .redact import redact_store_url, scrub

__all__ = [
    "POOL_WAIT_S",
    "RECONNECT_WINDOW_S",
    "RETRY_AFTER_S",
    "STORE_UNAVAILABLE",
    "driver_reason",
    "store_unavailable",
]

logger = logging.getLogger(__name__)

STORE_UNAVAILABLE = "store unavailable"
RETRY_AFTER_S = 5
"""What a face advises a client to wait before retrying an outage (``Retry-After``)."""
POOL_WAIT_S = 10.0
"""How long a call waits for a pooled connection before it is answered as an outage."""
RECONNECT_WINDOW_S = 10.0
"""A pool's reconnection backoff restarts after this long, so a returning server is
found within seconds, not after a backoff grown through a long outage."""

_QUOTED = re.compile(r"\"[^\"]*\"")


def driver_reason(exc: BaseException, dsn: str) -> str:
    """The driver's message for the operator: the DSN's secrets scrubbed; a connection
    string it could not parse is not quoted back (libpq quotes pieces of it)."""
    text = scrub(str(exc).strip(), dsn)
    if "connection info string" in text or "URI" in text:
        text = _QUOTED.sub('"…"', text)
    return f"{type(exc).__name__}: {text}"


def store_unavailable(dsn: str, exc: BaseException) -> KestrelError:
    """The refusal a client gets for an outage; the operator's detail goes to the log."""
    logger.warning(
        "the store %s is unavailable: %s", redact_store_url(dsn), driver_reason(exc, dsn)
    )
    return KestrelError(
        RefusalCode.BACKEND_UNAVAILABLE, STORE_UNAVAILABLE, {"retryAfter": RETRY_AFTER_S}
    )
