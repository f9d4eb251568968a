"""Attested grades: the door signs the grade of every proof it serves.

The statement (:mod:`kestrel_protocol.objects.attestation`) names the grade's root as
its subject and carries the facts a replay cannot prove; the door signs it with its
newest key (:mod:`.keys`) at the time it reads from its own clock, and the envelope
travels in the proof as ``attestation``, outside the proof's root. Every face that
serves a proof (``/v1``, ``/mcp``) goes through :func:`attesting`, which also opens
every principal's sessions under its pseudonym (:mod:`.pseudonyms`): the statement's
``principal`` is the one the runtime knew, and nothing in the proof derives from a name.
"""

from __future__ import annotations

import base64
from typing import Any

import anyio
from kestrel_protocol import (
    PAYLOAD_TYPE,
    Envelope,
    EnvelopeSignature,
    Proof,
    ProtocolModel,
    grade_statement,
    pae,
)
from kestrel_protocol.ports import Transport
from kestrel_protocol.surface import Arguments, Tool

from .door import TransportFactory
from .keys import DoorKeys, utc_now
from .pseudonyms import Pseudonyms

__all__ = ["JWKS_PATH", "Attestor", "attesting"]

JWKS_PATH = "/.well-known/kestrel-grade-keys.json"
"""Where the door publishes its signing keys (named in its protected-resource metadata)."""


class Attestor:
    """Signs grades as the door at ``issuer`` with ``keys``, naming principals by their
    ``pseudonyms`` (by default those of the keys' store)."""

    def __init__(self, keys: DoorKeys, issuer: str, pseudonyms: Pseudonyms | None = None) -> None:
        self.keys = keys
        self.issuer = issuer.rstrip("/")
        self.pseudonyms = pseudonyms if pseudonyms is not None else Pseudonyms(keys.records)

    def attest(self, proof: Proof, pseudonym: str) -> Proof:
        """``proof`` (of a session opened under ``pseudonym``) with the signed statement
        about its grade."""
        data = proof.rooted_json()
        payload = grade_statement(
            data, issuer=self.issuer, principal=pseudonym, signed_at=utc_now()
        )
        kid, key = self.keys.signer()
        signature = key.sign(pae(PAYLOAD_TYPE, payload))
        envelope = Envelope(
            payload_type=PAYLOAD_TYPE,
            payload=base64.b64encode(payload).decode("ascii"),
            signatures=[
                EnvelopeSignature(keyid=kid, sig=base64.b64encode(signature).decode("ascii"))
            ],
        )
        return Proof.parse({**data, "attestation": envelope.to_json()})


class _Attesting:
    """A pseudonym's transport whose proofs come signed; every other result as it is."""

    def __init__(self, inner: Transport, attestor: Attestor, pseudonym: str) -> None:
        self._inner = inner
        self._attestor = attestor
        self._pseudonym = pseudonym

    async def invoke(self, tool: Tool, arguments: Arguments) -> ProtocolModel:
        made = await self._inner.invoke(tool, arguments)
        if not isinstance(made, Proof):
            return made
        return await anyio.to_thread.run_sync(self._attestor.attest, made, self._pseudonym)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def attesting(transport_for: TransportFactory, attestor: Attestor) -> TransportFactory:
    """``transport_for`` under each principal's pseudonym, its proofs carrying the door's
    signed statement."""

    def make(principal: str) -> Transport:
        pseudonym = attestor.pseudonyms.of(principal)
        return _Attesting(transport_for(pseudonym), attestor, pseudonym)

    return make
