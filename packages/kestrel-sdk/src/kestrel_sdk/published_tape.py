"""A forward tape as its door published it, fetched for a proof that does not embed it.

A proof made while its forward scenario was sealed cannot embed the tape, and a
verifier's catalog holds the declared prefix alone: nothing checked the bars after it
against the tape root the door signed (``edge.root``), and a session that traded past
the prefix could not be replayed. Once the operator unseals the feed, the door serves the
tape to anyone (:data:`~kestrel_protocol.surface.FEED_TAPE_PATH`). So, under trusted keys,
a proof of a forward scenario that embeds no tape and whose statement's signature holds
has its tape fetched from the door that statement names (:func:`fetch_published`): the
first ``edge.bars`` bars must hash to ``edge.root``, or the statement is not attested
(``statement.predicate.edge.root``); the proof is then replayed over those bars. Where
the tape cannot be fetched (the feed still sealed, the door out of reach), the outcome
says why (:data:`~.forward_edge.UNCONFIRMED`), and every face says it: never a silent pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
from kestrel_protocol import Mismatch, root_of_bytes
from kestrel_protocol.documents import parse_json
from kestrel_protocol.surface import FEED_TAPE_PATH

from .forward_edge import UNCONFIRMED, bar_times, first_bars, member, signed_edge
from .runtime.verify import PublishedTape
from .trust import TrustedKeys, signed_issuer

__all__ = ["Fetched", "PublishedTapes", "fetch_published"]


@dataclass(frozen=True, slots=True)
class Fetched:
    """What became of fetching a proof's forward tape: ``tape`` (its bars up to the signed
    edge, their root the signed one), or ``mismatch`` (the door publishes other bars than
    it signed), or ``unconfirmed`` (why it could not be fetched)."""

    tape: PublishedTape | None = None
    mismatch: Mismatch | None = None
    unconfirmed: str | None = None

    def note(self) -> str:
        """What the result adds about the tape (``""`` once it was fetched and checked)."""
        return f"; {UNCONFIRMED}: {self.unconfirmed}" if self.unconfirmed is not None else ""


def _refusal_code(response: httpx.Response) -> str | None:
    try:
        refusal = parse_json(response.content).get("refusal")
    except (ValueError, AttributeError):
        return None
    code = refusal.get("code") if isinstance(refusal, dict) else None
    return code if isinstance(code, str) else None


def _get(url: str, client: httpx.Client | None) -> str | Fetched:
    """The text at ``url``, or why it could not be read."""
    http = client if client is not None else httpx.Client(timeout=10.0)
    try:
        response = http.get(url)
    except httpx.HTTPError as exc:
        return Fetched(unconfirmed=f"cannot fetch {url}: {exc}")
    finally:
        if client is None:
            http.close()
    if response.status_code == 200:
        return response.text
    code = _refusal_code(response)
    if code == "SCENARIO_SEALED":
        return Fetched(unconfirmed=f"{url} does not publish it yet (the feed is sealed)")
    said = f" {code}" if code else ""
    return Fetched(unconfirmed=f"{url} answered {response.status_code}{said}")


class PublishedTapes:
    """The forward tapes doors publish, each read once: the text at a tape's URL, or why
    it could not be read, kept for every later proof of that tape (a board of many proofs
    of one feed fetches its tape once). Through ``client`` when one is given."""

    def __init__(self, client: httpx.Client | None = None) -> None:
        self._client = client
        self._read: dict[str, str | Fetched] = {}

    def text(self, url: str) -> str | Fetched:
        """The text at ``url``, or why it could not be read (asked once)."""
        if url not in self._read:
            self._read[url] = _get(url, self._client)
        return self._read[url]


def fetch_published(
    data: Any, jwks: Mapping[str, Any], tapes: PublishedTapes | None = None
) -> Fetched | None:
    """The forward tape of the proof ``data`` as the door its statement names publishes
    it, checked against the statement's signed edge; ``None`` when there is none to fetch
    (the proof embeds its tape, is of no forward session, or its statement's signature
    does not hold under ``jwks``, or names a door those keys were not fetched from: its
    check says so); the tape read through ``tapes`` (``None``: read for this proof alone)."""
    edge = signed_edge(data) if isinstance(data, dict) and "embedded" not in data else None
    issuer = signed_issuer(data, jwks) if edge is not None else None
    if edge is None or issuer is None:
        return None
    if isinstance(jwks, TrustedKeys) and not jwks.vouches_for(issuer):
        return None
    scenario = member(data, "scenario").get("id")
    parts = urlsplit(issuer)
    if parts.scheme not in ("http", "https") or not parts.netloc or not isinstance(scenario, str):
        return Fetched(unconfirmed=f"the statement's issuer {issuer} is no door to fetch it from")
    url = issuer.rstrip("/") + FEED_TAPE_PATH.format(id=quote(scenario, safe=""))
    text = (tapes if tapes is not None else PublishedTapes()).text(url)
    if isinstance(text, Fetched):
        return text
    held = len(bar_times(text))
    if held < edge.bars:
        return Fetched(
            mismatch=Mismatch(
                field="statement.predicate.edge.bars",
                expected=f"at most the {held} bars {url} publishes",
                found=f"{edge.bars} (signed)",
            )
        )
    cut = first_bars(text, edge.bars)
    root = root_of_bytes(cut.encode("utf-8"))
    if root != edge.root:
        return Fetched(
            mismatch=Mismatch(
                field="statement.predicate.edge.root",
                expected=f"the root of the first {edge.bars} bars {url} publishes, {root}",
                found=f"{edge.root} (signed)",
            )
        )
    return Fetched(tape=PublishedTape(cut, url))
