"""Attested grades: the door signs the grade of every proof it serves.

The statement (:mod:`kestrel_protocol.objects.attestation`) names the grade's root as
its subject and carries the facts a replay cannot prove; the door signs it with its
newest key (:mod:`.keys`) at the time it reads from its own clock, and the envelope
travels in the proof as ``attestation``, outside the proof's root. Every face that
serves a proof (``/v1``, ``/mcp``) goes through :func:`attesting`, which also opens
every principal's sessions under its pseudonym (:mod:`.pseudonyms`): the statement's
``principal`` is the one the runtime knew, and nothing in the proof derives from a name.
Given the runtime's forward feeds, it also notes when each submission to a session on a
forward scenario arrived, and the statement about such a session carries the order of
events (:mod:`.arrivals`), how many bars its tape held when the grade was signed, the
tape root of those bars and whether its window had closed (the feed frozen). A trial's
statement names its parent's pseudonym
(``trialOf``), its number and how many trials the parent had minted
(:meth:`Attestor.attest_as`: the one way a principal's proof is signed, served or
published by session id with ``kestrel-door board publish``);
:meth:`Attestor.trials_minted` signs, for anyone, how many a parent has minted by now
(``GET`` :data:`~kestrel_protocol.surface.TRIALS_MINTED_PATH`).
"""

from __future__ import annotations

import base64
import logging
from typing import Any

import anyio
from kestrel_protocol import (
    PAYLOAD_TYPE,
    Envelope,
    EnvelopeSignature,
    Proof,
    ProtocolModel,
    SessionResponse,
    Wire,
    grade_statement,
    pae,
    trials_statement,
)
from kestrel_protocol.ports import Transport
from kestrel_protocol.store_feed import Arrival
from kestrel_protocol.surface import TRIAL_MARK, Arguments, Tool

from .arrivals import ForwardFeeds, forward_submissions, replayed
from .door import TransportFactory
from .keys import DoorKeys, utc_now
from .pseudonyms import Pseudonyms

__all__ = ["JWKS_PATH", "Attestor", "attesting"]

logger = logging.getLogger(__name__)

JWKS_PATH = "/.well-known/kestrel-grade-keys.json"
"""Where the door publishes its signing keys (named in its protected-resource metadata)."""


