"""What two reads answer as protocol objects: a scenario's tape as text, and an artifact.

Every tool answers a protocol object (``Transport.invoke`` returns one), so the two
reads whose answer is not an object of docs/spec.md §6 are wrapped here: a tape is its CSV
text with the scenario it belongs to, and an artifact is whatever object is stored
under a root, every member kept verbatim.
"""

from __future__ import annotations

from ..model import ProtocolModel

__all__ = ["Artifact", "TapeText"]


class TapeText(ProtocolModel):
    """A scenario's tape as canonical CSV (``time,symbol,open,high,low,close,volume``)."""

    scenario: str
    media_type: str = "text/csv"
    text: str


class Artifact(ProtocolModel):
    """A stored object, verbatim: every member is its own (none is declared here)."""
