"""Where a door takes the operator's feed of a forward scenario's bars.

The routes run no tool (no MCP or OpenAPI entry): they need the operator scope
``kestrel:feed``, which no agent's token carries; all but :data:`FEED_TAPE_PATH`, the
tape once the operator has published it, served without a credential (as the door's
signing keys are) so that anyone can check a proof that does not embed it.
"""

from __future__ import annotations

from typing import Final

__all__ = ["FEED_BARS_PATH", "FEED_FREEZE_PATH", "FEED_PATH", "FEED_TAPE_PATH"]

FEED_PATH: Final = "/v1/feeds/{id}"
"""``GET``: the forward tape's status (its bars, last time, prefix root, window)."""
FEED_BARS_PATH: Final = FEED_PATH + "/bars"
"""``POST`` a ``text/csv`` body (the tape's header, then the new bars' rows): an append."""
FEED_FREEZE_PATH: Final = FEED_PATH + "/freeze"
"""``POST``: the window ends; the tape is fixed."""
FEED_TAPE_PATH: Final = FEED_PATH + "/tape"
"""``GET``, no credential: the tape as published (canonical ``text/csv``) once the feed is
unsealed; ``SCENARIO_SEALED`` before."""