class Attestor:
    """Signs grades as the door at ``issuer`` with ``keys``, naming principals by their
    ``pseudonyms`` (by default those of the keys' store); with ``feeds``, a forward
    session's statement carries its order of events."""

    def __init__(
        self,
        keys: DoorKeys,
        issuer: str,
        pseudonyms: Pseudonyms | None = None,
        feeds: ForwardFeeds | None = None,
    ) -> None:
        self.keys = keys
        self.issuer = issuer.rstrip("/")
        self.pseudonyms = pseudonyms if pseudonyms is not None else Pseudonyms(keys.records)
        self.feeds = feeds

    def arrived(self, response: SessionResponse, arrived_at: str) -> None:
        """Note when the submission ``response`` answers arrived, if its session is on a
        forward scenario."""
        frame = response.delivery.frame
        if self.feeds is not None and self.feeds.is_forward(frame.scenario.id):
            arrival = Arrival(response.pentad.seq, arrived_at, frame.clock.bar)
            self.keys.records.add_arrival(frame.session, arrival)

    def attest(
        self,
        proof: Proof,
        pseudonym: str,
        trial_of: str | None = None,
        trial_number: int | None = None,
        trials_minted: int | None = None,
    ) -> Proof:
        """``proof`` (of a session opened under ``pseudonym``) with the signed statement
        about its grade; ``trial_of``: the pseudonym of the principal whose trial it was,
        ``trial_number`` the trial's number among that principal's, ``trials_minted`` how
        many trials that principal had minted."""
        data = proof.rooted_json()
        submissions, forward, edge, closed = None, True, None, None
        scenario_id = proof.scenario.id
        if self.feeds is not None and self.feeds.is_forward(scenario_id):
            published = self.feeds.published(scenario_id)
            submissions = forward_submissions(
                self.keys.records.arrivals(proof.record.session), published, len(proof.pentads)
            )
            closed = self.feeds.frozen(scenario_id)  # its window over: no bar to come
            forward = not replayed(submissions, published, closed)
            edge = self.feeds.edge(scenario_id)  # where its tape ended, as signed
        payload = grade_statement(
            data,
            issuer=self.issuer,
            principal=pseudonym,
            signed_at=utc_now(),
            trial_of=trial_of,
            trial_number=trial_number,
            trials_minted=trials_minted,
            submissions=submissions,
            forward=forward,
            edge=edge,
            window_closed=closed,
        )
        return Proof.parse({**data, "attestation": self._signed(payload)})

    def attest_as(self, proof: Proof, principal: str) -> Proof:
        """``proof`` of a session of ``principal`` (opened under its pseudonym) attested;
        a trial's statement (``PARENT/trial-NAME``) names its parent's pseudonym, its
        number and its parent's count of trials minted, as the store keeps them now."""
        parent, mark, _ = principal.rpartition(TRIAL_MARK)
        trial_of = self.pseudonyms.of(parent) if mark and parent else None
        standing = self.keys.records.trial_standing(principal) if trial_of else None
        number, minted = (None, None) if standing is None else standing
        return self.attest(proof, self.pseudonyms.of(principal), trial_of, number, minted)

    def attest_session(self, proof: Proof, pseudonym: str) -> Proof:
        """``proof`` of a session the runtime opened under ``pseudonym`` attested as
        :meth:`attest_as` signs it for the principal of the issued token whose pseudonym
        that is (a trial's statement with its trial facts); a pseudonym of no issued
        token's principal (an OAuth grant's) is named alone."""
        named = {token.principal for token in self.keys.records.tokens()}
        principal = next((p for p in named if self.pseudonyms.of(p) == pseudonym), None)
        if principal is None:
            return self.attest(proof, pseudonym)
        return self.attest_as(proof, principal)

    def trials_minted(self, trial_of: str) -> dict[str, Any]:
        """How many trials the principal whose pseudonym is ``trial_of`` has minted now
        (0 for a pseudonym of no principal that minted one), with the door's signed
        statement of it as ``attestation``."""
        minted = self.keys.records.trials_minted_by(trial_of)  # one indexed lookup
        payload = trials_statement(trial_of, minted, issuer=self.issuer, signed_at=utc_now())
        return {"trialOf": trial_of, "trialsMinted": minted, "attestation": self._signed(payload)}

    def _signed(self, payload: bytes) -> dict[str, Any]:
        """The DSSE envelope of ``payload`` signed with the door's newest key (JSON)."""
        kid, key = self.keys.signer()
        signature = key.sign(pae(PAYLOAD_TYPE, payload))
        envelope = Envelope(
            payload_type=PAYLOAD_TYPE,
            payload=base64.b64encode(payload).decode("ascii"),
            signatures=[
                EnvelopeSignature(keyid=kid, sig=base64.b64encode(signature).decode("ascii"))
            ],
        )
        return envelope.to_json()


class _Attesting:
    """A pseudonym's transport whose proofs come signed; every other result as it is."""

    def __init__(self, inner: Transport, attestor: Attestor, principal: str) -> None:
        self._inner = inner
        self._attestor = attestor
        self._principal = principal

    def _signed(self, proof: Proof) -> Proof:
        return self._attestor.attest_as(proof, self._principal)

    async def invoke(self, tool: Tool, arguments: Arguments) -> ProtocolModel | Wire[Any]:
        submits = tool.runs is not None and tool.runs.method == "submit"
        forward = self._attestor.feeds is not None and submits
        # before the runtime sees the call, by the clock every replica and feed reads
        now = self._attestor.keys.records.now
        arrived_at = await anyio.to_thread.run_sync(now) if forward else ""
        made = await self._inner.invoke(tool, arguments)
        if submits and not forward:
            return made  # a step: its text as the runtime wrote it, no object made
        response = made.model() if isinstance(made, Wire) else made
        if forward and isinstance(response, SessionResponse):
            try:
                await anyio.to_thread.run_sync(self._attestor.arrived, response, arrived_at)
            except Exception:  # the submission stands: its statement will lack the arrival
                logger.warning(
                    "the arrival of submission %d of %s was not kept",
                    response.pentad.seq,
                    response.pentad.session,
                    exc_info=True,
                )
            return made
        if isinstance(made, Wire) and made.cls is Proof:  # the runtime's proof, as its text
            made = made.model()
        if not isinstance(made, Proof):
            return made
        return await anyio.to_thread.run_sync(self._signed, made)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def attesting(transport_for: TransportFactory, attestor: Attestor) -> TransportFactory:
    """``transport_for`` under each principal's pseudonym, its proofs carrying the door's
    signed statement (naming, for a trial principal ``PARENT/trial-NAME``, the parent's
    pseudonym as ``trialOf``, the trial's number among the parent's as ``trialNumber`` and
    how many trials the parent had minted when the door signed as ``trialsMinted``)."""

    def make(principal: str) -> Transport:
        return _Attesting(transport_for(attestor.pseudonyms.of(principal)), attestor, principal)

    return make
