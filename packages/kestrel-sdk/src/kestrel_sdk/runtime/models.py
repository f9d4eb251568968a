"""Protocol models the runtime builds from members it made itself, in wire form.

A step's pentad, delivery and response (and a grade's pentads rebuilt from the journal)
are made of members produced here (the pentad's bytes hash to its root), so they are
built unchecked (:mod:`.engine.wire`'s builders), without re-validating them on the step
path.
"""

from __future__ import annotations

from typing import Final

from kestrel_protocol import PentadBody

from .engine.wire import builder
from .pentads import MEDIA_TYPE

__all__ = ["pentad_body"]

_BODY: Final = builder(PentadBody)
_BODIES: Final[dict[str, PentadBody]] = {}
_BODIES_MAX: Final = 4096
"""Bodies remembered: as many as the sources a gym env remembers (a quantity's order and
``advance 1``), so an episode's pentads and the next one's share them."""


def pentad_body(source: str) -> PentadBody:
    """The pentad body of ``source``; models are frozen, so an agent's recurring sources
    share one (short ones are remembered)."""
    body = _BODIES.get(source)
    if body is None:
        body = _BODY({"media_type": MEDIA_TYPE, "bytes": source})
        if len(source) <= 256:
            if len(_BODIES) >= _BODIES_MAX:
                _BODIES.clear()
            _BODIES[source] = body
    return body
