"""Attested grades: an in-toto Statement v1 about a grade, in a DSSE envelope.

The door signs each grade whose proof it serves (Ed25519; its public keys are a JWKS
at the URL its protected-resource metadata names). The statement's subject is the
grade's root; its predicate, of type :data:`PREDICATE_TYPE`, carries what a replay
cannot prove: whether the scenario was sealed, the session's ``no-lookahead`` outcome
as the runtime saw it, who graded (the door's issuer URL, a pseudonym of the principal)
and when. The envelope travels in the proof as ``attestation``, outside the proof's root,
so roots stay deterministic. Everything here is pure (no keys, no clock): the door signs,
``kestrel verify --trust`` checks.

Predicate ``https://kestrel.invalid/attestation/grade/v1`` (documented in
``docs/evaluation.md``)::

    {"scenario": {"id": "acme-trend", "root": "sha256:…"},
     "sealed": true,
     "session": "ks_…",
     "principal": "p_…",            # HMAC of the principal under a door secret
     "noLookahead": {"passed": false, "detail": "session ks_… had reached bar 2519 …"},
     "issuer": "https://door.example",
     "signedAt": "2026-12-03T14:00:00Z"}

A session on a forward scenario (its tape grew while it traded) adds the order of
events, which no replay can show: ``"forward": true`` and, for every submission (seq
order), when it reached the door and when the bar it traded into (the clock at
submission + 1) was published: the door's clock read as the last thing before the
commit that made the bar visible, and as the first thing after it::

     "forward": true,
     "submissions": [{"seq": 1, "arrivedAt": "2026-12-03T13:59:58.120000Z", "bar": 4,
                      "barPublishedAt": "2026-12-03T13:59:59.003000Z",
                      "barVisibleBy": "2026-12-03T13:59:59.004100Z"}, …],
     "edge": {"bars": 2520, "root": "sha256:…"}

and where its tape ended when the grade was signed: ``edge.bars``, how many bars had
been published, the declared prefix included, and ``edge.root``, the tape root of those
bars (sha256 of their canonical tape CSV, as any tape's root), so that a tape embedded
in the proof and cut, or altered, after the session's last bar is told from the tape
as it grew.

``arrivedAt`` is absent when the door holds no arrival for the seq, ``bar`` when it
cannot tell the clock before it, ``barPublishedAt`` when that bar was not published
during the window (a bar of the declared prefix, or one never published),
``barVisibleBy`` when the store kept no reading after the bar's commit. A session
that traded the tape only once it was complete (its feed frozen, each of its
submissions arriving after the tape's last bar was visible) replays published bars:
its statement says ``"forward": false`` with the same ``submissions``. Every other
session's statement has neither member.

A door also says, to anyone, how many trials a parent principal has minted by now (the
trials a statement signed before the last mint cannot count): a statement of predicate
type :data:`TRIALS_PREDICATE_TYPE` (:func:`trials_statement`), signed as a grade's is::

    {"trialOf": "p_…", "trialsMinted": 10,
     "issuer": "https://door.example", "signedAt": "2026-12-03T14:00:00Z"}

its subject ``kestrel-trials:p_…``, the sha256 of the canonical JSON of ``trialOf`` and
``trialsMinted``. A pseudonym that has minted none is answered ``0``, as one the door
never knew.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from .canonical import canonical_json, root_of_bytes

__all__ = [
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "TRIALS_PREDICATE_TYPE",
    "grade_facts",
    "grade_statement",
    "pae",
    "trials_statement",
]

STATEMENT_TYPE: Final = "https://in-toto.io/Statement/v1"
PAYLOAD_TYPE: Final = "application/vnd.in-toto+json"
PREDICATE_TYPE: Final = "https://kestrel.invalid/attestation/grade/v1"
TRIALS_PREDICATE_TYPE: Final = "https://kestrel.invalid/attestation/trials/v1"


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what is signed."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def grade_facts(proof: Mapping[str, Any]) -> dict[str, Any]:
    """What a statement asserts of a proof (JSON data), as the proof itself says it:
    its scenario, whether it was sealed, its session and its ``no-lookahead`` check.
    ``KeyError``/``TypeError`` when the proof lacks them."""
    record, grade = proof["record"], proof["grade"]
    check = next(c for c in grade["conformance"]["checks"] if c["id"] == "no-lookahead")
    return {
        "scenario": {"id": proof["scenario"]["id"], "root": proof["scenario"]["root"]},
        "sealed": record["lookahead"]["sealed"],
        "session": record["session"],
        "noLookahead": {"passed": check["passed"], "detail": check["detail"]},
    }


def grade_statement(
    proof: Mapping[str, Any],
    *,
    issuer: str,
    principal: str,
    signed_at: str,
    trial_of: str | None = None,
    trial_number: int | None = None,
    trials_minted: int | None = None,
    submissions: Sequence[Mapping[str, Any]] | None = None,
    forward: bool = True,
    edge: tuple[int, str] | None = None,
    window_closed: bool | None = None,
) -> bytes:
    """The statement about ``proof``'s grade (canonical JSON bytes): the payload.
    ``trial_of``: the pseudonym of the principal whose trial ``principal`` is (a run the
    evaluator's harness minted), so that a board credits every trial to one agent;
    ``trial_number``: its number among that principal's trials (1, 2, ... in the order the
    door minted them), so that a board sees the trials not shown; ``trials_minted``: how
    many trials that principal had minted when the door signed (at least ``trial_number``),
    so that a board sees the trials withheld after the highest shown.
    ``submissions``: a session on a forward scenario's order of events (see above);
    ``forward``: false for a replay of the complete tape; ``edge``: how many bars of its
    forward tape had been published and the tape root of those bars (sent with
    ``submissions``); ``window_closed``: whether the forward tape was complete (its feed
    frozen) when the door signed (sent with ``submissions``): a forward session graded
    before its window closed stopped at the edge of a tape still growing."""
    digest = str(proof["grade"]["root"]).removeprefix("sha256:")
    statement = {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": f"kestrel-grade:{proof['record']['session']}", "digest": {"sha256": digest}}
        ],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            **grade_facts(proof),
            "principal": principal,
            **({"trialOf": trial_of} if trial_of is not None else {}),
            **({"trialNumber": trial_number} if trial_number is not None else {}),
            **({"trialsMinted": trials_minted} if trials_minted is not None else {}),
            **(
                {"forward": forward, "submissions": [dict(s) for s in submissions]}
                if submissions is not None
                else {}
            ),
            **({"edge": {"bars": edge[0], "root": edge[1]}} if edge is not None else {}),
            **({"windowClosed": window_closed} if window_closed is not None else {}),
            "issuer": issuer,
            "signedAt": signed_at,
        },
    }
    return canonical_json(statement)


def trials_statement(trial_of: str, trials_minted: int, *, issuer: str, signed_at: str) -> bytes:
    """The statement that the principal whose pseudonym is ``trial_of`` had minted
    ``trials_minted`` trials at the door ``issuer`` when it signed (canonical JSON bytes:
    the payload)."""
    facts = {"trialOf": trial_of, "trialsMinted": trials_minted}
    digest = root_of_bytes(canonical_json(facts)).removeprefix("sha256:")
    statement = {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": f"kestrel-trials:{trial_of}", "digest": {"sha256": digest}}],
        "predicateType": TRIALS_PREDICATE_TYPE,
        "predicate": {**facts, "issuer": issuer, "signedAt": signed_at},
    }
    return canonical_json(statement)
