"""The DSSE envelope a door's signed statement about a grade travels in (a proof's
``attestation``, outside its root). What is signed and how: :mod:`kestrel_protocol.attestation`.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ..model import ProtocolModel

__all__ = ["Envelope", "EnvelopeSignature"]


class EnvelopeSignature(ProtocolModel):
    """One DSSE signature: the key's id (its JWK ``kid``) and the base64 signature."""

    keyid: str
    sig: str


class Envelope(ProtocolModel):
    """A DSSE envelope: the base64 payload (the statement's canonical JSON), its type,
    and its signatures over ``pae(payloadType, payload)``."""

    payload_type: str
    payload: str
    signatures: list[EnvelopeSignature]

    def statement(self) -> Any:
        """The decoded payload (JSON data); ``ValueError`` when it is not JSON."""
        return json.loads(base64.b64decode(self.payload, validate=True))
