"""How many trials a parent has minted, as its door says now, for a board under trust.

A trial's statement signs how many trials its parent had minted when the door signed it
(``trialsMinted``); trials minted after the last statement a board is shown could not
be seen. So, under trusted keys, a board asks the door each trial statement names
(its issuer, as :mod:`.published_tape` finds a forward tape's door) for the parent's
count now (:data:`~kestrel_protocol.surface.TRIALS_MINTED_PATH`, public): the answer
holds only when the door's signed statement of it verifies under the same keys and
names that door and that parent (:func:`fetch_trials_minted`; :func:`checked_count` for
an answer a published board carries). A count that holds says when the door signed it;
where it cannot be read or does not hold (no answer, a status other than 200, a signature
that does not verify, a count of another door or parent), the result says why, and the
board says it on the parent's row: never a silent pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
from kestrel_protocol import (
    STATEMENT_TYPE,
    TRIALS_PREDICATE_TYPE,
    canonical_json,
    root_of_bytes,
)
from kestrel_protocol.documents import parse_json
from kestrel_protocol.surface import TRIALS_MINTED_PATH

from .attested import NotAttested, statement_text
from .trust import signed_statement

__all__ = ["DoorCount", "checked_count", "count_url", "fetch_trials_minted"]


@dataclass(frozen=True, slots=True)
class DoorCount:
    """What a parent's door says of its trials minted: ``minted`` (its signed count) and
    ``signed_at`` (when it signed it, its clock), or ``unread`` (why no count holds);
    ``reached`` is false when asking the door for another parent now is of no use: it
    could not be reached at all, or it answered a status that is not about this parent
    (anything but 400, which names the pseudonym asked: a 5xx, its store down, or a 404,
    no count served), each asked again a timeout or a failure more."""

    minted: int | None = None
    unread: str | None = None
    reached: bool = True
    signed_at: str | None = None


def count_url(issuer: str, trial_of: str) -> str:
    """Where the door at ``issuer`` serves the signed count of ``trial_of``'s trials (anyone
    asks it again there)."""
    return issuer.rstrip("/") + TRIALS_MINTED_PATH.format(trial_of=quote(trial_of, safe=""))


def _checked(
    answer: Any, jwks: Mapping[str, Any], issuer: str, trial_of: str
) -> tuple[int, str | None]:
    """The count ``answer`` signs for ``trial_of`` at ``issuer`` and when it was signed;
    :class:`NotAttested` naming the first thing that does not hold."""
    if not isinstance(answer, dict):
        raise NotAttested("answer", "a JSON object", type(answer).__name__)
    statement, predicate, digest, _ = signed_statement(answer, jwks)
    if (statement.get("_type"), statement.get("predicateType")) != (
        STATEMENT_TYPE,
        TRIALS_PREDICATE_TYPE,
    ):
        found = statement_text(statement.get("predicateType"))
        raise NotAttested("statement.predicateType", TRIALS_PREDICATE_TYPE, found)
    minted = predicate.get("trialsMinted")
    if not isinstance(minted, int) or isinstance(minted, bool) or minted < 0:
        found = statement_text(minted)
        raise NotAttested("statement.predicate.trialsMinted", "a whole number", found)
    facts = {"trialOf": predicate.get("trialOf"), "trialsMinted": minted}
    if root_of_bytes(canonical_json(facts)) != f"sha256:{digest}":
        raise NotAttested("statement.subject", "the digest of trialOf and trialsMinted", digest)
    for field, expected in (("trialOf", trial_of), ("issuer", issuer.rstrip("/"))):
        if predicate.get(field) != expected:
            found = statement_text(predicate.get(field))
            raise NotAttested(f"statement.predicate.{field}", expected, found)
    if answer.get("trialsMinted") != minted:
        found = statement_text(answer.get("trialsMinted"))
        raise NotAttested("trialsMinted", f"{minted} (signed)", found)
    signed_at = predicate.get("signedAt")
    return minted, signed_at if isinstance(signed_at, str) else None


def checked_count(
    answer: Any, jwks: Mapping[str, Any], issuer: str, trial_of: str, where: str
) -> DoorCount:
    """The count ``answer`` (the door's signed answer, found at ``where``) holds for
    ``trial_of`` at ``issuer`` under ``jwks``; else why not."""
    try:
        minted, signed_at = _checked(answer, jwks, issuer, trial_of)
    except NotAttested as exc:
        return DoorCount(unread=f"{where} is not attested: {exc}")
    return DoorCount(minted=minted, signed_at=signed_at)


def fetch_trials_minted(
    issuer: str, trial_of: str, jwks: Mapping[str, Any], client: httpx.Client | None = None
) -> DoorCount:
    """How many trials the principal whose pseudonym is ``trial_of`` has minted, as the
    door at ``issuer`` signs it now under ``jwks``; else why that cannot be said."""
    parts = urlsplit(issuer)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return DoorCount(unread=f"the statements' issuer {issuer} is no door to ask")
    url = count_url(issuer, trial_of)
    http = client if client is not None else httpx.Client(timeout=10.0)
    try:
        response = http.get(url)
    except httpx.HTTPError as exc:
        return DoorCount(unread=f"cannot fetch {url}: {exc}", reached=False)
    finally:
        if client is None:
            http.close()
    if response.status_code != 200:
        said = f"{url} answered {response.status_code}, not a count"
        return DoorCount(unread=said, reached=response.status_code == 400)
    try:
        answer = parse_json(response.content)
    except ValueError:
        return DoorCount(unread=f"{url} answered no JSON")
    return checked_count(answer, jwks, issuer, trial_of, url)
